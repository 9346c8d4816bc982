#define _GNU_SOURCE
#include "affinity_probe.h"

#include <dirent.h>
#include <sched.h>
#include <stdlib.h>

static cpu_set_t own;

void probe_remember_own_mask(void) {
    CPU_ZERO(&own);
    sched_getaffinity(0, sizeof own, &own);
}

int probe_outside_own_cpus(void) { return CPU_ISSET(sched_getcpu(), &own) ? 0 : 1; }

int probe_threads_astray(void) {
    DIR* d = opendir("/proc/self/task");
    if (d == NULL) return -1;
    int astray = 0;
    for (struct dirent* e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.') continue;
        cpu_set_t m;
        CPU_ZERO(&m);
        if (sched_getaffinity(atoi(e->d_name), sizeof m, &m) == 0 && !CPU_EQUAL(&m, &own)) ++astray;
    }
    closedir(d);
    return astray;
}

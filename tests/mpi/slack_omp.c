/* The slack policy under `aloe run --mpi`: an unmodified MPI+OpenMP program (a
 * schedule(runtime) loop between rank 0's extra work and an MPI_Allreduce) whose loop aloe
 * takes over with the schedule ALOE_OMP_SCHEDULE gives. At the end each rank asks the aloe it
 * runs under (found with dlsym: the program is not linked to aloe) for its statistics, and
 * ranks other than 0 must show the slack policy at the loop with its fraction lowered. Exit
 * 1 when that fails, 77 when the program does not run under aloe. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <omp.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    enum { n = 1 << 16 };
    static double x[n];
    for (int i = 0; i < n; ++i) x[i] = 1.0;
    double sum = 0, total = 0;
    for (int step = 0; step < 30; ++step) {
        if (rank == 0) {
            const double end = now_s() + 0.02;
            while (now_s() < end) {
            }
        }
#pragma omp parallel for schedule(runtime)
        for (int i = 0; i < n; ++i) x[i] = sqrt(x[i] + 1.0);
        sum = x[0];
        MPI_Allreduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    void* symbol = dlsym(RTLD_DEFAULT, "aloe_stats_write");
    int (*write_stats)(const char*) = NULL;
    memcpy(&write_stats, &symbol, sizeof symbol); /* ISO C has no object-to-function cast */
    int status = 0;
    if (write_stats == NULL) {
        fprintf(stderr, "slack_omp: not running under aloe (no aloe_stats_write)\n");
        status = 77;
    } else if (rank != 0) {
        char path[64];
        snprintf(path, sizeof path, "loops.%d.json", rank);
        char* text = NULL;
        long size = 0;
        FILE* f = write_stats(path) == 0 ? fopen(path, "r") : NULL;
        if (f) {
            fseek(f, 0, SEEK_END);
            size = ftell(f);
            rewind(f);
            text = calloc((size_t)size + 1, 1);
            if (text && fread(text, 1, (size_t)size, f) != (size_t)size) size = 0;
            fclose(f);
        }
        const char* slack = text ? strstr(text, "\"name\": \"slack\"") : NULL;
        const char* lowered = slack ? strstr(slack, "\"lowered\": ") : NULL;
        const long count = lowered ? strtol(lowered + strlen("\"lowered\": "), NULL, 10) : 0;
        printf("slack_omp: rank %d: slack policy %s, lowered %ld times\n", rank, slack ? "present" : "absent", count);
        status = count > 0 ? 0 : 1;
        free(text);
    }
    MPI_Finalize();
    return status;
}

/* Runs short OpenMP regions for the given seconds and prints how often each team size
 * was seen: "team sizes: 2:1234 4:567". A region's team size is what the interposer, and
 * through it the node daemon, chose (tests/coord/daemon_scenarios.py). A second argument
 * "announce" prints "running" once its first region ran (the scenarios wait for it); "log"
 * prints "size <n> at <t>" whenever the team size changes, t in seconds of CLOCK_MONOTONIC
 * (bench/coord/reaction_times.py). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char** argv) {
    const double seconds = argc > 1 ? atof(argv[1]) : 1.0;
    long seen[65] = {0};
    volatile double sink = 0;
    const double end = now() + seconds;
    int announced = argc <= 2 || strcmp(argv[2], "announce") != 0;
    const int log_changes = argc > 2 && strcmp(argv[2], "log") == 0;
    int last = 0;
    while (now() < end) {
        int size = 0;
#pragma omp parallel
        {
            double local = 0;
            for (int i = 0; i < 20000; ++i) local += (double)(i % 7) * 1e-9;
#pragma omp atomic
            sink += local;
#pragma omp master
            size = omp_get_num_threads();
        }
        if (size > 0 && size <= 64) ++seen[size];
        if (log_changes && size != last) {
            printf("size %d at %.6f\n", size, now());
            fflush(stdout);
            last = size;
        }
        if (!announced) {
            printf("running\n");
            fflush(stdout);
            announced = 1;
        }
    }
    printf("team sizes:");
    for (int k = 1; k <= 64; ++k)
        if (seen[k] > 0) printf(" %d:%ld", k, seen[k]);
    printf("\n");
    return sink < 0;
}

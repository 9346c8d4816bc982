/* Runs short OpenMP regions for the given seconds and prints how often each team size
 * was seen: "team sizes: 2:1234 4:567". A region's team size is what the interposer, and
 * through it the node daemon, chose (tests/coord/daemon_scenarios.py). A second argument
 * "announce" prints "running" once its first region ran (the scenarios wait for it); "log"
 * prints "size <n> at <t>" whenever the team size changes, t in seconds of CLOCK_MONOTONIC
 * (bench/coord/reaction_times.py). "long" runs instead one region with one dynamic loop for the
 * given seconds, NPB EP's shape, and prints each thread's iterations and when it ran its last
 * one: a daemon that lowers the count mid-loop makes the threads above it leave
 * (daemon_scenarios.py, shrink_mid_loop). */
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

/* About 100 microseconds of work, or none once the loop's time is up (the loop then drains). */
static void iteration(double end, volatile double* sink) {
    const double t0 = now();
    if (t0 > end) return;
    double x = 0;
    while (now() < t0 + 1e-4) x += 1e-9;
    *sink += x;
}

static int one_long_loop(double seconds) {
    enum { max_threads = 64 };
    long count[max_threads] = {0};
    double last[max_threads] = {0};
    volatile double sink = 0;
    const double end = now() + seconds;
    const long n = (long)(seconds * 20000.0) + 1;
    int threads = 0;
#pragma omp parallel
    {
        const int t = omp_get_thread_num();
#pragma omp master
        {
            threads = omp_get_num_threads();
            printf("running\n");
            fflush(stdout);
        }
#pragma omp for schedule(dynamic, 1)
        for (long i = 0; i < n; ++i) {
            iteration(end, &sink);
            if (t < max_threads && now() <= end) {
                ++count[t];
                last[t] = now();
            }
        }
    }
    for (int t = 0; t < threads && t < max_threads; ++t)
        printf("thread %d: %ld iterations, last at %.6f\n", t, count[t], last[t]);
    printf("ended at %.6f\n", now());
    return sink < 0;
}

int main(int argc, char** argv) {
    const double seconds = argc > 1 ? atof(argv[1]) : 1.0;
    if (argc > 2 && strcmp(argv[2], "long") == 0) return one_long_loop(seconds);
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

/* A small OpenMP program for aloe run's own tests: a dynamic loop, a runtime loop and an
   ordered loop in one region, a combined parallel loop, and a region with a num_threads
   clause. Prints a checksum that does not depend on the schedule. */
#include <omp.h>
#include <stdio.h>

#define N 20000

static double a[N];

int main(void) {
    long sum = 0;
    int ordered_ok = 1, next = 0;
    for (int step = 0; step < 5; ++step) {
#pragma omp parallel
        {
#pragma omp for schedule(dynamic, 8) reduction(+ : sum)
            for (int i = 0; i < N; ++i) sum += i % 7;
#pragma omp for schedule(runtime) nowait
            for (int i = 0; i < N; ++i) a[i] = 0.5 * i;
#pragma omp barrier
#pragma omp for ordered schedule(dynamic)
            for (int i = 0; i < 64; ++i) {
#pragma omp ordered
                {
                    if (i != next % 64) ordered_ok = 0;
                    ++next;
                }
            }
        }
#pragma omp parallel for schedule(guided, 4)
        for (int i = 0; i < N; ++i) a[i] += 1.0;
    }
    int team = 0;
#pragma omp parallel num_threads(2)
    {
#pragma omp single
        team = omp_get_num_threads();
    }
    double total = 0;
    for (int i = 0; i < N; ++i) total += a[i];
    printf("sum %ld ordered %d total %.1f team %d\n", sum, ordered_ok, total, team);
    return ordered_ok ? 0 : 3;
}

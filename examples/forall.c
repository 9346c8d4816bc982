/* The FORALL style of the Kale thesis in C: an existing OpenMP region hands its loop to an
 * aloe schedule through a loop handle. Computes a dot product and checks it.
 *
 *   aloe_example_forall [schedule]      (default "staggered,fs=0.8,chunk=64")
 */
#include <aloe/aloe.h>

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
    const char* schedule = argc > 1 ? argv[1] : "staggered,fs=0.8,chunk=64";
    enum { n = 1 << 20 };
    double* a = malloc(n * sizeof *a);
    double* b = malloc(n * sizeof *b);
    if (!a || !b) return 1;
    for (int64_t i = 0; i < n; ++i) a[i] = 1.0, b[i] = (double)i;

    double sum = 0;
    for (int step = 0; step < 10; ++step) {
        aloe_loop* loop = aloe_loop_create(0, n, 1, schedule, "forall/dot");
        if (!loop) {
            fprintf(stderr, "aloe_example_forall: %s\n", aloe_last_error());
            return 2;
        }
        sum = 0;
#pragma omp parallel reduction(+ : sum)
        {
            ALOE_FORALL_BEGIN(loop, omp_get_thread_num(), omp_get_num_threads(), lo, hi)
            for (int64_t i = lo; i < hi; ++i) sum += a[i] * b[i];
            ALOE_FORALL_END
        }
        aloe_loop_destroy(loop);
    }
    const double expected = (double)n * (n - 1) / 2;
    printf("schedule %s: dot = %.0f (expected %.0f) %s\n", schedule, sum, expected, sum == expected ? "ok" : "WRONG");
    free(a);
    free(b);
    return sum == expected ? 0 : 1;
}

/* Exits from inside a parallel region after 100 taken loops (exit_in_region_counts_all): the
   exit report still counts all 100, though the region never ends (loop slots commit their
   summed runs at exit, running regions included). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
    long sum = 0;
#pragma omp parallel
    {
        for (int k = 0; k < 100; ++k) {
#pragma omp for schedule(dynamic, 2) reduction(+ : sum)
            for (int i = 0; i < 50; ++i) sum += 1;
        }
        if (omp_get_thread_num() == 0) {
            printf("sum %ld\n", sum);
            fflush(stdout);
            exit(sum == 5000 ? 0 : 1);
        }
#pragma omp barrier
    }
    return 2; /* not reached: thread 0 exits before the barrier is passed */
}

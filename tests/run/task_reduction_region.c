/* A worksharing loop in a parallel region aloe run does not start: `parallel reduction(task,
   +: x)` is GOMP_parallel_reductions, which the interposer does not wrap, so the loop is
   forwarded from threads that have no region view. Five regions, one 100-iteration loop in
   each: the statistics must count 5 calls and 500 iterations, whatever the team size
   (AloeRun.task_reduction_region). Prints values that do not depend on the schedule. */
#include <omp.h>
#include <stdio.h>

int main(void) {
    long x = 0, s = 0;
    for (int step = 0; step < 5; ++step) {
#pragma omp parallel reduction(task, + : x) reduction(+ : s)
        {
#pragma omp for schedule(dynamic, 2)
            for (int i = 0; i < 100; ++i) s += i;
#pragma omp single
            {
#pragma omp task in_reduction(+ : x)
                x += step;
            }
        }
    }
    printf("sum %ld tasks %ld\n", s, x);
    return s == 5 * 4950 && x == 10 ? 0 : 1;
}

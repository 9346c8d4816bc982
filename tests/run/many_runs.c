/* Taken loops run more often than a loop slot sums runs before committing them to their
   site (64, team_region.hpp): every run must still reach the statistics, in one long region
   and across many short ones, whatever the iteration count or the schedule
   (taken_runs_all_counted). Prints the iterations each site ran. */
#include <stdio.h>

int main(void) {
    long a = 0, b = 0, c = 0;
#pragma omp parallel
    for (int k = 0; k < 150; ++k) {
#pragma omp for schedule(dynamic, 3) reduction(+ : a)
        for (int i = 0; i < 100; ++i) a += 1;
    }
    for (int k = 0; k < 70; ++k) {
#pragma omp parallel for schedule(dynamic, 5) reduction(+ : b)
        for (int i = 0; i < 100 + k; ++i) b += 1;
#pragma omp parallel for schedule(guided, 2) reduction(+ : c)
        for (int i = 0; i < 100; ++i) c += 1;
    }
    printf("a %ld b %ld c %ld\n", a, b, c);
    return a == 15000 && b == 9415 && c == 7000 ? 0 : 1;
}

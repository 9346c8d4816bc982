/* `cancel parallel` by one thread while the others go on through nowait loops.

   Checks: the program ends (before the fix, a cancelled thread never left the interposer's
   loop slots, and the ninth nowait loop after the cancel waited for ever for its slot), no
   iteration runs twice, and loops before the cancel run every iteration once. The number of
   iterations that run after the cancel is not printed: the cancelling thread's share of a
   schedule with a static part is skipped, as with schedule(static) (docs/openmp.md).

   Cancellation must be on before libgomp starts (OMP_CANCELLATION is read once): without it
   the program sets it and runs itself again. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define LOOPS 20 /* more than the interposer's ring of 8 slots */
#define N 100

static int before[N];
static int after[LOOPS][N];

int main(int argc, char** argv) {
    (void)argc;
    if (!omp_get_cancellation()) {
        setenv("OMP_CANCELLATION", "true", 1);
        execv("/proc/self/exe", argv);
        perror("execv");
        return 1;
    }
    int bad = 0;
#pragma omp parallel
    {
        /* nowait: no cancellation point before the cancel, so no thread can leave early */
#pragma omp for schedule(dynamic, 3) nowait
        for (int i = 0; i < N; i++) __atomic_fetch_add(&before[i], 1, __ATOMIC_RELAXED);
        if (omp_get_thread_num() == 0) {
#pragma omp cancel parallel
        }
        for (int l = 0; l < LOOPS; l++) {
#pragma omp for schedule(dynamic) nowait
            for (int i = 0; i < N; i++) __atomic_fetch_add(&after[l][i], 1, __ATOMIC_RELAXED);
        }
    }
    for (int i = 0; i < N; i++) bad += before[i] != 1;
    for (int l = 0; l < LOOPS; l++)
        for (int i = 0; i < N; i++) bad += after[l][i] > 1;
    printf("cancel parallel with %d nowait loops after it: %s\n", LOOPS, bad == 0 ? "ok" : "WRONG");
    return bad == 0 ? 0 : 1;
}

/* Threads many nowait loops ahead of a thread that has not started the first one.
 *
 * One thread of the team is held before a chain of nowait loops until every other thread
 * has run the whole chain; then it runs the chain itself. libgomp allocates a work share per
 * loop as threads need them, so this is a valid program. Before the fix the interposer kept
 * taken loops in a ring of 8 slots only, and a thread 8 loops ahead waited for the held
 * thread to drain the ring slot it needed: a deadlock (the harness reports the hang).
 *
 * Chains of 9 to 64 loops (the first beyond the ring, twice it plus one, many times it), the
 * held thread first or last in the team, each three times (regions and their loops' slots
 * are reused). Checks: every iteration of every loop once, and the reduction over the chain.
 * The loops mix dynamic, guided and runtime schedules and trip counts, so taken loops are
 * cut by every --schedule.
 */
#include "omp_conf.h"

#include <sched.h>

enum { MAX_LOOPS = 64, N = 100, REPS = 3 };
static int hits[MAX_LOOPS][N];

static long trips(int l) { return N - (l % 7) * 9; } /* 100 down to 46 */

/* Runs `loops` nowait loops on every thread, with thread `held` waiting until the others
 * have finished all of them. Returns the reduction over all loops. */
static long chain(int loops, int held_last) {
    int finished = 0; /* threads other than the held one that ran the whole chain */
    long s = 0;
#pragma omp parallel reduction(+ : s)
    {
        const int t = omp_get_thread_num(), p = omp_get_num_threads();
        const int held = held_last ? p - 1 : 0;
        if (t == held)
            while (__atomic_load_n(&finished, __ATOMIC_ACQUIRE) != p - 1) sched_yield();
        for (int l = 0; l < loops; ++l) {
            const long n = trips(l);
            switch (l % 3) {
                case 0: {
#pragma omp for schedule(dynamic) nowait
                    for (long i = 0; i < n; ++i) {
                        __atomic_fetch_add(&hits[l][i], 1, __ATOMIC_RELAXED);
                        s += i;
                    }
                    break;
                }
                case 1: {
#pragma omp for schedule(guided, 3) nowait
                    for (long i = 0; i < n; ++i) {
                        __atomic_fetch_add(&hits[l][i], 1, __ATOMIC_RELAXED);
                        s += i;
                    }
                    break;
                }
                default: {
#pragma omp for schedule(runtime) nowait
                    for (long i = n - 1; i >= 0; --i) {
                        __atomic_fetch_add(&hits[l][i], 1, __ATOMIC_RELAXED);
                        s += i;
                    }
                    break;
                }
            }
        }
        if (t != held) __atomic_fetch_add(&finished, 1, __ATOMIC_RELEASE);
    }
    return s;
}

int main(void) {
    const int counts[] = {9, 17, 24, 64};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; ++c) {
        const int loops = counts[c];
        long want = 0;
        for (int l = 0; l < loops; ++l) want += trips(l) * (trips(l) - 1) / 2;
        for (int held_last = 0; held_last <= 1; ++held_last) {
            char label[96];
            snprintf(label, sizeof label, "%d nowait loops, the %s thread held", loops, held_last ? "last" : "first");
            long bad = 0, wrong_sums = 0;
            for (int rep = 0; rep < REPS; ++rep) {
                memset(hits, 0, sizeof hits);
                wrong_sums += chain(loops, held_last) != want;
                for (int l = 0; l < MAX_LOOPS; ++l)
                    for (long i = 0; i < N; ++i) bad += hits[l][i] != (l < loops && i < trips(l) ? 1 : 0);
            }
            CONF_CHECK(bad == 0, label, "%ld iterations did not run exactly once", bad);
            CONF_CHECK(wrong_sums == 0, label, "%ld of %d reductions differ from %ld", wrong_sums, REPS, want);
            printf("%s: each iteration once, sum %ld\n", label, want);
        }
    }
    return conf_finish("far_ahead");
}

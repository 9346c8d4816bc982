/* nowait chains: worksharing loops without the closing barrier, so that threads of one team
 * are in different loops at once and the runtime must keep several loops in flight (in
 * libgomp, its ring of work shares; in aloe's interposer, its own ring of in-flight loops).
 *
 *  - three nowait loops writing disjoint arrays, a barrier, then a loop reading them all;
 *  - a chain of 16 consecutive nowait loops of assorted schedules and trip counts (0, 1, 2,
 *    fewer than threads, thousands), with one thread held back at the start so the others
 *    run ahead through the whole chain, repeated over many regions;
 *  - a time-stepping loop of 40 steps x 2 nowait loops with no barrier at all between steps;
 *  - a chain whose later loop reads what an earlier one wrote, after an explicit barrier;
 *  - a mixed chain: runtime loops, sections, single, an ordered loop and a doacross loop
 *    (these two forwarded to libgomp), all nowait, in one region.
 */
#include "omp_conf.h"

static volatile long v_offset = 0;
static long V(long x) { return x + v_offset; }

/* Keeps a thread busy for a while without sleeping (the order of arrival is what matters). */
static void spin(long units) {
    volatile long sink = 0;
    for (long k = 0; k < units * 1000; ++k) sink += k;
}

enum { CHAIN = 16, CHAIN_MAX = 3000, REGIONS = 24 };
static int chain_hits[CHAIN][CHAIN_MAX];
static int chain_stray[CHAIN];

static void count(int loop, long i, long n) {
    if (i < 0 || i >= n)
        __atomic_fetch_add(&chain_stray[loop], 1, __ATOMIC_RELAXED);
    else
        __atomic_fetch_add(&chain_hits[loop][i], 1, __ATOMIC_RELAXED);
}

/* Checks every iteration of loop `loop` (n of them) ran `times` times. */
static void check_counts(const char *what, int loop, long n, int times) {
    char label[96];
    snprintf(label, sizeof label, "%s loop %d", what, loop);
    for (long i = 0; i < CHAIN_MAX; ++i) {
        const int want = i < n ? times : 0;
        if (chain_hits[loop][i] != want) {
            conf_fail(label, "iteration %ld of %ld ran %d times, not %d", i, n, chain_hits[loop][i], want);
            break;
        }
    }
    CONF_CHECK(chain_stray[loop] == 0, label, "%d runs of values outside the loop", chain_stray[loop]);
    printf("%s: n=%ld, each iteration %d times\n", label, n, times);
}

static void three_then_barrier(void) {
    const long n = V(2000);
    static long a[2000], b[2000], c[2000], d[2000];
#pragma omp parallel
    {
#pragma omp for schedule(dynamic, 3) nowait
        for (long i = 0; i < n; ++i) a[i] = 3 * i + 1;
#pragma omp for schedule(guided) nowait
        for (long i = 0; i < n; ++i) b[i] = i * i;
#pragma omp for schedule(runtime) nowait
        for (long i = n - 1; i >= 0; --i) c[i] = n - i;
#pragma omp barrier
#pragma omp for schedule(dynamic, 7)
        for (long i = 0; i < n; ++i) d[i] = a[n - 1 - i] + b[(i * 7) % n] - c[(i * 13) % n];
    }
    long bad = 0;
    unsigned long long h = 0;
    for (long i = 0; i < n; ++i) {
        const long want = (3 * (n - 1 - i) + 1) + ((i * 7) % n) * ((i * 7) % n) - (n - (i * 13) % n);
        if (d[i] != want) ++bad;
        h = conf_mix(h, (unsigned long long)d[i]);
    }
    CONF_CHECK(bad == 0, "three nowait loops + barrier", "%ld values of the reading loop are wrong", bad);
    printf("three nowait loops + barrier: checksum %llu\n", h);
}

/* 16 nowait loops in a row; `late` is held back before the first. */
static void sixteen(const long *n, int late) {
    const int t = omp_get_thread_num();
    if (t == late) spin(300);
#pragma omp for schedule(dynamic) nowait
    for (long i = 0; i < n[0]; ++i) count(0, i, n[0]);
#pragma omp for schedule(dynamic, 3) nowait
    for (long i = 0; i < n[1]; ++i) count(1, i, n[1]);
#pragma omp for schedule(monotonic : dynamic, 2) nowait
    for (long i = 0; i < n[2]; ++i) count(2, i, n[2]);
#pragma omp for schedule(guided) nowait
    for (long i = n[3] - 1; i >= 0; --i) count(3, i, n[3]);
#pragma omp for schedule(guided, 7) nowait
    for (long i = 0; i < n[4]; ++i) count(4, i, n[4]);
#pragma omp for schedule(runtime) nowait
    for (long i = 0; i < n[5]; ++i) count(5, i, n[5]);
#pragma omp for schedule(nonmonotonic : runtime) nowait
    for (long i = 0; i < n[6]; ++i) count(6, i, n[6]);
#pragma omp for schedule(static) nowait
    for (long i = 0; i < n[7]; ++i) count(7, i, n[7]);
#pragma omp for schedule(dynamic, 1) nowait
    for (long i = 0; i < n[8]; ++i) count(8, i, n[8]);
    if (t == late) spin(100);
#pragma omp for schedule(nonmonotonic : dynamic, 11) nowait
    for (long i = 0; i < n[9]; ++i) count(9, i, n[9]);
#pragma omp for schedule(monotonic : guided) nowait
    for (long i = 0; i < n[10]; ++i) count(10, i, n[10]);
#pragma omp for schedule(dynamic, 5) nowait
    for (long i = 0; i < 3 * n[11]; i += 3) count(11, i / 3, n[11]);
#pragma omp for schedule(static, 4) nowait
    for (long i = 0; i < n[12]; ++i) count(12, i, n[12]);
#pragma omp for schedule(runtime) nowait
    for (long i = 0; i < n[13]; ++i) count(13, i, n[13]);
#pragma omp for schedule(dynamic) nowait
    for (long i = 0; i < n[14]; ++i) count(14, i, n[14]);
#pragma omp for schedule(guided, 2) nowait
    for (long i = 0; i < n[15]; ++i) count(15, i, n[15]);
}

static void chain_of_sixteen(void) {
    const long n[CHAIN] = {V(1000), V(0), V(2), V(3000), V(1), V(700), V(2999), V(500),
                           V(64),   V(5), V(1200), V(333), V(0), V(1), V(2048), V(7)};
    memset(chain_hits, 0, sizeof chain_hits);
    memset(chain_stray, 0, sizeof chain_stray);
    for (int r = 0; r < REGIONS; ++r) {
#pragma omp parallel
        {
            /* Hold back a different thread each time (the last one, the first one, ...). */
            const int late = (r % 2 == 0) ? omp_get_num_threads() - 1 : (r / 2) % omp_get_num_threads();
            sixteen(n, late);
        }
    }
    for (int k = 0; k < CHAIN; ++k) check_counts("chain of 16 nowait", k, n[k], REGIONS);
}

/* 40 time steps of two nowait loops each, no barrier between steps: a thread may be many
 * loops ahead of another. */
enum { STEPS = 40, STEP_N = 300 };
static int step_hits[STEPS][2][STEP_N];

static void time_steps(void) {
    const long n = V(STEP_N);
    memset(step_hits, 0, sizeof step_hits);
#pragma omp parallel
    {
        if (omp_get_thread_num() == 0) spin(500);
        for (int s = 0; s < STEPS; ++s) {
#pragma omp for schedule(dynamic, 4) nowait
            for (long i = 0; i < n; ++i) __atomic_fetch_add(&step_hits[s][0][i], 1, __ATOMIC_RELAXED);
#pragma omp for schedule(guided) nowait
            for (long i = 0; i < n - s; ++i) __atomic_fetch_add(&step_hits[s][1][i], 1, __ATOMIC_RELAXED);
        }
    }
    long bad = 0;
    for (int s = 0; s < STEPS; ++s)
        for (long i = 0; i < STEP_N; ++i) {
            if (step_hits[s][0][i] != 1) ++bad;
            if (step_hits[s][1][i] != (i < n - s ? 1 : 0)) ++bad;
        }
    CONF_CHECK(bad == 0, "40 steps x 2 nowait loops", "%ld iterations did not run exactly once", bad);
    printf("40 steps x 2 nowait loops without barriers: %s\n", bad == 0 ? "each iteration once" : "WRONG");
}

/* A later nowait loop reads what an earlier one wrote, after an explicit barrier. */
static void read_after_barrier(void) {
    const long n = V(2500);
    static long a[2500], b[2500], c[2500];
    for (int rep = 0; rep < 4; ++rep) {
#pragma omp parallel
        {
#pragma omp for schedule(dynamic, 2) nowait
            for (long i = 0; i < n; ++i) a[i] = i + rep;
#pragma omp barrier
#pragma omp for schedule(guided, 3) nowait
            for (long i = 0; i < n; ++i) b[i] = a[n - 1 - i] * 2;
#pragma omp barrier
#pragma omp for schedule(runtime) nowait
            for (long i = 0; i < n; ++i) c[i] = b[(i * 17) % n] + a[(i * 5) % n];
        }
        long bad = 0;
        for (long i = 0; i < n; ++i)
            if (c[i] != 2 * (n - 1 - (i * 17) % n + rep) + (i * 5) % n + rep) ++bad;
        CONF_CHECK(bad == 0, "nowait + barrier + nowait", "repetition %d: %ld values wrong", rep, bad);
    }
    long sum = 0;
    for (long i = 0; i < n; ++i) sum += c[i];
    printf("nowait loops ordered by barriers: sum %ld\n", sum);
}

/* Runtime loops mixed with constructs that libgomp runs itself, all nowait. */
static void mixed_chain(void) {
    const long n = V(600);
    static int x[600], y[600], z[600];
    static long pre[600];
    static int order[600];
    int order_len = 0, sections_done = 0, singles = 0;
    memset(x, 0, sizeof x);
    memset(y, 0, sizeof y);
    memset(z, 0, sizeof z);
    for (long i = 0; i < n; ++i) pre[i] = i % 5;
#pragma omp parallel
    {
        if (omp_get_thread_num() == 1) spin(200);
#pragma omp for schedule(dynamic, 3) nowait
        for (long i = 0; i < n; ++i) __atomic_fetch_add(&x[i], 1, __ATOMIC_RELAXED);
#pragma omp sections nowait
        {
#pragma omp section
            __atomic_fetch_add(&sections_done, 1, __ATOMIC_RELAXED);
#pragma omp section
            __atomic_fetch_add(&sections_done, 10, __ATOMIC_RELAXED);
#pragma omp section
            __atomic_fetch_add(&sections_done, 100, __ATOMIC_RELAXED);
        }
#pragma omp for schedule(dynamic) ordered nowait
        for (long i = 0; i < n; ++i) {
#pragma omp ordered
            order[order_len++] = (int)i;
        }
#pragma omp single nowait
        __atomic_fetch_add(&singles, 1, __ATOMIC_RELAXED);
#pragma omp for schedule(guided) nowait
        for (long i = 0; i < n; ++i) __atomic_fetch_add(&y[i], 1, __ATOMIC_RELAXED);
#pragma omp for schedule(dynamic, 2) ordered(1) nowait
        for (long i = 1; i < 100; ++i) {
#pragma omp ordered depend(sink : i - 1)
            pre[i] += pre[i - 1];
#pragma omp ordered depend(source)
        }
#pragma omp single nowait
        __atomic_fetch_add(&singles, 1, __ATOMIC_RELAXED);
#pragma omp for schedule(runtime) nowait
        for (long i = 0; i < n; ++i) __atomic_fetch_add(&z[i], 1, __ATOMIC_RELAXED);
    }
    long bad = 0, want = 0;
    for (long i = 0; i < n; ++i) {
        if (x[i] != 1 || y[i] != 1 || z[i] != 1) ++bad;
        if (order[i] != i) ++bad;
        want += i % 5;
        if (pre[i] != (i < 100 ? want : i % 5)) ++bad;
    }
    CONF_CHECK(bad == 0, "mixed nowait chain", "%ld wrong counts, ordered positions or prefix sums", bad);
    CONF_CHECK(order_len == n, "mixed nowait chain", "the ordered loop appended %d entries, not %ld", order_len, n);
    CONF_CHECK(sections_done == 111, "mixed nowait chain", "sections ran as %d, not 111", sections_done);
    CONF_CHECK(singles == 2, "mixed nowait chain", "%d singles ran, not 2", singles);
    printf("mixed nowait chain: sections %d, singles %d, ordered %d, prefix %ld\n", sections_done, singles, order_len,
           pre[99]);
}

int main(void) {
    three_then_barrier();
    chain_of_sixteen();
    time_steps();
    read_after_barrier();
    mixed_chain();
    return conf_finish("nowait_chains");
}

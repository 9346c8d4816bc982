/* Loop forms of C worksharing loops: every schedule clause GCC 12 hands to libgomp's
 * GOMP_loop_* entry points (dynamic with several chunk sizes, monotonic and nonmonotonic,
 * guided, runtime), the static and auto controls that never reach the runtime, collapse(2)
 * and collapse(3), negative and non-unit steps, long bounds, every comparison, empty and
 * tiny loops, orphaned loops inside and outside a region, `parallel if(0)`, chunk sizes near
 * INT_MAX, one loop site met again and again with changing team sizes and trip counts, many
 * short regions, and combined `parallel for` with constant bounds (GOMP_parallel_loop_*) and
 * with variable bounds (GOMP_parallel + GOMP_loop_*_start).
 *
 * Every loop is checked by omp_conf.h: each logical iteration exactly once, no stray
 * values, and for monotonic schedules each thread's iterations in increasing order.
 */
#include "omp_conf.h"

/* Bounds the compiler cannot see: read through a volatile, so GCC keeps the generic
 * GOMP_parallel + GOMP_loop_*_start form instead of GOMP_parallel_loop_*. */
static volatile long v_offset = 0;
static long V(long x) { return x + v_offset; }

/* The same loop as a combined `#pragma omp parallel for CLAUSES`. LO, HI and ST are
 * written into the loop as given: literal constants give GOMP_parallel_loop_*. */
static int combined_team;
#define COMBINED(label, HIT, clauses, T, LO, CMP, HI, ST)                                                              \
    do {                                                                                                               \
        long long n_;                                                                                                  \
        CONF_SERIAL_TRIPS(n_, T, (LO), CMP, (HI), (ST));                                                               \
        conf_begin();                                                                                                  \
        combined_team = 0;                                                                                             \
        CONF_PRAGMA(omp parallel for clauses)                                                                          \
        for (T i = (LO); i CMP(HI); i += (ST)) {                                                                       \
            const long long d_ = (long long)i - (long long)(LO);                                                       \
            HIT(d_ / (long long)(ST), d_ % (long long)(ST) != 0, (unsigned long long)i);                               \
            __atomic_store_n(&combined_team, omp_get_num_threads(), __ATOMIC_RELAXED);                                 \
        }                                                                                                              \
        conf_end(label, n_);                                                                                           \
    } while (0)

/* collapse(2) over [0,A) x [0,B) and collapse(3) over a box with a negative and a
 * non-unit step; logical index = row-major position. */
static void collapsed(void) {
    const int A = (int)V(37), B = (int)V(41);
    conf_begin();
#pragma omp parallel
    {
#pragma omp for collapse(2) schedule(dynamic, 3)
        for (int i = 0; i < A; ++i)
            for (int j = 0; j < B; ++j) conf_hit(i * B + j, 0, (unsigned long long)(i * 1000 + j));
    }
    conf_end("collapse(2) dynamic,3", (long long)A * B);

    conf_begin();
#pragma omp parallel
    {
#pragma omp for collapse(2) schedule(guided)
        for (long i = 0; i < A; ++i)
            for (long j = 0; j < B; ++j) conf_hit(i * B + j, 0, (unsigned long long)(i * 1000 + j));
    }
    conf_end("collapse(2) guided long", (long long)A * B);

    conf_begin();
#pragma omp parallel
    {
#pragma omp for collapse(2) schedule(runtime)
        for (int i = 0; i < A; ++i)
            for (int j = 0; j < B; ++j) conf_hit(i * B + j, 0, (unsigned long long)(i * 1000 + j));
    }
    conf_end("collapse(2) runtime", (long long)A * B);

    conf_begin();
#pragma omp parallel
    {
#pragma omp for collapse(2) schedule(monotonic : dynamic)
        for (int i = 0; i < A; ++i)
            for (int j = 0; j < B; ++j) conf_hit_monotonic(i * B + j, 0, (unsigned long long)(i * 1000 + j));
    }
    conf_end("collapse(2) monotonic:dynamic", (long long)A * B);

    /* i: 11 values 20, 18, ..., 0 (step -2); j: 9 values 0, 3, ..., 24; k: 13 values. */
    const int I0 = (int)V(20), J1 = (int)V(25), K1 = (int)V(13);
    conf_begin();
#pragma omp parallel
    {
#pragma omp for collapse(3) schedule(dynamic, 7)
        for (int i = I0; i >= 0; i -= 2)
            for (int j = 0; j < J1; j += 3)
                for (int k = 0; k < K1; ++k)
                    conf_hit(((I0 - i) / 2 * 9 + j / 3) * 13 + k, 0, (unsigned long long)(i * 10000 + j * 100 + k));
    }
    conf_end("collapse(3) dynamic,7 steps -2,3,1", 11LL * 9 * 13);

    conf_begin();
#pragma omp parallel
    {
#pragma omp for collapse(3) schedule(nonmonotonic : guided, 4)
        for (int i = 0; i < 5; ++i)
            for (int j = 0; j < 6; ++j)
                for (int k = 0; k < K1; ++k)
                    conf_hit((i * 6 + j) * 13 + k, 0, (unsigned long long)(i * 10000 + j * 100 + k));
    }
    conf_end("collapse(3) nonmonotonic:guided,4", 5LL * 6 * 13);

    /* Empty inner dimension: no iteration at all. */
    const int Z = (int)V(0);
    conf_begin();
#pragma omp parallel
    {
#pragma omp for collapse(2) schedule(dynamic)
        for (int i = 0; i < A; ++i)
            for (int j = 0; j < Z; ++j) conf_hit(i * B + j, 0, 0);
    }
    conf_end("collapse(2) empty inner", 0);
}

/* A loop whose construct is not lexically inside a region (orphaned). */
static void orphan_loop(long n) {
#pragma omp for schedule(dynamic, 2)
    for (long i = 0; i < n; ++i) conf_hit(i, 0, (unsigned long long)i);
}

static void orphan_loop_nowait(long n) {
#pragma omp for schedule(guided) nowait
    for (long i = 0; i < n; ++i) conf_hit(i, 0, (unsigned long long)i);
}

static void orphaned(void) {
    const long n = V(777);
    conf_begin();
#pragma omp parallel
    orphan_loop(n);
    conf_end("orphaned dynamic,2 in a region", n);

    conf_begin();
    orphan_loop(n); /* outside any region: a team of one */
    conf_end("orphaned dynamic,2 outside a region", n);

    conf_begin();
    orphan_loop_nowait(n);
    conf_end("orphaned guided nowait outside a region", n);

    conf_begin();
#pragma omp parallel if (n < 0)
    orphan_loop(n);
    conf_end("dynamic,2 in a parallel if(0) region", n);

    conf_begin();
#pragma omp parallel num_threads(1)
    orphan_loop_nowait(n);
    conf_end("guided nowait in a num_threads(1) region", n);
}

/* `cancel for` while cancellation is off (OMP_CANCELLATION unset): a no-op, so every
 * iteration still runs; the loop is compiled with GOMP_cancel calls. */
static void cancel_off(void) {
    const long n = V(500);
    conf_begin();
#pragma omp parallel
    {
#pragma omp for schedule(dynamic, 3)
        for (long i = 0; i < n; ++i) {
            if (i == n / 2) {
#pragma omp cancel for
            }
            conf_hit(i, 0, (unsigned long long)i);
        }
    }
    conf_end("dynamic,3 with cancel for (cancellation off)", n);
    CONF_CHECK(!omp_get_cancellation(), "cancel for", "omp_get_cancellation() is true with OMP_CANCELLATION unset");
}

/* Chunk sizes near INT_MAX: chunk x step must not overflow in the runtime. */
static void huge_chunks(void) {
    const long n = V(700);
    CONF_LOOP("dynamic,2147483647", conf_hit, schedule(dynamic, 2147483647), int, 0, <, n, 1);
    CONF_LOOP("guided,2147483647 step 5", conf_hit, schedule(guided, 2147483647), int, 0, <, n * 5, 5);
    CONF_LOOP("nonmonotonic:dynamic,1000000000 long step -1000003", conf_hit,
              schedule(nonmonotonic : dynamic, 1000000000), long, 1000003L * n, >, 0, -1000003L);
}

/* One loop site met many times: by many small regions, by regions whose team size changes
 * from call to call (1..5 threads and the default), by serialised `parallel if` regions,
 * with a trip count that changes every time. Schedules that keep per-site history (weighted
 * speeds, tasklet ownership, adaptive probes and search) see every kind of change. */
enum { SITE_CALLS = 120 };
static int site_hits[SITE_CALLS + 1];

static void site_loop(long n) {
#pragma omp for schedule(dynamic, 2)
    for (long i = 0; i < n; ++i) __atomic_fetch_add(&site_hits[i], 1, __ATOMIC_RELAXED);
}

static void site_loop_runtime_nowait(long n) {
#pragma omp for schedule(runtime) nowait
    for (long i = n - 1; i >= 0; --i) __atomic_fetch_add(&site_hits[i], 1, __ATOMIC_RELAXED);
}

static void repeated_sites(void) {
    int want[SITE_CALLS + 1];
    int sizes_ok = 1;
    memset(site_hits, 0, sizeof site_hits);
    memset(want, 0, sizeof want);
    for (int call = 0; call < SITE_CALLS; ++call) {
        const long n = V((call * 37) % (SITE_CALLS + 1)); /* 0 .. SITE_CALLS, scrambled */
        const int k = call % 6;                            /* 0: no clause, else num_threads(k) */
        for (long i = 0; i < n; ++i) want[i] += 2;
        if (k == 0) {
#pragma omp parallel if (call % 4 != 3)
            {
                site_loop(n);
                site_loop_runtime_nowait(n);
            }
        } else {
#pragma omp parallel num_threads(k)
            {
                if (omp_get_num_threads() != k) __atomic_store_n(&sizes_ok, 0, __ATOMIC_RELAXED);
                site_loop(n);
                site_loop_runtime_nowait(n);
            }
        }
    }
    long bad = 0;
    for (int i = 0; i <= SITE_CALLS; ++i) bad += site_hits[i] != want[i];
    CONF_CHECK(bad == 0, "one site, changing team sizes and trip counts", "%ld elements counted wrong", bad);
    CONF_CHECK(sizes_ok, "one site, changing team sizes", "a num_threads(k) region did not have k threads");
    printf("one site met %d times with team sizes 1..5 and varying trip counts: %s\n", SITE_CALLS,
           bad == 0 && sizes_ok ? "each iteration once per call" : "WRONG");

    /* Many short regions, each with a guided loop at the same site. */
    long total = 0;
    for (int r = 0; r < 100; ++r) {
        long s = 0;
        const long n = V(r % 17);
#pragma omp parallel for schedule(guided) reduction(+ : s)
        for (long i = 0; i < n; ++i) s += i + 1;
        CONF_CHECK(s == n * (n + 1) / 2, "100 short regions", "region %d summed %ld, not %ld", r, s, n * (n + 1) / 2);
        total += s;
    }
    printf("100 short regions with a guided loop: total %ld\n", total);
}

int main(void) {
    const long n = V(1000), z = V(0);

    /* dynamic: default chunk, 1, 3, 7, and a chunk larger than the trip count. */
    CONF_LOOP("dynamic", conf_hit, schedule(dynamic), int, 0, <, n, 1);
    CONF_LOOP("dynamic,1", conf_hit, schedule(dynamic, 1), int, 0, <, n, 1);
    CONF_LOOP("dynamic,3", conf_hit, schedule(dynamic, 3), int, 0, <, n, 1);
    CONF_LOOP("dynamic,7", conf_hit, schedule(dynamic, 7), int, 0, <, n, 1);
    CONF_LOOP("dynamic,5000", conf_hit, schedule(dynamic, 5000), int, 0, <, n, 1);
    CONF_LOOP("dynamic,7 n=10", conf_hit, schedule(dynamic, 7), int, 0, <, V(10), 1);
    CONF_LOOP("monotonic:dynamic", conf_hit_monotonic, schedule(monotonic : dynamic), int, 0, <, n, 1);
    CONF_LOOP("monotonic:dynamic,3", conf_hit_monotonic, schedule(monotonic : dynamic, 3), int, 0, <, n, 1);
    CONF_LOOP("nonmonotonic:dynamic", conf_hit, schedule(nonmonotonic : dynamic), int, 0, <, n, 1);
    CONF_LOOP("nonmonotonic:dynamic,4", conf_hit, schedule(nonmonotonic : dynamic, 4), int, 0, <, n, 1);

    /* guided and runtime (OMP_SCHEDULE decides; the comparison sets dynamic,2). */
    CONF_LOOP("guided", conf_hit, schedule(guided), int, 0, <, n, 1);
    CONF_LOOP("guided,5", conf_hit, schedule(guided, 5), int, 0, <, n, 1);
    CONF_LOOP("monotonic:guided", conf_hit_monotonic, schedule(monotonic : guided), int, 0, <, n, 1);
    CONF_LOOP("nonmonotonic:guided,2", conf_hit, schedule(nonmonotonic : guided, 2), int, 0, <, n, 1);
    CONF_LOOP("runtime", conf_hit, schedule(runtime), int, 0, <, n, 1);
    CONF_LOOP("nonmonotonic:runtime", conf_hit, schedule(nonmonotonic : runtime), int, 0, <, n, 1);
    CONF_LOOP("monotonic:runtime", conf_hit_monotonic, schedule(monotonic : runtime), int, 0, <, n, 1);

    /* Controls: static, static with a chunk, auto and no schedule never reach the runtime. */
    CONF_LOOP("static", conf_hit_monotonic, schedule(static), int, 0, <, n, 1);
    CONF_LOOP("static,3", conf_hit_monotonic, schedule(static, 3), int, 0, <, n, 1);
    CONF_LOOP("auto", conf_hit, schedule(auto), int, 0, <, n, 1);
    CONF_LOOP("no schedule clause", conf_hit, , int, 0, <, n, 1);

    /* Steps and comparisons. */
    CONF_LOOP("dynamic step 3", conf_hit, schedule(dynamic), int, 5, <, n, 3);
    CONF_LOOP("dynamic,2 step -1 >=", conf_hit, schedule(dynamic, 2), int, n - 1, >=, 0, -1);
    CONF_LOOP("guided step -5 >", conf_hit, schedule(guided), int, n, >, -7, -5);
    CONF_LOOP("runtime step 7 <=", conf_hit, schedule(runtime), int, -40, <=, n, 7);
    CONF_LOOP("dynamic,3 !=", conf_hit, schedule(dynamic, 3), int, 0, !=, n, 1);
    CONF_LOOP("dynamic != step -1", conf_hit, schedule(dynamic), int, n, !=, -3, -1);
    CONF_LOOP("monotonic:dynamic,5 step -3", conf_hit_monotonic, schedule(monotonic : dynamic, 5), int, n, >, 0, -3);
    CONF_LOOP("dynamic,4 long bounds", conf_hit, schedule(dynamic, 4), long, 1000000000000L + z, <,
              1000000003000L + z, 3);
    CONF_LOOP("guided long step -1000003", conf_hit, schedule(guided), long, 4000000000L + z, >, -2000000000L + z,
              -1000003L);
    CONF_LOOP("runtime long crossing zero", conf_hit, schedule(runtime), long, -1501L + z, <, 1500L + z, 2);

    /* Empty, tiny, and fewer iterations than threads. */
    CONF_LOOP("dynamic empty", conf_hit, schedule(dynamic), int, 0, <, z, 1);
    CONF_LOOP("dynamic start>end", conf_hit, schedule(dynamic), int, 10, <, z, 1);
    CONF_LOOP("guided down start<end", conf_hit, schedule(guided), int, -10, >, z, -1);
    CONF_LOOP("runtime empty", conf_hit, schedule(runtime), int, 5, <, z + 5, 1);
    CONF_LOOP("monotonic:dynamic empty", conf_hit, schedule(monotonic : dynamic), int, 0, <, z, 1);
    CONF_LOOP("dynamic one iteration", conf_hit, schedule(dynamic), int, 41, <, z + 42, 1);
    CONF_LOOP("guided one iteration", conf_hit, schedule(guided, 8), int, 0, <, z + 1, 1);
    CONF_LOOP("runtime one iteration step 9", conf_hit, schedule(runtime), int, 0, <, z + 9, 9);
    CONF_LOOP("dynamic two iterations", conf_hit, schedule(dynamic), int, 0, <, z + 2, 1);
    CONF_LOOP("nonmonotonic:guided two iterations", conf_hit, schedule(nonmonotonic : guided), int, 0, <, z + 2, 1);

    collapsed();
    orphaned();
    cancel_off();
    huge_chunks();
    repeated_sites();

    /* Combined parallel for, constant bounds: GOMP_parallel_loop_<kind>. */
    COMBINED("parallel for dynamic const", conf_hit, schedule(dynamic), int, 0, <, 1000, 1);
    COMBINED("parallel for dynamic,3 const", conf_hit, schedule(dynamic, 3), int, 0, <, 1000, 1);
    COMBINED("parallel for monotonic:dynamic,3 const", conf_hit_monotonic, schedule(monotonic : dynamic, 3), int, 0,
             <, 1000, 1);
    COMBINED("parallel for nonmonotonic:dynamic,7 const", conf_hit, schedule(nonmonotonic : dynamic, 7), int, 999, >=,
             0, -1);
    COMBINED("parallel for guided const", conf_hit, schedule(guided), int, 0, <, 1000, 1);
    COMBINED("parallel for monotonic:guided,2 const", conf_hit_monotonic, schedule(monotonic : guided, 2), int, 0, <,
             1000, 1);
    COMBINED("parallel for runtime const", conf_hit, schedule(runtime), int, 0, <, 1000, 1);
    COMBINED("parallel for nonmonotonic:runtime const", conf_hit, schedule(nonmonotonic : runtime), int, 3, <, 1000,
             4);
    COMBINED("parallel for monotonic:runtime const", conf_hit_monotonic, schedule(monotonic : runtime), int, 0, <,
             1000, 1);
    COMBINED("parallel for static const", conf_hit, schedule(static), int, 0, <, 1000, 1);
    COMBINED("parallel for dynamic const empty", conf_hit, schedule(dynamic), int, 0, <, 0, 1);
    COMBINED("parallel for guided const one iteration", conf_hit, schedule(guided), int, 7, <, 8, 1);
    COMBINED("parallel for dynamic const num_threads(2)", conf_hit, schedule(dynamic) num_threads(2), int, 0, <, 1000,
             1);
    CONF_CHECK(combined_team == 2, "parallel for dynamic const num_threads(2)", "the team had %d threads",
               combined_team);
    printf("parallel for num_threads(2) team: %d\n", combined_team);
    COMBINED("parallel for guided,3 const num_threads(3)", conf_hit, schedule(guided, 3) num_threads(3), int, 0, <,
             1000, 1);
    CONF_CHECK(combined_team == 3, "parallel for guided,3 const num_threads(3)", "the team had %d threads",
               combined_team);
    printf("parallel for num_threads(3) team: %d\n", combined_team);

    /* collapse(2) combined with constant bounds: still GOMP_parallel_loop_*. */
    conf_begin();
#pragma omp parallel for collapse(2) schedule(guided, 4)
    for (int i = 0; i < 30; ++i)
        for (int j = 0; j < 20; ++j) conf_hit(i * 20 + j, 0, (unsigned long long)(i * 100 + j));
    conf_end("parallel for collapse(2) guided,4 const", 600);

    /* Combined parallel for, variable bounds: GOMP_parallel + GOMP_loop_*_start. */
    COMBINED("parallel for dynamic var", conf_hit, schedule(dynamic), int, 0, <, n, 1);
    COMBINED("parallel for monotonic:dynamic var", conf_hit_monotonic, schedule(monotonic : dynamic), int, 0, <, n, 1);
    COMBINED("parallel for guided,6 var", conf_hit, schedule(guided, 6), long, V(-3), <, n, 2);
    COMBINED("parallel for runtime var", conf_hit, schedule(runtime), int, 0, <, n, 1);
    COMBINED("parallel for nonmonotonic:runtime var", conf_hit, schedule(nonmonotonic : runtime), int, n, >, 0, -1);
    COMBINED("parallel for dynamic var empty", conf_hit, schedule(dynamic), int, 0, <, z, 1);

    return conf_finish("loop_forms");
}

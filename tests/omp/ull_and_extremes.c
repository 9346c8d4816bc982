/* unsigned long long loop variables (GCC emits GOMP_loop_ull_*, with an `up` flag for the
 * direction) and bounds at the edges of the integer types: a few hundred iterations just
 * below ULLONG_MAX, across 2^63, near LLONG_MAX and LLONG_MIN, near INT_MAX and UINT_MAX,
 * and huge ranges walked with huge steps. A runtime that turns bounds into a trip count or
 * chunk ends with a signed or overflowing subtraction gets these wrong.
 */
#include "omp_conf.h"

#include <limits.h>

typedef unsigned long long ull;

static volatile long v_offset = 0;
static long V(long x) { return x + v_offset; }
static ull U(ull x) { return x + (ull)v_offset; }

/* `for (ull i = LO; i < HI; i += ST)` under `#pragma omp for CLAUSES`. */
#define ULL_UP(label, HIT, clauses, LO, HI, ST)                                                                        \
    do {                                                                                                               \
        const ull lo_ = (LO), hi_ = (HI), st_ = (ST);                                                                  \
        long long n_;                                                                                                  \
        CONF_SERIAL_TRIPS(n_, ull, lo_, <, hi_, st_);                                                                  \
        conf_begin();                                                                                                  \
        CONF_PRAGMA(omp parallel)                                                                                      \
        {                                                                                                              \
            CONF_PRAGMA(omp for clauses)                                                                               \
            for (ull i = lo_; i < hi_; i += st_) HIT((long long)((i - lo_) / st_), (i - lo_) % st_ != 0, i);          \
        }                                                                                                              \
        conf_end(label, n_);                                                                                           \
    } while (0)

/* `for (ull i = HI; i > LO; i -= ST)` under `#pragma omp for CLAUSES` (a downward ull loop;
 * the last decrement must not wrap, or the serial count never ends). */
#define ULL_DOWN(label, HIT, clauses, HI, LO, ST)                                                                      \
    do {                                                                                                               \
        const ull lo_ = (LO), hi_ = (HI), st_ = (ST);                                                                  \
        long long n_ = 0;                                                                                              \
        for (ull i_ = hi_; i_ > lo_; i_ -= st_) ++n_;                                                                  \
        conf_begin();                                                                                                  \
        CONF_PRAGMA(omp parallel)                                                                                      \
        {                                                                                                              \
            CONF_PRAGMA(omp for clauses)                                                                               \
            for (ull i = hi_; i > lo_; i -= st_) HIT((long long)((hi_ - i) / st_), (hi_ - i) % st_ != 0, i);          \
        }                                                                                                              \
        conf_end(label, n_);                                                                                           \
    } while (0)

static void ull_loops(void) {
    const ull n = U(1000), top = U(ULLONG_MAX), half = U(1ULL << 63), z = U(0);

    /* Every schedule on a plain range. */
    ULL_UP("ull dynamic", conf_hit, schedule(dynamic), z, n, 1);
    ULL_UP("ull dynamic,3", conf_hit, schedule(dynamic, 3), z, n, 1);
    ULL_UP("ull monotonic:dynamic", conf_hit_monotonic, schedule(monotonic : dynamic), z, n, 1);
    ULL_UP("ull nonmonotonic:dynamic,7", conf_hit, schedule(nonmonotonic : dynamic, 7), z, n, 1);
    ULL_UP("ull guided", conf_hit, schedule(guided), z, n, 1);
    ULL_UP("ull guided,4", conf_hit, schedule(guided, 4), z, n, 1);
    ULL_UP("ull monotonic:guided", conf_hit_monotonic, schedule(monotonic : guided), z, n, 1);
    ULL_UP("ull runtime", conf_hit, schedule(runtime), z, n, 1);
    ULL_UP("ull nonmonotonic:runtime", conf_hit, schedule(nonmonotonic : runtime), z, n, 1);
    ULL_UP("ull monotonic:runtime", conf_hit_monotonic, schedule(monotonic : runtime), z, n, 1);
    ULL_UP("ull static (control)", conf_hit_monotonic, schedule(static), z, n, 1);
    ULL_UP("ull dynamic,5000", conf_hit, schedule(dynamic, 5000), z, n, 1);

    /* Downwards (the runtime's `up` flag is false). */
    ULL_DOWN("ull dynamic down", conf_hit, schedule(dynamic), n, z, 1);
    ULL_DOWN("ull guided down step 3", conf_hit, schedule(guided), U(1002), z, 3);
    ULL_DOWN("ull runtime down step 3", conf_hit, schedule(runtime), U(501), z, 3);
    ULL_DOWN("ull monotonic:dynamic,4 down", conf_hit_monotonic, schedule(monotonic : dynamic, 4), n, U(10), 1);

    /* Just below ULLONG_MAX. */
    ULL_UP("ull dynamic to ULLONG_MAX", conf_hit, schedule(dynamic), top - 300, top, 1);
    ULL_UP("ull guided to ULLONG_MAX", conf_hit, schedule(guided), top - 300, top, 1);
    ULL_UP("ull runtime to ULLONG_MAX", conf_hit, schedule(runtime), top - 300, top, 1);
    ULL_UP("ull dynamic,4 to ULLONG_MAX-6 step 7", conf_hit, schedule(dynamic, 4), top - 300, top - 6, 7);
    ULL_UP("ull dynamic,1000 to ULLONG_MAX", conf_hit, schedule(dynamic, 1000), top - 300, top, 1);
    ULL_DOWN("ull dynamic down from ULLONG_MAX", conf_hit, schedule(dynamic, 2), top, top - 301, 1);
    ULL_DOWN("ull guided down from ULLONG_MAX step 3", conf_hit, schedule(guided), top - 1, top - 400, 3);

    /* Across 2^63, where a signed view of the values changes sign. */
    ULL_UP("ull dynamic across 2^63", conf_hit, schedule(dynamic), half - 150, half + 150, 1);
    ULL_UP("ull guided,3 across 2^63", conf_hit, schedule(guided, 3), half - 150, half + 150, 1);
    ULL_UP("ull runtime across 2^63 step 5", conf_hit, schedule(runtime), half - 150, half + 150, 5);
    ULL_DOWN("ull dynamic down across 2^63", conf_hit, schedule(dynamic, 3), half + 150, half - 150, 1);
    ULL_DOWN("ull runtime down across 2^63", conf_hit, schedule(runtime), half + 150, half - 150, 2);

    /* The whole range in huge steps. */
    ULL_UP("ull dynamic step 2^60", conf_hit, schedule(dynamic), z, top - (1ULL << 60), 1ULL << 60);
    ULL_UP("ull guided step 2^59+1", conf_hit, schedule(guided), U(5), top - (1ULL << 60), (1ULL << 59) + 1);
    ULL_DOWN("ull runtime down step 2^61", conf_hit, schedule(runtime), top, 1ULL << 61, 1ULL << 61);

    /* Empty and one-iteration. */
    ULL_UP("ull dynamic empty", conf_hit, schedule(dynamic), n, n, 1);
    ULL_UP("ull guided start>end", conf_hit, schedule(guided), n + 5, n, 1);
    ULL_DOWN("ull runtime down empty", conf_hit, schedule(runtime), z, n, 1);
    ULL_UP("ull dynamic one iteration at ULLONG_MAX-1", conf_hit, schedule(dynamic), top - 1, top, 1);
    ULL_DOWN("ull guided one iteration down", conf_hit, schedule(guided), U(7), U(6), 1);

    /* collapse(2) over ull variables. */
    const ull A = U(23), B = U(31);
    conf_begin();
#pragma omp parallel
    {
#pragma omp for collapse(2) schedule(dynamic, 5)
        for (ull i = 0; i < A; ++i)
            for (ull j = top - B; j < top; ++j) conf_hit((long long)(i * B + (j - (top - B))), 0, i + j);
    }
    conf_end("ull collapse(2) dynamic,5 near ULLONG_MAX", (long long)(A * B));

    /* Combined parallel for over ull: GOMP_parallel + GOMP_loop_ull_*_start. */
    conf_begin();
#pragma omp parallel for schedule(guided, 2)
    for (ull i = 18446744073709551000ULL; i < 18446744073709551600ULL; i += 3)
        conf_hit((long long)((i - 18446744073709551000ULL) / 3), (i - 18446744073709551000ULL) % 3 != 0, i);
    conf_end("parallel for ull guided,2 const near ULLONG_MAX", 200);

    conf_begin();
#pragma omp parallel for schedule(runtime)
    for (ull i = top - 2; i > top - 900; i -= 4) conf_hit((long long)((top - 2 - i) / 4), (top - 2 - i) % 4 != 0, i);
    conf_end("parallel for ull runtime down near ULLONG_MAX", 225);

    /* lastprivate of an ull loop variable that ends at ULLONG_MAX. */
    ull last = 0;
#pragma omp parallel
    {
#pragma omp for schedule(dynamic, 3) lastprivate(last)
        for (last = top - 200; last < top; ++last) {
        }
    }
    CONF_CHECK(last == ULLONG_MAX, "ull lastprivate", "final value %llu, not ULLONG_MAX", last);
    printf("ull lastprivate ending at ULLONG_MAX: %llu\n", last);
}

static void signed_extremes(void) {
    const long long zz = V(0);
    const long long lmax = LLONG_MAX + zz, lmin = LLONG_MIN + zz;

    CONF_LOOP("long long dynamic to LLONG_MAX", conf_hit, schedule(dynamic), long long, lmax - 300, <, lmax, 1);
    CONF_LOOP("long long guided to LLONG_MAX", conf_hit, schedule(guided), long long, lmax - 300, <, lmax, 1);
    CONF_LOOP("long long runtime to LLONG_MAX", conf_hit, schedule(runtime), long long, lmax - 300, <, lmax, 1);
    CONF_LOOP("long long monotonic:dynamic,4 to LLONG_MAX", conf_hit_monotonic, schedule(monotonic : dynamic, 4),
              long long, lmax - 300, <, lmax, 1);
    CONF_LOOP("long long dynamic,1000 to LLONG_MAX", conf_hit, schedule(dynamic, 1000), long long, lmax - 300, <, lmax,
              1);
    CONF_LOOP("long long dynamic,3 to LLONG_MAX-6 step 7", conf_hit, schedule(dynamic, 3), long long, lmax - 300, <,
              lmax - 6, 7);
    CONF_LOOP("long long guided <= LLONG_MAX-1", conf_hit, schedule(guided), long long, lmax - 300, <=, lmax - 1, 1);
    CONF_LOOP("long long dynamic down from LLONG_MAX-1", conf_hit, schedule(dynamic), long long, lmax - 1, >,
              lmax - 302, -1);

    CONF_LOOP("long long dynamic down to LLONG_MIN", conf_hit, schedule(dynamic), long long, lmin + 300, >, lmin, -1);
    CONF_LOOP("long long guided,2 down to LLONG_MIN+4 step -5", conf_hit, schedule(guided, 2), long long, lmin + 300,
              >, lmin + 4, -5);
    CONF_LOOP("long long runtime down to LLONG_MIN", conf_hit, schedule(runtime), long long, lmin + 300, >, lmin, -1);
    CONF_LOOP("long long dynamic up from LLONG_MIN", conf_hit, schedule(dynamic, 7), long long, lmin, <, lmin + 300, 1);
    CONF_LOOP("long long runtime >= LLONG_MIN+1", conf_hit, schedule(runtime), long long, lmin + 250, >=, lmin + 1, -1);

    /* Huge ranges, huge steps, over half the signed range (libgomp's long entry points need
     * end - start to fit in a long, so no wider). */
    CONF_LOOP("long long dynamic step 2^56", conf_hit, schedule(dynamic), long long, lmin / 4, <, lmax / 4,
              1LL << 56);
    CONF_LOOP("long long guided step -(2^56+3)", conf_hit, schedule(guided), long long, lmax / 4, >, lmin / 4,
              -((1LL << 56) + 3));
    CONF_LOOP("long long runtime step 2^59", conf_hit, schedule(runtime), long long, lmin / 4 + 5, <, lmax / 4,
              1LL << 59);

    /* int and unsigned int at their limits (the long entry points). */
    const int imax = INT_MAX + (int)zz, imin = INT_MIN + (int)zz;
    CONF_LOOP("int dynamic to INT_MAX", conf_hit, schedule(dynamic), int, imax - 200, <, imax, 1);
    CONF_LOOP("int guided down to INT_MIN", conf_hit, schedule(guided), int, imin + 200, >, imin, -1);
    CONF_LOOP("int runtime across INT_MIN..INT_MAX step 2^24", conf_hit, schedule(runtime), int, imin + 1, <,
              imax - (1 << 24), 1 << 24);
    const unsigned umax = UINT_MAX + (unsigned)zz;
    CONF_LOOP("unsigned dynamic to UINT_MAX", conf_hit, schedule(dynamic, 2), unsigned, umax - 300, <, umax, 1U);
    CONF_LOOP("unsigned guided across 2^31", conf_hit, schedule(guided), unsigned, (1U << 31) - 100, <,
              (1U << 31) + 100, 1U);

    /* lastprivate of a loop variable that ends at LLONG_MAX, and of one near LLONG_MIN. */
    long long lp = 0, lq = 0;
#pragma omp parallel
    {
#pragma omp for schedule(dynamic, 4) lastprivate(lp)
        for (lp = lmax - 100; lp < lmax; lp += 1) {
        }
#pragma omp for schedule(guided) lastprivate(lq)
        for (lq = lmin + 100; lq > lmin + 1; lq -= 3) {
        }
    }
    CONF_CHECK(lp == LLONG_MAX, "long long lastprivate", "final value %lld, not LLONG_MAX", lp);
    CONF_CHECK(lq == LLONG_MIN + 1, "long long lastprivate down", "final value %lld, not LLONG_MIN+1", lq);
    printf("long long lastprivate ending at LLONG_MAX: %lld\n", lp);
    printf("long long lastprivate ending at LLONG_MIN+1: %lld\n", lq);

    /* Combined parallel for with constant bounds at the limits: GOMP_parallel_loop_*. */
    conf_begin();
#pragma omp parallel for schedule(dynamic, 3)
    for (long long i = 9223372036854775507LL; i < 9223372036854775807LL; ++i)
        conf_hit(i - 9223372036854775507LL, 0, (ull)i);
    conf_end("parallel for dynamic,3 const to LLONG_MAX", 300);

    conf_begin();
#pragma omp parallel for schedule(guided)
    for (long long i = -9223372036854775507LL; i > -9223372036854775807LL - 1; --i)
        conf_hit(-9223372036854775507LL - i, 0, (ull)i);
    conf_end("parallel for guided const down to LLONG_MIN", 301);
}

int main(void) {
    ull_loops();
    signed_extremes();
    return conf_finish("ull_and_extremes");
}

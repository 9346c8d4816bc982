/* Shared checks of the C programs of the OpenMP conformance suite (tests/omp/).
 *
 * These programs are plain OpenMP programs: they are compiled with -fopenmp against GNU
 * libgomp and know nothing of aloe. compare_with_libgomp.cmake runs each one plainly and
 * under `aloe run`, and requires the same exit status (0) and byte-identical stdout. So a
 * program prints only what correctness fixes (counts, sums, lastprivate values, the ordered
 * output) and never what the schedule or the timing decide (who ran what, how long).
 *
 * A loop under test reports each iteration it runs with conf_hit(); conf_end() then checks
 * that every logical iteration ran exactly once and prints one line with the trip count and
 * the sum of the loop variable's values (mod 2^64, printed signed). A failed check prints "FAIL <what>: <why>" to
 * stderr and is counted; conf_finish() turns the count into the exit status. Checks run
 * outside parallel regions only; inside, the programs only count.
 */
#ifndef ALOE_TESTS_OMP_CONF_H
#define ALOE_TESTS_OMP_CONF_H

#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONF_PRAGMA(x) _Pragma(#x)

enum { CONF_MAX_ITERS = 1 << 15, CONF_MAX_THREADS = 512 };

struct conf_state {
    int hits[CONF_MAX_ITERS];              /* runs of each logical iteration */
    long long stray;                       /* runs of values that are no iteration of the loop */
    unsigned long long value_sum;          /* sum (mod 2^64) of the loop variable's values */
    long long last[CONF_MAX_THREADS];      /* per thread: the last logical iteration it ran */
    long long backwards;                   /* iterations a thread ran after a later one */
    long long bad_thread;                  /* omp_get_thread_num() outside [0, omp_get_num_threads()) */
};

static struct conf_state conf;
static int conf_failures;

static inline void conf_fail(const char *what, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void conf_fail(const char *what, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL %s: ", what);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    ++conf_failures;
}

/* Checks a condition outside a region; names the check on failure. */
#define CONF_CHECK(cond, what, ...)                                                                                    \
    do {                                                                                                               \
        if (!(cond)) conf_fail(what, __VA_ARGS__);                                                                     \
    } while (0)

static inline void conf_begin(void) {
    memset(conf.hits, 0, sizeof conf.hits);
    conf.stray = 0;
    conf.value_sum = 0;
    conf.backwards = 0;
    conf.bad_thread = 0;
    for (int t = 0; t < CONF_MAX_THREADS; ++t) conf.last[t] = -1;
}

/* One run of logical iteration k (0-based) whose loop variable had value v; misaligned is
 * non-zero when v is not on the loop's step grid. Called from inside regions. */
static inline void conf_hit(long long k, int misaligned, unsigned long long v) {
    if (misaligned || k < 0 || k >= CONF_MAX_ITERS) {
        __atomic_fetch_add(&conf.stray, 1, __ATOMIC_RELAXED);
        return;
    }
    __atomic_fetch_add(&conf.hits[k], 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&conf.value_sum, v, __ATOMIC_RELAXED);
    const int t = omp_get_thread_num();
    if (t < 0 || t >= omp_get_num_threads()) __atomic_fetch_add(&conf.bad_thread, 1, __ATOMIC_RELAXED);
}

/* conf_hit() for a loop whose schedule is monotonic: also records iterations a thread runs
 * after a later one (OpenMP: each thread runs its chunks in increasing logical order).
 * Only for regions of one level (thread numbers index conf.last). */
static inline void conf_hit_monotonic(long long k, int misaligned, unsigned long long v) {
    conf_hit(k, misaligned, v);
    const int t = omp_get_thread_num();
    if (t >= 0 && t < CONF_MAX_THREADS) {
        if (k <= conf.last[t]) __atomic_fetch_add(&conf.backwards, 1, __ATOMIC_RELAXED);
        conf.last[t] = k;
    }
}

/* Checks the loop that ran since conf_begin() had n logical iterations, each run once, and
 * prints "<label>: n=<n> sum=<sum of values>". Returns non-zero when it was right. */
static inline int conf_end(const char *label, long long n) {
    int ok = 1;
    if (n > CONF_MAX_ITERS) {
        conf_fail(label, "the test's loop has %lld iterations, more than the checker holds (%d)", n, CONF_MAX_ITERS);
        return 0;
    }
    for (long long k = 0; k < CONF_MAX_ITERS; ++k) {
        const int want = k < n ? 1 : 0;
        if (conf.hits[k] != want) {
            conf_fail(label, "logical iteration %lld of %lld ran %d times", k, n, conf.hits[k]);
            ok = 0;
            break;
        }
    }
    if (conf.stray != 0) {
        conf_fail(label, "%lld runs of values that are not iterations of the loop", conf.stray);
        ok = 0;
    }
    if (conf.backwards != 0) {
        conf_fail(label, "monotonic schedule: %lld times a thread ran an iteration after a later one", conf.backwards);
        ok = 0;
    }
    if (conf.bad_thread != 0) {
        conf_fail(label, "%lld iterations saw omp_get_thread_num() outside the team", conf.bad_thread);
        ok = 0;
    }
    printf("%s: n=%lld sum=%lld\n", label, n, (long long)conf.value_sum);
    return ok;
}

/* Where n counts the iterations the serial loop `for (T i = lo; i CMP hi; i += st)` runs. */
#define CONF_SERIAL_TRIPS(n, T, lo, cmp, hi, st)                                                                       \
    do {                                                                                                               \
        n = 0;                                                                                                         \
        for (T i_ = (lo); i_ cmp(hi); i_ += (st)) ++n;                                                                 \
    } while (0)

/* Runs the loop `for (T i = LO; i CMP HI; i += ST)` (T signed, or unsigned with ST > 0) under
 * `#pragma omp for CLAUSES` inside a parallel region of the default size, and checks it with
 * conf_end(). HIT is conf_hit or conf_hit_monotonic. The trip count comes from the same loop
 * run serially. The `omp for` increment is ST itself, not the const copy: a `!=` loop needs a
 * constant step of 1 or -1, and GCC folds the copy into one only when optimising (-O0 fails). */
#define CONF_LOOP(label, HIT, clauses, T, LO, CMP, HI, ST)                                                             \
    do {                                                                                                               \
        const T lo_ = (LO), hi_ = (HI), st_ = (ST);                                                                    \
        long long n_;                                                                                                  \
        CONF_SERIAL_TRIPS(n_, T, lo_, CMP, hi_, st_);                                                                  \
        conf_begin();                                                                                                  \
        CONF_PRAGMA(omp parallel)                                                                                      \
        {                                                                                                              \
            CONF_PRAGMA(omp for clauses)                                                                               \
            for (T i = lo_; i CMP hi_; i += (ST)) {                                                                    \
                /* Distance and step as unsigned: exact for any range of a 64-bit type. */                             \
                const unsigned long long d_ = st_ > 0 ? (unsigned long long)i - (unsigned long long)lo_                \
                                                      : (unsigned long long)lo_ - (unsigned long long)i;               \
                const unsigned long long s_ = st_ > 0 ? (unsigned long long)st_ : -(unsigned long long)st_;            \
                HIT((long long)(d_ / s_), d_ % s_ != 0, (unsigned long long)i);                                        \
            }                                                                                                          \
        }                                                                                                              \
        conf_end(label, n_);                                                                                           \
    } while (0)

/* The exit status of the program, after a last line on stdout. */
static inline int conf_finish(const char *program) {
    if (conf_failures != 0) {
        fprintf(stderr, "%s: %d check(s) failed\n", program, conf_failures);
        fflush(stdout);
        return 1;
    }
    printf("%s: all checks passed\n", program);
    return 0;
}

/* A small deterministic hash, for checksums of arrays. */
static inline unsigned long long conf_mix(unsigned long long h, unsigned long long v) {
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h;
}

#endif

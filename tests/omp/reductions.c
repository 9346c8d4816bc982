/* Reductions and data-sharing clauses on worksharing loops whose schedules reach the
 * runtime: + on int, long, unsigned long long and double, * on long, max and min on int
 * and double, the bitwise & | ^, the logical && ||, an array-section reduction, lastprivate
 * (of a scalar and of the loop variable with non-unit steps), firstprivate, and the forms
 * GCC 12 compiles to GOMP_loop_start (lastprivate(conditional:), reduction(task, ...),
 * reduction(inscan, ...)), which the interposer forwards to libgomp.
 *
 * The values sum exactly in any order (small integers, multiples of 0.5, and unsigned
 * arithmetic mod 2^64), so every schedule must give bit-identical output. Each result is
 * compared with the same reduction computed serially.
 */
#include "omp_conf.h"

enum { N = 3000 };

static volatile long v_offset = 0;
static long V(long x) { return x + v_offset; }

static int val[N];      /* pseudo-random values in [0, 10007) */
static double dval[N];  /* multiples of 0.5 in [-50, 50) */

static void fill(void) {
    for (int i = 0; i < N; ++i) {
        val[i] = (int)((i * 7919L + 13) % 10007);
        dval[i] = 0.5 * (double)((i * 37 % 200) - 100);
    }
}

#define REPORT_EQ_LL(what, got, want)                                                                                  \
    do {                                                                                                               \
        CONF_CHECK((got) == (want), what, "got %lld, serial value %lld", (long long)(got), (long long)(want));         \
        printf("%s: %lld\n", what, (long long)(got));                                                                  \
    } while (0)
#define REPORT_EQ_ULL(what, got, want)                                                                                 \
    do {                                                                                                               \
        CONF_CHECK((got) == (want), what, "got %llu, serial value %llu", (unsigned long long)(got),                    \
                   (unsigned long long)(want));                                                                        \
        printf("%s: %llu\n", what, (unsigned long long)(got));                                                         \
    } while (0)
#define REPORT_EQ_D(what, got, want)                                                                                   \
    do {                                                                                                               \
        CONF_CHECK((got) == (want), what, "got %.17g, serial value %.17g", (double)(got), (double)(want));             \
        printf("%s: %.17g\n", what, (double)(got));                                                                    \
    } while (0)

static unsigned long long scramble(long i) { return (unsigned long long)i * 0x9E3779B97F4A7C15ULL; }
static unsigned bits(long i) { return 1u << (i % 31); }

/* All the operators on one dynamic loop inside a region. */
static void operators(const char *label, int which) {
    const long n = V(N);
    int si = 0, imax = -1, imin = 1 << 30, land = 1, lor = 0;
    long sl = 0, prod = 1;
    unsigned long long su = 0;
    double sd = 0.0, dmax = -1e300, dmin = 1e300;
    unsigned band = ~0u, bor = 0, bxor = 0;

#pragma omp parallel
    {
        if (which == 0) {
#pragma omp for schedule(dynamic, 3) reduction(+ : si, sl, su, sd) reduction(* : prod) reduction(max : imax, dmax)     \
    reduction(min : imin, dmin) reduction(& : band) reduction(| : bor) reduction(^ : bxor) reduction(&& : land)        \
    reduction(|| : lor)
            for (long i = 0; i < n; ++i) {
                si += val[i] % 7;
                sl += (long)val[i] * val[i];
                su += scramble(i);
                sd += dval[i];
                prod *= (i % 75 == 0) ? 2 : 1;
                imax = val[i] > imax ? val[i] : imax;
                dmax = dval[i] > dmax ? dval[i] : dmax;
                imin = val[i] < imin ? val[i] : imin;
                dmin = dval[i] < dmin ? dval[i] : dmin;
                if (i % 101 == 0) band &= ~bits(i / 101);
                if (i % 89 == 0) bor |= bits(i);
                bxor ^= (unsigned)scramble(i);
                land = land && (val[i] != 4321);
                lor = lor || (val[i] == 4321);
            }
        } else if (which == 1) {
#pragma omp for schedule(guided) reduction(+ : si, sl, su, sd) reduction(* : prod) reduction(max : imax, dmax)         \
    reduction(min : imin, dmin) reduction(& : band) reduction(| : bor) reduction(^ : bxor) reduction(&& : land)        \
    reduction(|| : lor)
            for (long i = n - 1; i >= 0; --i) {
                si += val[i] % 7;
                sl += (long)val[i] * val[i];
                su += scramble(i);
                sd += dval[i];
                prod *= (i % 75 == 0) ? 2 : 1;
                imax = val[i] > imax ? val[i] : imax;
                dmax = dval[i] > dmax ? dval[i] : dmax;
                imin = val[i] < imin ? val[i] : imin;
                dmin = dval[i] < dmin ? dval[i] : dmin;
                if (i % 101 == 0) band &= ~bits(i / 101);
                if (i % 89 == 0) bor |= bits(i);
                bxor ^= (unsigned)scramble(i);
                land = land && (val[i] != 4321);
                lor = lor || (val[i] == 4321);
            }
        } else {
            /* runtime, nowait: the results are only read after the region's barrier. */
#pragma omp for schedule(runtime) nowait reduction(+ : si, sl, su, sd) reduction(* : prod) reduction(max : imax, dmax) \
    reduction(min : imin, dmin) reduction(& : band) reduction(| : bor) reduction(^ : bxor) reduction(&& : land)        \
    reduction(|| : lor)
            for (long i = 0; i < n; ++i) {
                si += val[i] % 7;
                sl += (long)val[i] * val[i];
                su += scramble(i);
                sd += dval[i];
                prod *= (i % 75 == 0) ? 2 : 1;
                imax = val[i] > imax ? val[i] : imax;
                dmax = dval[i] > dmax ? dval[i] : dmax;
                imin = val[i] < imin ? val[i] : imin;
                dmin = dval[i] < dmin ? dval[i] : dmin;
                if (i % 101 == 0) band &= ~bits(i / 101);
                if (i % 89 == 0) bor |= bits(i);
                bxor ^= (unsigned)scramble(i);
                land = land && (val[i] != 4321);
                lor = lor || (val[i] == 4321);
            }
        }
    }

    int e_si = 0, e_imax = -1, e_imin = 1 << 30, e_land = 1, e_lor = 0;
    long e_sl = 0, e_prod = 1;
    unsigned long long e_su = 0;
    double e_sd = 0.0, e_dmax = -1e300, e_dmin = 1e300;
    unsigned e_band = ~0u, e_bor = 0, e_bxor = 0;
    for (long i = 0; i < n; ++i) {
        e_si += val[i] % 7;
        e_sl += (long)val[i] * val[i];
        e_su += scramble(i);
        e_sd += dval[i];
        e_prod *= (i % 75 == 0) ? 2 : 1;
        e_imax = val[i] > e_imax ? val[i] : e_imax;
        e_dmax = dval[i] > e_dmax ? dval[i] : e_dmax;
        e_imin = val[i] < e_imin ? val[i] : e_imin;
        e_dmin = dval[i] < e_dmin ? dval[i] : e_dmin;
        if (i % 101 == 0) e_band &= ~bits(i / 101);
        if (i % 89 == 0) e_bor |= bits(i);
        e_bxor ^= (unsigned)scramble(i);
        e_land = e_land && (val[i] != 4321);
        e_lor = e_lor || (val[i] == 4321);
    }

    char what[128];
#define NAMED(op) (snprintf(what, sizeof what, "%s %s", label, op), what)
    REPORT_EQ_LL(NAMED("+ int"), si, e_si);
    REPORT_EQ_LL(NAMED("+ long"), sl, e_sl);
    REPORT_EQ_ULL(NAMED("+ unsigned long long"), su, e_su);
    REPORT_EQ_D(NAMED("+ double"), sd, e_sd);
    REPORT_EQ_LL(NAMED("* long"), prod, e_prod);
    REPORT_EQ_LL(NAMED("max int"), imax, e_imax);
    REPORT_EQ_D(NAMED("max double"), dmax, e_dmax);
    REPORT_EQ_LL(NAMED("min int"), imin, e_imin);
    REPORT_EQ_D(NAMED("min double"), dmin, e_dmin);
    REPORT_EQ_ULL(NAMED("& unsigned"), band, e_band);
    REPORT_EQ_ULL(NAMED("| unsigned"), bor, e_bor);
    REPORT_EQ_ULL(NAMED("^ unsigned"), bxor, e_bxor);
    REPORT_EQ_LL(NAMED("&&"), land, e_land);
    REPORT_EQ_LL(NAMED("||"), lor, e_lor);
#undef NAMED
}

/* reduction(+: hist[:16]) and a combined parallel for reduction. */
static void arrays_and_combined(void) {
    const long n = V(N);
    long hist[16] = {0}, want[16] = {0};
#pragma omp parallel
    {
#pragma omp for schedule(nonmonotonic : dynamic, 5) reduction(+ : hist[:16])
        for (long i = 0; i < n; ++i) hist[val[i] % 16] += 1 + i % 3;
    }
    for (long i = 0; i < n; ++i) want[val[i] % 16] += 1 + i % 3;
    unsigned long long h = 0;
    int same = 1;
    for (int b = 0; b < 16; ++b) {
        h = conf_mix(h, (unsigned long long)hist[b]);
        same = same && hist[b] == want[b];
    }
    CONF_CHECK(same, "reduction(+: hist[:16])", "the histogram differs from the serial one");
    printf("reduction(+: hist[:16]) checksum: %llu\n", h);

    double s = 0.0, e = 0.0;
#pragma omp parallel for schedule(guided, 2) reduction(+ : s)
    for (long i = 0; i < n; ++i) s += dval[i] * 2.0;
    for (long i = 0; i < n; ++i) e += dval[i] * 2.0;
    REPORT_EQ_D("parallel for guided,2 reduction(+: double)", s, e);

    long m = 0;
#pragma omp parallel for schedule(dynamic) reduction(max : m)
    for (int i = 0; i < 2500; ++i) m = val[i] > m ? val[i] : m;
    long em = 0;
    for (int i = 0; i < 2500; ++i) em = val[i] > em ? val[i] : em;
    REPORT_EQ_LL("parallel for dynamic reduction(max: long) const", m, em);

    /* A reduction over an empty loop leaves the original value. */
    long untouched = 42;
#pragma omp parallel for schedule(dynamic) reduction(+ : untouched)
    for (long i = 0; i < V(0); ++i) untouched += i;
    REPORT_EQ_LL("reduction over an empty loop", untouched, 42);
}

/* lastprivate, firstprivate, private. */
static void privates(void) {
    const int n = (int)V(1000);

    int i_last = -1;
    long x_last = -1;
#pragma omp parallel
    {
#pragma omp for schedule(dynamic, 4) lastprivate(i_last, x_last)
        for (i_last = 5; i_last < n; i_last += 3) x_last = (long)i_last * i_last;
    }
    long trips;
    CONF_SERIAL_TRIPS(trips, int, 5, <, n, 3);
    REPORT_EQ_LL("lastprivate loop variable step 3", i_last, 5 + trips * 3);
    REPORT_EQ_LL("lastprivate scalar step 3", x_last, (long)(5 + (trips - 1) * 3) * (5 + (trips - 1) * 3));

    long j_last = 0, y_last = 0;
#pragma omp parallel
    {
#pragma omp for schedule(guided) lastprivate(j_last, y_last)
        for (j_last = 2 * n; j_last > -11; j_last -= 5) y_last = j_last * 3 + 1;
    }
    CONF_SERIAL_TRIPS(trips, long, 2 * n, >, -11, -5);
    REPORT_EQ_LL("lastprivate loop variable step -5 guided", j_last, 2 * n - trips * 5);
    REPORT_EQ_LL("lastprivate scalar step -5 guided", y_last, (2 * n - (trips - 1) * 5) * 3 + 1);

    long k_last = 0;
#pragma omp parallel for schedule(runtime) lastprivate(k_last)
    for (k_last = 0; k_last < n; k_last += 7) {
    }
    CONF_SERIAL_TRIPS(trips, long, 0, <, n, 7);
    REPORT_EQ_LL("lastprivate loop variable runtime step 7", k_last, trips * 7);

    int ci = 0, cj = 0;
#pragma omp parallel
    {
#pragma omp for collapse(2) schedule(dynamic, 3) lastprivate(ci, cj)
        for (ci = 0; ci < 13; ++ci)
            for (cj = 0; cj < n / 100; cj += 2) {
            }
    }
    REPORT_EQ_LL("lastprivate collapse(2) outer variable", ci, 13);
    REPORT_EQ_LL("lastprivate collapse(2) inner variable", cj, (n / 100 + 1) / 2 * 2);

    long one_last = -1;
    int one_i = -1;
#pragma omp parallel
    {
#pragma omp for schedule(dynamic) lastprivate(one_i, one_last)
        for (one_i = 9; one_i < n / 100; ++one_i) one_last = one_i * 11;
    }
    REPORT_EQ_LL("lastprivate one-iteration loop variable", one_i, 10);
    REPORT_EQ_LL("lastprivate one-iteration scalar", one_last, 99);

    /* firstprivate: every thread's copy starts from the original value. */
    int base = 100, tab[4] = {7, 8, 9, 10};
    long bad = 0, own_counts = 0;
#pragma omp parallel
    {
#pragma omp for schedule(dynamic, 2) firstprivate(base, tab) nowait
        for (int i = 0; i < n; ++i) {
            if (base != 100 + tab[3] - 10 || tab[0] != 7 || tab[1] != 8 || tab[2] != 9) {
                __atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
            }
            /* Change the private copies consistently; other threads' copies must not see it. */
            ++base;
            ++tab[3];
        }
    }
    CONF_CHECK(bad == 0, "firstprivate", "%ld iterations saw a copy not initialised from the original", bad);
    REPORT_EQ_LL("firstprivate original unchanged", base + tab[3], 110);

    /* firstprivate + lastprivate on the same variable, and the private copy counts. */
    long fl = 5;
#pragma omp parallel
    {
#pragma omp for schedule(nonmonotonic : dynamic, 3) firstprivate(fl) lastprivate(fl) reduction(+ : own_counts)
        for (int i = 0; i < n; ++i) {
            if (fl >= 5) ++own_counts;
            fl = 1000 + i;
        }
    }
    REPORT_EQ_LL("firstprivate+lastprivate final value", fl, 1000 + n - 1);
    REPORT_EQ_LL("firstprivate+lastprivate iterations", own_counts, n);
}

/* The forms GCC 12 sends through GOMP_loop_start (forwarded to libgomp). */
static void loop_start_forms(void) {
    const int n = (int)V(2000);

    /* lastprivate(conditional:): the value from the last iteration that assigned it. */
    int cond = -1, e_cond = -1;
#pragma omp parallel
    {
#pragma omp for schedule(dynamic, 3) lastprivate(conditional : cond)
        for (int i = 0; i < n; ++i)
            if (val[i] % 97 == 5) cond = i;
    }
    for (int i = 0; i < n; ++i)
        if (val[i] % 97 == 5) e_cond = i;
    REPORT_EQ_LL("lastprivate(conditional:) dynamic,3", cond, e_cond);

    /* Upwards only: GCC 12 gets lastprivate(conditional:) wrong on downward loops with
     * dynamic or guided schedules even on plain libgomp (the value of a wrong iteration
     * wins now and then with 2-3 threads). */
    long cond2 = -1, e_cond2 = -1;
#pragma omp parallel
    {
#pragma omp for schedule(guided) lastprivate(conditional : cond2)
        for (int i = 1; i < n; i += 2)
            if (val[i] % 89 == 1) cond2 = val[i];
    }
    for (int i = 1; i < n; i += 2)
        if (val[i] % 89 == 1) e_cond2 = val[i];
    REPORT_EQ_LL("lastprivate(conditional:) guided step 2", cond2, e_cond2);

    /* reduction(task, +:) with tasks that join the reduction. */
    long tsum = 0, e_tsum = 0;
#pragma omp parallel
    {
#pragma omp for schedule(dynamic, 16) reduction(task, + : tsum)
        for (int i = 0; i < n; ++i) {
            tsum += 1;
            if (i % 10 == 0) {
#pragma omp task in_reduction(+ : tsum) firstprivate(i)
                tsum += val[i];
            }
        }
    }
    for (int i = 0; i < n; ++i) e_tsum += 1 + (i % 10 == 0 ? val[i] : 0);
    REPORT_EQ_LL("reduction(task, +) with in_reduction tasks", tsum, e_tsum);

    /* reduction(inscan, +:): inclusive and exclusive prefix sums. */
    static long incl[N], excl[N];
    long run = 0;
#pragma omp parallel
    {
#pragma omp for reduction(inscan, + : run)
        for (int i = 0; i < n; ++i) {
            run += val[i];
#pragma omp scan inclusive(run)
            incl[i] = run;
        }
    }
    long run2 = 0;
#pragma omp parallel
    {
#pragma omp for reduction(inscan, + : run2)
        for (int i = 0; i < n; ++i) {
            excl[i] = run2;
#pragma omp scan exclusive(run2)
            run2 += val[i];
        }
    }
    long acc = 0, bad = 0;
    unsigned long long h = 0;
    for (int i = 0; i < n; ++i) {
        if (excl[i] != acc) ++bad;
        acc += val[i];
        if (incl[i] != acc) ++bad;
        h = conf_mix(h, (unsigned long long)incl[i]);
    }
    CONF_CHECK(bad == 0, "reduction(inscan, +)", "%ld prefix sums differ from the serial ones", bad);
    REPORT_EQ_LL("inscan inclusive total", run, acc);
    REPORT_EQ_LL("inscan exclusive total", run2, acc);
    printf("inscan prefix checksum: %llu\n", h);
}

int main(void) {
    fill();
    operators("dynamic,3", 0);
    operators("guided downwards", 1);
    operators("runtime nowait", 2);
    arrays_and_combined();
    privates();
    loop_start_forms();
    return conf_finish("reductions");
}

/* Ordered and doacross loops, which the interposer hands to libgomp unchanged: the ordered
 * regions must run in iteration order whatever the schedule (the output printed from inside
 * them is the check), and the cross-iteration dependences of ordered(n) loops must hold
 * (prefix sums and a 2-D wavefront come out exactly right). Runtime loops run between them,
 * so a forwarded loop and a loop aloe runs follow each other in one region.
 */
#include "omp_conf.h"

#include <limits.h>

static volatile long v_offset = 0;
static long V(long x) { return x + v_offset; }

enum { N = 1500 };
static long seq[N + 8];
static int seq_len;

static void seq_reset(void) {
    seq_len = 0;
    memset(seq, 0, sizeof seq);
}

/* Appends from inside an ordered region (one thread at a time). */
static void seq_add(long v) {
    if (seq_len < N + 8) seq[seq_len] = v;
    ++seq_len;
}

/* Checks the ordered region saw want[0..n) in this order. */
static void seq_check(const char *label, const long *want, long n) {
    int ok = seq_len == n;
    for (long k = 0; ok && k < n; ++k) ok = seq[k] == want[k];
    if (!ok) {
        long k = 0;
        while (k < n && k < seq_len && seq[k] == want[k]) ++k;
        conf_fail(label, "ordered regions ran %d times; first difference at position %ld (got %ld, want %ld)",
                  seq_len, k, k < seq_len ? seq[k] : -1, k < n ? want[k] : -1);
    }
    unsigned long long h = 0;
    for (long k = 0; k < seq_len && k < N; ++k) h = conf_mix(h, (unsigned long long)seq[k]);
    printf("%s: %d ordered regions, checksum %llu\n", label, seq_len, h);
}

static long want[N];

static long fill_up(long lo, long hi, long st) {
    long n = 0;
    for (long i = lo; st > 0 ? i < hi : i > hi; i += st) want[n++] = i;
    return n;
}

/* An ordered loop in a function of its own, orphaned. */
static void orphan_ordered(long n) {
#pragma omp for ordered schedule(dynamic, 2)
    for (long i = 0; i < n; ++i) {
#pragma omp ordered
        seq_add(i);
    }
}

static void ordered_loops(void) {
    const long n = V(N);
    long m;

    /* Printed straight from the ordered region: the output itself is the check. */
#pragma omp parallel
    {
#pragma omp for ordered schedule(dynamic)
        for (int i = 0; i < (int)V(12); ++i) {
#pragma omp ordered
            printf("ordered dynamic: iteration %d\n", i);
        }
#pragma omp for ordered schedule(guided) nowait
        for (int i = (int)V(30); i > 0; i -= 4) {
#pragma omp ordered
            printf("ordered guided step -4: iteration %d\n", i);
        }
    }

    seq_reset();
#pragma omp parallel
    {
#pragma omp for ordered schedule(dynamic, 3)
        for (long i = 0; i < n; ++i) {
            volatile long work = i % 7; /* something before the ordered region */
            (void)work;
#pragma omp ordered
            seq_add(i);
        }
    }
    m = fill_up(0, n, 1);
    seq_check("ordered dynamic,3", want, m);

    seq_reset();
#pragma omp parallel
    {
#pragma omp for ordered schedule(runtime)
        for (long i = n; i > -n; i -= 3) {
#pragma omp ordered
            seq_add(i);
        }
    }
    m = fill_up(n, -n, -3);
    seq_check("ordered runtime step -3", want, m);

    seq_reset();
#pragma omp parallel
    {
#pragma omp for ordered schedule(static)
        for (long i = 0; i < n; ++i) {
#pragma omp ordered
            seq_add(i);
        }
    }
    m = fill_up(0, n, 1);
    seq_check("ordered static", want, m);

    seq_reset();
#pragma omp parallel
    {
#pragma omp for ordered schedule(static, 2)
        for (long i = 0; i < n; i += 2) {
#pragma omp ordered
            seq_add(i);
        }
    }
    m = fill_up(0, n, 2);
    seq_check("ordered static,2 step 2", want, m);

    /* Only some iterations run their ordered region. */
    seq_reset();
#pragma omp parallel
    {
#pragma omp for ordered schedule(guided, 5)
        for (long i = 0; i < n; ++i) {
            if (i % 3 == 1) {
#pragma omp ordered
                seq_add(i);
            }
        }
    }
    m = fill_up(1, n, 3);
    seq_check("ordered guided,5 every third iteration", want, m);

    seq_reset();
#pragma omp parallel
    {
#pragma omp for ordered collapse(2) schedule(dynamic, 4)
        for (long i = 0; i < 30; ++i)
            for (long j = 0; j < V(40); ++j) {
#pragma omp ordered
                seq_add(i * 40 + j);
            }
    }
    m = fill_up(0, 1200, 1);
    seq_check("ordered collapse(2) dynamic,4", want, m);

    seq_reset();
#pragma omp parallel
    orphan_ordered(n);
    m = fill_up(0, n, 1);
    seq_check("orphaned ordered dynamic,2", want, m);

    seq_reset();
    orphan_ordered(V(50)); /* outside any region */
    m = fill_up(0, 50, 1);
    seq_check("orphaned ordered outside a region", want, m);

    /* unsigned long long: GOMP_loop_ull_ordered_*. */
    seq_reset();
    const unsigned long long big = ULLONG_MAX - (unsigned long long)V(1000);
#pragma omp parallel
    {
#pragma omp for ordered schedule(dynamic, 3)
        for (unsigned long long u = big; u < big + 900; u += 3) {
#pragma omp ordered
            seq_add((long)(u - big));
        }
    }
    m = fill_up(0, 900, 3);
    seq_check("ordered unsigned long long near ULLONG_MAX", want, m);

    seq_reset();
#pragma omp parallel
    {
#pragma omp for ordered schedule(guided)
        for (unsigned long long u = 1000 + (unsigned long long)V(0); u > 0; u -= 2) {
#pragma omp ordered
            seq_add((long)u);
        }
    }
    m = fill_up(1000, 0, -2);
    seq_check("ordered unsigned long long downwards", want, m);

    seq_reset();
#pragma omp parallel
    {
#pragma omp for ordered schedule(runtime)
        for (unsigned long long u = 0; u < (unsigned long long)V(700); ++u) {
#pragma omp ordered
            seq_add((long)u);
        }
    }
    m = fill_up(0, 700, 1);
    seq_check("ordered unsigned long long runtime", want, m);

    seq_reset();
#pragma omp parallel
    {
#pragma omp for ordered schedule(static, 3)
        for (unsigned long long u = big; u < big + 300; ++u) {
#pragma omp ordered
            seq_add((long)(u - big));
        }
    }
    m = fill_up(0, 300, 1);
    seq_check("ordered unsigned long long static,3", want, m);

    /* Empty and one-iteration ordered loops. */
    seq_reset();
#pragma omp parallel
    {
#pragma omp for ordered schedule(dynamic)
        for (long i = 0; i < V(0); ++i) {
#pragma omp ordered
            seq_add(i);
        }
#pragma omp for ordered schedule(dynamic)
        for (long i = 5; i < V(6); ++i) {
#pragma omp ordered
            seq_add(i);
        }
    }
    want[0] = 5;
    seq_check("ordered empty then one iteration", want, 1);
}

/* Doacross loops stay short: libgomp's GOMP_doacross_wait busy-waits without yielding, so
 * with more threads than cores each hand-off can cost a time slice. */
static void doacross_loops(void) {
    const long n = V(120);
    static long a[N], b[N];
    static unsigned long long w[14][14];
    long bad;

    for (long i = 0; i < n; ++i) a[i] = i % 9 + 1;
#pragma omp parallel
    {
#pragma omp for ordered(1) schedule(dynamic, 4)
        for (long i = 1; i < n; ++i) {
#pragma omp ordered depend(sink : i - 1)
            a[i] += a[i - 1];
#pragma omp ordered depend(source)
        }
    }
    bad = 0;
    for (long i = 0, s = 0; i < n; ++i) {
        s += i % 9 + 1;
        if (a[i] != s) ++bad;
    }
    CONF_CHECK(bad == 0, "doacross dynamic prefix sum", "%ld prefix sums wrong", bad);
    printf("doacross dynamic prefix sum: %ld\n", a[n - 1]);

    for (long i = 0; i < n; ++i) b[i] = i % 4;
    const long top = n % 2 == 0 ? n - 1 : n - 2; /* the largest odd index */
#pragma omp parallel
    {
#pragma omp for ordered(1) schedule(static, 3)
        for (long i = 2; i < n; i += 2) {
#pragma omp ordered depend(sink : i - 2)
            b[i] += b[i - 2];
#pragma omp ordered depend(source)
        }
#pragma omp for ordered(1) schedule(guided) nowait
        for (long i = top; i >= 1; i -= 2) {
#pragma omp ordered depend(sink : i + 2)
            b[i] += b[i + 2];
#pragma omp ordered depend(source)
        }
    }
    bad = 0;
    for (long i = 0, s = 0; i < n; i += 2) {
        s += i % 4;
        if (b[i] != s) ++bad;
    }
    for (long i = top, s = 0; i >= 1; i -= 2) {
        s += i % 4;
        if (b[i] != s) ++bad;
    }
    CONF_CHECK(bad == 0, "doacross step 2 up and down", "%ld sums wrong", bad);
    printf("doacross step 2 static,3 and guided: %ld %ld\n", b[n % 2 == 0 ? n - 2 : n - 1], b[1]);

    /* 2-D wavefront: w[i][j] = w[i-1][j] + w[i][j-1], runtime schedule. */
    const long R = V(14);
    for (long i = 0; i < R; ++i) w[i][0] = w[0][i] = 1;
#pragma omp parallel
    {
#pragma omp for ordered(2) schedule(runtime)
        for (long i = 1; i < R; ++i)
            for (long j = 1; j < R; ++j) {
#pragma omp ordered depend(sink : i - 1, j) depend(sink : i, j - 1)
                w[i][j] = w[i - 1][j] + w[i][j - 1];
#pragma omp ordered depend(source)
            }
    }
    unsigned long long s[14] = {0};
    bad = 0;
    for (long k = 0; k < R; ++k) s[k] = 1;
    for (long i = 1; i < R; ++i)
        for (long j = 1; j < R; ++j) {
            s[j] += s[j - 1]; /* row i, serially */
            if (w[i][j] != s[j]) ++bad;
        }
    CONF_CHECK(bad == 0, "doacross ordered(2) wavefront", "%ld cells wrong", bad);
    printf("doacross ordered(2) wavefront corner: %llu\n", w[R - 1][R - 1]);

    /* unsigned long long doacross: GOMP_loop_ull_doacross_*. */
    static unsigned long long u[N];
    for (long i = 0; i < n; ++i) u[i] = (unsigned long long)i * 3;
#pragma omp parallel
    {
#pragma omp for ordered(1) schedule(dynamic, 2)
        for (unsigned long long i = 1; i < (unsigned long long)n; ++i) {
#pragma omp ordered depend(sink : i - 1)
            u[i] += u[i - 1];
#pragma omp ordered depend(source)
        }
    }
    bad = 0;
    for (long i = 0; i < n; ++i)
        if (u[i] != 3ULL * (unsigned long long)(i * (i + 1) / 2)) ++bad;
    CONF_CHECK(bad == 0, "doacross unsigned long long", "%ld prefix sums wrong", bad);
    printf("doacross unsigned long long: %llu\n", u[n - 1]);

    /* unsigned long long doacross with static, guided (near ULLONG_MAX) and runtime
     * schedules. (Not downwards: GCC 12's libgomp hangs on a downward unsigned long long
     * doacross loop even without aloe.) */
    for (long i = 0; i < n; ++i) u[i] = (unsigned long long)i;
    const unsigned long long base = ULLONG_MAX - (unsigned long long)V(500);
#pragma omp parallel
    {
#pragma omp for ordered(1) schedule(static)
        for (unsigned long long i = 1; i < (unsigned long long)n; ++i) {
#pragma omp ordered depend(sink : i - 1)
            u[i] += u[i - 1];
#pragma omp ordered depend(source)
        }
#pragma omp for ordered(1) schedule(guided)
        for (unsigned long long i = base + 1; i < base + (unsigned long long)n; ++i) {
#pragma omp ordered depend(sink : i - 1)
            a[i - base] = a[i - base - 1] + 1;
#pragma omp ordered depend(source)
        }
#pragma omp for ordered(1) schedule(runtime)
        for (unsigned long long i = 1; i < (unsigned long long)n; ++i) {
#pragma omp ordered depend(sink : i - 1)
            b[i] = b[i - 1] + (long)i;
#pragma omp ordered depend(source)
        }
    }
    bad = 0;
    for (long i = 0; i < n; ++i)
        if (u[i] != (unsigned long long)(i * (i + 1) / 2) || a[i] != a[0] + i || b[i] != b[0] + i * (i + 1) / 2) ++bad;
    CONF_CHECK(bad == 0, "doacross unsigned long long static, guided near ULLONG_MAX, runtime", "%ld values wrong",
               bad);
    printf("doacross unsigned long long static, guided near ULLONG_MAX, runtime: %llu %ld %ld\n", u[n - 1],
           a[n - 1] - a[0], b[n - 1] - b[0]);
}

/* A runtime loop, an ordered loop, a runtime loop, a doacross loop, in one region. */
static void interleaved(void) {
    const long n = V(800);
    static int c1[800], c2[800];
    static long p[800];
    memset(c1, 0, sizeof c1);
    memset(c2, 0, sizeof c2);
    for (long i = 0; i < n; ++i) p[i] = 1;
    seq_reset();
#pragma omp parallel
    {
        for (int rep = 0; rep < 3; ++rep) {
#pragma omp for schedule(dynamic, 5)
            for (long i = 0; i < n; ++i) __atomic_fetch_add(&c1[i], 1, __ATOMIC_RELAXED);
#pragma omp for ordered schedule(dynamic, 5)
            for (long i = 0; i < n; i += 10) {
#pragma omp ordered
                seq_add(i + rep);
            }
#pragma omp for schedule(guided)
            for (long i = 0; i < n; ++i) __atomic_fetch_add(&c2[i], 1, __ATOMIC_RELAXED);
#pragma omp single
            for (long i = 0; i < n; ++i) p[i] = 1;
#pragma omp for ordered(1) schedule(dynamic, 3)
            for (long i = 1; i < 100; ++i) {
#pragma omp ordered depend(sink : i - 1)
                p[i] += p[i - 1];
#pragma omp ordered depend(source)
            }
        }
    }
    long m = 0, bad = 0;
    for (int rep = 0; rep < 3; ++rep)
        for (long i = 0; i < n; i += 10) want[m++] = i + rep;
    seq_check("interleaved ordered loops", want, m);
    for (long i = 0; i < n; ++i)
        if (c1[i] != 3 || c2[i] != 3 || p[i] != (i < 100 ? i + 1 : 1)) ++bad;
    CONF_CHECK(bad == 0, "interleaved runtime and forwarded loops", "%ld wrong counts or sums", bad);
    printf("interleaved runtime/ordered/doacross loops: %s\n", bad == 0 ? "right" : "WRONG");
}

int main(void) {
    ordered_loops();
    doacross_loops();
    interleaved();
    return conf_finish("ordered_doacross");
}

/* first_invocations: a program with many OpenMP loop sites, each run only a few times, so that
 * what a schedule that tunes itself per site costs in a site's first invocations (probes,
 * static probe runs, candidates it tries) shows up against the program's own schedule and plain
 * libgomp (issue 14, part A). An ordinary OpenMP program: built with -fopenmp, not linked to
 * aloe; `python -m aloe_harness first-cost` runs it plain and under `aloe run`, interleaved.
 *
 * --repeats passes, each running every one of --sites loop sites once, in order (a time step
 * that calls S kernels). Each site is its own `#pragma omp for schedule(runtime)` (--form
 * region: one parallel region around all passes; the default) or its own `#pragma omp parallel
 * for schedule(runtime)` (--form combined), stamped out by a macro so that every site has its
 * own call site (its own return address, which is how an interposer tells loop sites apart).
 * One invocation has --iterations iterations and about --loop-us µs of work on the team
 * (--loop-us × team size of busy work, split over the iterations); iteration i of site k costs
 * base_k · (1 + imbalance · a_k · ramp_k(i)), ramp_k rising from 0 to 1 or falling from 1 to 0
 * and a_k in [0.5, 1.5), both drawn per site from --seed, so static blocks are a little uneven
 * (default 0.3: under static the busier of 2 threads has 3.5-9% more work than the mean, above
 * the 3% at which aloe's adaptive falls back to static), so a tuner does not settle on static at
 * once; base_k makes each invocation's total the same whatever the imbalance.
 * The work is a dependent integer recurrence, calibrated against the clock at start (--calibrate
 * prints it; the driver passes --units-per-ns so that every run does the same work). One empty
 * parallel region starts the team before the clock does; the first loop's probes are timed.
 *
 * Output: one JSON line: the settings, wall_s (all passes), pass_s (each pass: the first holds
 * the sites' first invocations), per_invocation_us and a checksum (the sum of every iteration's
 * value mod 2^64, the same whichever thread ran what). Exit status: 0 ok, 2 bad command line.
 */
#include <omp.h>

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_SITES = 128, MAX_REPEATS = 100000 };

struct options {
    int sites;
    long repeats;
    double loop_us;
    long iterations;
    double imbalance;
    uint64_t seed;
    int threads;          /* 0: omp_get_max_threads() */
    int combined;         /* each site a `parallel for` of its own */
    double units_per_ns;  /* <= 0: calibrate at start */
    int calibrate;
};

/* Per site: the work units of iteration i are base + slope·i (a ramp; slope may be negative). */
struct site_work {
    double base;
    double slope;
};

static void usage(FILE* out) {
    fprintf(out,
            "usage: first_invocations [--sites S] [--repeats R] [--loop-us L] [--iterations N]\n"
            "                         [--imbalance X] [--seed K] [--form region|combined]\n"
            "                         [--threads T] [--units-per-ns U] [--calibrate]\n"
            "  --sites S         distinct loop sites, 1..%d (default 40)\n"
            "  --repeats R       passes over all sites: invocations per site (default 5)\n"
            "  --loop-us L       work of one invocation, µs of the team's time (default 1000)\n"
            "  --iterations N    iterations per invocation (default 256)\n"
            "  --imbalance X     ramp of iteration cost across a loop, 0 = even (default 0.3)\n"
            "  --seed K          draws each site's ramp direction and height (default 1)\n"
            "  --form F          region: one parallel region, `omp for` per site (default);\n"
            "                    combined: every invocation a `parallel for` of its own\n"
            "  --threads T       team size (default: omp_get_max_threads(), OMP_NUM_THREADS)\n"
            "  --units-per-ns U  work units per ns (default: calibrated at start)\n"
            "  --calibrate       print {\"units_per_ns\": …} and exit\n"
            "The loops are schedule(runtime): they follow OMP_SCHEDULE, or `aloe run --schedule`.\n",
            MAX_SITES);
}

/* The numeric flags: where each goes and its range (a long's range, or a double's low end). */
struct numeric_flag {
    const char* name;
    enum { as_int, as_long, as_u64, as_double } kind;
    void* target;
    double low, high;
};

static int set_numeric(const struct numeric_flag* f, const char* text) {
    char* end = NULL;
    const double v = f->kind == as_double ? strtod(text, &end) : (double)strtol(text, &end, 10);
    if (text[0] == '\0' || *end != '\0' || !(v >= f->low) || v > f->high) return 0;
    switch (f->kind) {
    case as_int: *(int*)f->target = (int)v; break;
    case as_long: *(long*)f->target = (long)v; break;
    case as_u64: *(uint64_t*)f->target = (uint64_t)v; break;
    case as_double: *(double*)f->target = v; break;
    }
    return 1;
}

static int parse(int argc, char** argv, struct options* o) {
    *o = (struct options){.sites = 40, .repeats = 5, .loop_us = 1000, .iterations = 256,
                          .imbalance = 0.3, .seed = 1};
    const struct numeric_flag numeric[] = {
        {"--sites", as_int, &o->sites, 1, MAX_SITES},
        {"--repeats", as_long, &o->repeats, 1, MAX_REPEATS},
        {"--loop-us", as_double, &o->loop_us, 0, 1e300},
        {"--iterations", as_long, &o->iterations, 1, 1 << 30},
        {"--imbalance", as_double, &o->imbalance, 0, 1e300},
        {"--seed", as_u64, &o->seed, 0, 1e15},
        {"--threads", as_int, &o->threads, 1, 4096},
        {"--units-per-ns", as_double, &o->units_per_ns, 1e-6, 1e300},
    };
    for (int i = 1; i < argc; ++i) {
        const char* flag = argv[i];
        if (!strcmp(flag, "--help") || !strcmp(flag, "-h")) {
            usage(stdout);
            exit(0);
        }
        if (!strcmp(flag, "--calibrate")) {
            o->calibrate = 1;
            continue;
        }
        const char* value = i + 1 < argc ? argv[++i] : NULL;
        int ok = value != NULL, known = 0;
        for (size_t k = 0; k < sizeof numeric / sizeof numeric[0] && value; ++k) {
            if (strcmp(flag, numeric[k].name)) continue;
            known = 1;
            ok = set_numeric(&numeric[k], value);
        }
        if (!strcmp(flag, "--form")) {
            known = 1;
            ok = value && (!strcmp(value, "region") || !strcmp(value, "combined"));
            o->combined = ok && !strcmp(value, "combined");
        }
        if (!known && value) {
            fprintf(stderr, "first_invocations: unknown flag '%s' (see --help)\n", flag);
            return 2;
        }
        if (!ok) {
            fprintf(stderr, "first_invocations: %s '%s' is not valid (see --help)\n", flag,
                    value ? value : "(missing value)");
            return 2;
        }
    }
    return 0;
}

/* splitmix64: the per-site draws and each iteration's starting value. */
static uint64_t mix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* `units` steps of xorshift64, each depending on the last; not inlined, so both forms run the
 * same machine code per iteration. */
__attribute__((noinline)) static uint64_t busy(uint64_t x, long units) {
    x |= 1;
    for (long u = 0; u < units; ++u) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    return x;
}

/* Work units per nanosecond on one thread: batches double until one lasts 5 ms, then the
 * fastest rate of that batch and two more of its size (the machine's noise only slows). */
static double calibrate(void) {
    volatile uint64_t sink = 0;
    long units = 1 << 16;
    double rate = 0;
    for (int timed = 0; timed < 3;) {
        const double t0 = omp_get_wtime();
        sink += busy(sink + (uint64_t)units, units);
        const double t = omp_get_wtime() - t0;
        if (t < 5e-3 && timed == 0) {
            units *= 2;
            continue;
        }
        ++timed;
        if ((double)units / (t * 1e9) > rate) rate = (double)units / (t * 1e9);
    }
    return rate;
}

/* Site k's ramp: units(i) = base + slope·i, summing to `total` units over n iterations. */
static struct site_work site_work(const struct options* o, int k, double total) {
    const uint64_t draw = mix(o->seed * 1000003ULL + (uint64_t)k);
    const double height = o->imbalance * (0.5 + (double)(draw >> 11) * 0x1p-53);
    const int rising = (int)(mix(draw) & 1);
    const long n = o->iterations;
    const double step = n > 1 ? height / (double)(n - 1) : 0;  /* relative cost per iteration */
    /* mean relative cost over the loop: 1 + height/2, either direction */
    const double base = total / ((double)n * (1 + height / 2));
    return rising ? (struct site_work){base, base * step}
                  : (struct site_work){base * (1 + height), -base * step};
}

/* The value of iteration i of site k in pass r (added mod 2^64 by the caller). */
static inline uint64_t iteration(const struct site_work* w, int k, long r, long i) {
    const long units = (long)(w->base + w->slope * (double)i + 0.5);
    return busy(mix(((uint64_t)r << 40) ^ ((uint64_t)k << 32) ^ (uint64_t)i), units);
}

/* One site per case label, each its own worksharing loop (its own call site): an `omp for`
 * inside the caller's region, or a `parallel for` of its own. */
#define SITE(k, directive)                                                    \
    case k: {                                                                 \
        const struct site_work* w = &work[k];                                 \
        _Pragma(directive)                                                    \
        for (long i = 0; i < n; ++i) sum += iteration(w, k, r, i);            \
    } break;
#define REGION_SITE(k) SITE(k, "omp for schedule(runtime)")
#define COMBINED_SITE(k) \
    SITE(k, "omp parallel for schedule(runtime) num_threads(threads) reduction(+ : sum)")
#define SITES8(S, k) S(k) S(k + 1) S(k + 2) S(k + 3) S(k + 4) S(k + 5) S(k + 6) S(k + 7)
#define SITES64(S, k) SITES8(S, k) SITES8(S, k + 8) SITES8(S, k + 16) SITES8(S, k + 24) \
    SITES8(S, k + 32) SITES8(S, k + 40) SITES8(S, k + 48) SITES8(S, k + 56)
#define ALL_SITES(S) SITES64(S, 0) SITES64(S, 64)

/* All passes; pass_s[r] gets the seconds of pass r. Returns the sum of the iterations' values. */
static uint64_t run(const struct options* o, const struct site_work* work, int threads, double* pass_s) {
    uint64_t sum = 0;
    const long n = o->iterations;
    double mark = omp_get_wtime();
    if (!o->combined) {
#pragma omp parallel num_threads(threads) reduction(+ : sum)
        for (long r = 0; r < o->repeats; ++r) {
            for (int k = 0; k < o->sites; ++k) {
                switch (k) { ALL_SITES(REGION_SITE) }
            }
            /* every loop ends in a barrier: the team is done with pass r */
#pragma omp master
            {
                const double now = omp_get_wtime();
                pass_s[r] = now - mark;
                mark = now;
            }
        }
    } else {
        for (long r = 0; r < o->repeats; ++r) {
            for (int k = 0; k < o->sites; ++k) {
                switch (k) { ALL_SITES(COMBINED_SITE) }
            }
            const double now = omp_get_wtime();
            pass_s[r] = now - mark;
            mark = now;
        }
    }
    return sum;
}

/* run-sched-var as OMP_SCHEDULE would spell it (libgomp flags monotonic in the top bit). */
static void print_schedule(void) {
    static const char* const kinds[] = {"?", "static", "dynamic", "guided", "auto"};
    omp_sched_t kind;
    int chunk = 0;
    omp_get_schedule(&kind, &chunk);
    const unsigned bare = (unsigned)kind & 0x7fffffffU;
    printf("\"%s%s,%d\"", ((unsigned)kind & 0x80000000U) ? "monotonic:" : "",
           kinds[bare < 5 ? bare : 0], chunk);
}

int main(int argc, char** argv) {
    struct options o;
    const int status = parse(argc, argv, &o);
    if (status != 0) return status;
    if (o.calibrate) {
        printf("{\"units_per_ns\": %.6f}\n", calibrate());
        return 0;
    }
    const int calibrated = o.units_per_ns <= 0;
    if (calibrated) o.units_per_ns = calibrate();
    const int threads = o.threads > 0 ? o.threads : omp_get_max_threads();
    const double total_units = o.loop_us * 1e3 * o.units_per_ns * threads;
    struct site_work work[MAX_SITES];
    for (int k = 0; k < o.sites; ++k) work[k] = site_work(&o, k, total_units);
    double* pass_s = calloc((size_t)o.repeats, sizeof *pass_s);
    if (!pass_s) {
        fprintf(stderr, "first_invocations: out of memory\n");
        return 1;
    }
    int team = 0;
#pragma omp parallel num_threads(threads)
    {
#pragma omp master
        team = omp_get_num_threads();
    }
    const double t0 = omp_get_wtime();
    const uint64_t sum = run(&o, work, threads, pass_s);
    const double wall = omp_get_wtime() - t0;

    printf("{\"program\": \"first_invocations\", \"form\": \"%s\", \"sites\": %d, \"repeats\": %ld, "
           "\"loop_us\": %g, \"iterations\": %ld, \"imbalance\": %g, \"seed\": %" PRIu64 ", "
           "\"threads\": %d, \"team\": %d, \"units_per_ns\": %.6f, \"calibrated\": %s, "
           "\"wall_s\": %.9f, \"per_invocation_us\": %.6f, \"run_sched_var\": ",
           o.combined ? "combined" : "region", o.sites, o.repeats, o.loop_us, o.iterations, o.imbalance,
           o.seed, threads, team, o.units_per_ns, calibrated ? "true" : "false", wall,
           wall / ((double)o.sites * (double)o.repeats) * 1e6);
    print_schedule();
    printf(", \"pass_s\": [");
    for (long r = 0; r < o.repeats; ++r) printf("%s%.9f", r ? ", " : "", pass_s[r]);
    printf("], \"checksum\": \"%016" PRIx64 "\"}\n", sum);
    free(pass_s);
    return 0;
}

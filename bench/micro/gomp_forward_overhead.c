/* gomp_forward_overhead: many short OpenMP worksharing loops, timed as a whole, so that the
 * cost a libgomp interposer adds to each loop shows up against plain libgomp (issue 5: `aloe
 * run --schedule forward` must add under 1% to loops it only forwards). An ordinary OpenMP
 * program: built with -fopenmp, not linked to aloe; gomp_forward_overhead.py runs it plain
 * and under `aloe run`, interleaved.
 *
 * One parallel region (--form region; the default) runs --loops rounds of
 *     #pragma omp for schedule(dynamic, chunk)     over --iterations iterations
 *     #pragma omp for schedule(runtime)            over --iterations iterations
 * (--kinds picks either or both); --form combined makes each loop its own
 * `#pragma omp parallel for`. Iteration i of loop l spins --work-iters steps of a dependent
 * floating-point recurrence (--work-ns converts nanoseconds into steps by a calibration at
 * start; the driver calibrates once and passes --work-iters, so every run does the same work).
 * A warm-up region of --warmup-loops rounds starts the threads before the clock does.
 *
 * Output: one JSON line on stdout with the settings, wall_s (the timed region), per_loop_us
 * and a checksum (the sum of every iteration's result bits, mod 2^64: the same whichever
 * thread ran what, so a run under an interposer must give the plain run's value).
 * `--calibrate` prints {"units_per_ns": …} and exits. Exit status: 0 ok, 2 bad command line.
 */
#include <omp.h>

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct options {
    long loops;
    long iterations;
    double work_ns;      /* < 0: not given */
    long work_iters;     /* < 0: not given */
    long chunk;
    long warmup_loops;
    int threads;         /* 0: omp_get_max_threads() */
    int dynamic;         /* run the schedule(dynamic, chunk) loops */
    int runtime;         /* run the schedule(runtime) loops */
    int combined;        /* each loop its own parallel for */
    int calibrate;
};

static void usage(FILE* out) {
    fprintf(out,
            "usage: gomp_forward_overhead [--loops K] [--iterations N] [--work-ns W | --work-iters U]\n"
            "                             [--chunk C] [--kinds dynamic,runtime] [--form region|combined]\n"
            "                             [--warmup-loops K0] [--threads T] [--calibrate]\n"
            "  --loops K         rounds of loops, each one loop of every kind (default 2000)\n"
            "  --iterations N    iterations per loop (default 4096)\n"
            "  --work-ns W       work per iteration in ns, calibrated at start (default 200)\n"
            "  --work-iters U    work per iteration in recurrence steps (overrides --work-ns)\n"
            "  --chunk C         chunk of the schedule(dynamic, C) loops (default 16)\n"
            "  --kinds LIST      dynamic, runtime or both (default dynamic,runtime)\n"
            "  --form F          region: one parallel region around all loops (default);\n"
            "                    combined: every loop a `parallel for` of its own\n"
            "  --warmup-loops K0 untimed rounds before the clock starts (default 50)\n"
            "  --threads T       team size (default: omp_get_max_threads(), OMP_NUM_THREADS)\n"
            "  --calibrate       print {\"units_per_ns\": …} and exit\n"
            "schedule(runtime) loops follow OMP_SCHEDULE (or omp_set_schedule's caller).\n");
}

static int bad(const char* flag, const char* value) {
    fprintf(stderr, "gomp_forward_overhead: %s '%s' is not valid (see --help)\n", flag, value ? value : "");
    return 2;
}

static int parse_long(const char* text, long low, long* out) {
    char* end = NULL;
    const long v = strtol(text, &end, 10);
    if (text[0] == '\0' || *end != '\0' || v < low) return 0;
    *out = v;
    return 1;
}

static int parse_options(int argc, char** argv, struct options* o) {
    *o = (struct options){.loops = 2000, .iterations = 4096, .work_ns = 200.0, .work_iters = -1,
                          .chunk = 16, .warmup_loops = 50, .threads = 0, .dynamic = 1, .runtime = 1,
                          .combined = 0, .calibrate = 0};
    for (int i = 1; i < argc; ++i) {
        const char* flag = argv[i];
        if (strcmp(flag, "--help") == 0 || strcmp(flag, "-h") == 0) {
            usage(stdout);
            exit(0);
        }
        if (strcmp(flag, "--calibrate") == 0) {
            o->calibrate = 1;
            continue;
        }
        if (i + 1 >= argc) return bad(flag, "(missing value)");
        const char* value = argv[++i];
        long n = 0;
        if (strcmp(flag, "--loops") == 0) {
            if (!parse_long(value, 1, &o->loops)) return bad(flag, value);
        } else if (strcmp(flag, "--iterations") == 0) {
            if (!parse_long(value, 1, &o->iterations)) return bad(flag, value);
        } else if (strcmp(flag, "--work-ns") == 0) {
            char* end = NULL;
            o->work_ns = strtod(value, &end);
            if (value[0] == '\0' || *end != '\0' || !(o->work_ns >= 0)) return bad(flag, value);
        } else if (strcmp(flag, "--work-iters") == 0) {
            if (!parse_long(value, 0, &o->work_iters)) return bad(flag, value);
        } else if (strcmp(flag, "--chunk") == 0) {
            if (!parse_long(value, 1, &o->chunk)) return bad(flag, value);
        } else if (strcmp(flag, "--warmup-loops") == 0) {
            if (!parse_long(value, 0, &o->warmup_loops)) return bad(flag, value);
        } else if (strcmp(flag, "--threads") == 0) {
            if (!parse_long(value, 1, &n) || n > 4096) return bad(flag, value);
            o->threads = (int)n;
        } else if (strcmp(flag, "--kinds") == 0) {
            o->dynamic = strcmp(value, "dynamic") == 0 || strcmp(value, "dynamic,runtime") == 0 ||
                         strcmp(value, "runtime,dynamic") == 0;
            o->runtime = strcmp(value, "runtime") == 0 || strcmp(value, "dynamic,runtime") == 0 ||
                         strcmp(value, "runtime,dynamic") == 0;
            if (!o->dynamic && !o->runtime) return bad(flag, value);
        } else if (strcmp(flag, "--form") == 0) {
            if (strcmp(value, "region") == 0) o->combined = 0;
            else if (strcmp(value, "combined") == 0) o->combined = 1;
            else return bad(flag, value);
        } else {
            fprintf(stderr, "gomp_forward_overhead: unknown flag '%s' (see --help)\n", flag);
            return 2;
        }
    }
    return 0;
}

/* `units` steps of a dependent recurrence from a start drawn from `seed`; not inlined, so
 * every loop form runs the same machine code per iteration. */
__attribute__((noinline)) static double spin(uint64_t seed, long units) {
    double a = 1.0 + (double)(seed & 0xfffff) * 0x1p-21;
    for (long u = 0; u < units; ++u) a = a * 0.9999999 + 1e-7;
    return a;
}

static uint64_t bits_of(double x) {
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

/* The value of iteration i of loop l: its result's bits (added mod 2^64 by the caller). */
static uint64_t body(long l, long i, long units) {
    return bits_of(spin((uint64_t)l * 0x9e3779b97f4a7c15ULL + (uint64_t)i, units));
}

/* Recurrence steps per nanosecond on one thread: the fastest of 5 timed batches. */
static double calibrate(void) {
    const long units = 2000000;
    double best = 1e30;
    volatile double sink = 0;
    for (int r = 0; r < 5; ++r) {
        const double t0 = omp_get_wtime();
        sink += spin((uint64_t)r, units);
        const double t = omp_get_wtime() - t0;
        if (t < best) best = t;
    }
    (void)sink;
    return (double)units / (best * 1e9);
}

/* `loops` rounds of the selected loops; returns the sum of the iterations' values. */
static uint64_t run_loops(const struct options* o, long first, long loops, long units, int threads) {
    uint64_t sum = 0;
    const long n = o->iterations;
    const int chunk = (int)o->chunk;
    if (!o->combined) {
#pragma omp parallel num_threads(threads) reduction(+ : sum)
        for (long l = first; l < first + loops; ++l) {
            if (o->dynamic) {
#pragma omp for schedule(dynamic, chunk)
                for (long i = 0; i < n; ++i) sum += body(2 * l, i, units);
            }
            if (o->runtime) {
#pragma omp for schedule(runtime)
                for (long i = 0; i < n; ++i) sum += body(2 * l + 1, i, units);
            }
        }
    } else {
        for (long l = first; l < first + loops; ++l) {
            if (o->dynamic) {
#pragma omp parallel for schedule(dynamic, chunk) num_threads(threads) reduction(+ : sum)
                for (long i = 0; i < n; ++i) sum += body(2 * l, i, units);
            }
            if (o->runtime) {
#pragma omp parallel for schedule(runtime) num_threads(threads) reduction(+ : sum)
                for (long i = 0; i < n; ++i) sum += body(2 * l + 1, i, units);
            }
        }
    }
    return sum;
}

static const char* kind_name(omp_sched_t kind) {
    switch ((int)((unsigned)kind & 0x7fffffffU)) {
    case omp_sched_static: return "static";
    case omp_sched_dynamic: return "dynamic";
    case omp_sched_guided: return "guided";
    case omp_sched_auto: return "auto";
    default: return "other";
    }
}

int main(int argc, char** argv) {
    struct options o;
    const int status = parse_options(argc, argv, &o);
    if (status != 0) return status;
    if (o.calibrate) {
        printf("{\"units_per_ns\": %.6f}\n", calibrate());
        return 0;
    }
    double units_per_ns = -1;
    long units = o.work_iters;
    if (units < 0) {
        units_per_ns = calibrate();
        units = (long)(o.work_ns * units_per_ns + 0.5);
    }
    const int threads = o.threads > 0 ? o.threads : omp_get_max_threads();
    omp_sched_t kind;
    int sched_chunk = 0;
    omp_get_schedule(&kind, &sched_chunk);

    const uint64_t warm = run_loops(&o, 0, o.warmup_loops, units, threads);
    const double t0 = omp_get_wtime();
    const uint64_t sum = run_loops(&o, o.warmup_loops, o.loops, units, threads);
    const double wall = omp_get_wtime() - t0;
    const long per_round = (long)o.dynamic + (long)o.runtime;
    const long total = o.loops * per_round;

    printf("{\"program\": \"gomp_forward_overhead\", \"form\": \"%s\", \"kinds\": \"%s\", "
           "\"loops\": %ld, \"loops_total\": %ld, \"iterations\": %ld, \"chunk\": %ld, "
           "\"work_iters\": %ld, \"units_per_ns\": ",
           o.combined ? "combined" : "region",
           o.dynamic && o.runtime ? "dynamic,runtime" : o.dynamic ? "dynamic" : "runtime", o.loops, total,
           o.iterations, o.chunk, units);
    if (units_per_ns > 0) printf("%.6f", units_per_ns);
    else printf("null");
    printf(", \"threads\": %d, \"run_sched_var\": \"%s%s,%d\", \"warmup_loops\": %ld, "
           "\"wall_s\": %.9f, \"per_loop_us\": %.6f, \"checksum\": \"%016" PRIx64 "\", "
           "\"warmup_checksum\": \"%016" PRIx64 "\"}\n",
           threads, ((unsigned)kind & 0x80000000U) ? "monotonic:" : "", kind_name(kind), sched_chunk,
           o.warmup_loops, wall, wall / (double)total * 1e6, sum, warm);
    return 0;
}

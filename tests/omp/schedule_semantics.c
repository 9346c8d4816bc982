/* Schedule semantics OpenMP guarantees and a runtime must keep, whatever runs the loops:
 *
 *  - static mapping: two static loops of the same count and chunk in one region give each
 *    thread the same iterations. GCC inlines schedule(static[, c]) loops with libgomp's
 *    formula, so a schedule(runtime) loop whose run-sched-var is static must give thread t
 *    exactly the iterations the inlined loop gave it. Checked with a static nowait loop
 *    recording who ran each iteration, then a runtime nowait loop over the same count
 *    (schedule(runtime), monotonic:runtime and nonmonotonic:runtime) checking each of its
 *    iterations runs on that thread and on the thread libgomp's formula names (without a
 *    chunk: q = n/p, r = n%p, thread t < r runs q+1 iterations from t(q+1), the others q
 *    from tq+r; with chunk c: chunk k on thread k mod p). Run-sched-var comes from
 *    OMP_SCHEDULE (the first part, before the program sets anything; CMakeLists.txt runs
 *    this program with OMP_SCHEDULE=static, static,1 and monotonic:dynamic,4 besides the
 *    usual dynamic,2) and from omp_set_schedule: static,1, static, static,7, and
 *    static|omp_sched_monotonic (what OMP_SCHEDULE=static,1 gives: omp_get_schedule then
 *    returns a negative kind); also a combined `parallel for schedule(runtime)`.
 *  - monotonic schedules: each thread runs its chunks in increasing order, for
 *    schedule(monotonic:dynamic, 4), schedule(monotonic:guided), and schedule(runtime) after
 *    omp_set_schedule(omp_sched_dynamic | omp_sched_monotonic, 4) and with guided|monotonic,
 *    with one thread held back so the others run ahead.
 *  - omp_get_schedule returns the kind and chunk omp_set_schedule stored, flag included.
 *
 * Every loop also runs each iteration exactly once (omp_conf.h). The output is the same
 * under any schedule: labels, counts and sums; a failed check goes to stderr.
 */
#include "omp_conf.h"

static volatile long v_offset = 0;
static long V(long x) { return x + v_offset; }

enum { N_MAX = 4096 };
static int owner[N_MAX];

/* The thread libgomp's static schedule gives iteration i of n on p threads. */
static int static_owner(long i, long n, int p, int chunk) {
    if (chunk > 0) return (int)((i / chunk) % p);
    const long q = n / p, r = n % p;
    return i < r * (q + 1) ? (int)(i / (q + 1)) : (int)(r + (i - r * (q + 1)) / q);
}

/* Keeps a thread busy for a while without sleeping (the order of arrival is what matters). */
static void spin(long units) {
    volatile long sink = 0;
    for (long k = 0; k < units * 1000; ++k) sink += k;
}

enum modifier { plain, monotonic, nonmonotonic };
static const char *const modifier_names[] = {"runtime", "monotonic:runtime", "nonmonotonic:runtime"};

/* One iteration of the runtime loop: who should run it, and that it ran. */
static void runtime_iteration(long i, long n, int chunk, int me, int p, long *moved, long *off_formula) {
    if (__atomic_load_n(&owner[i], __ATOMIC_RELAXED) != me) ++*moved;
    if (static_owner(i, n, p, chunk) != me) ++*off_formula;
}

/* In one region: schedule(static[, chunk]) nowait records who runs each iteration; then a
 * runtime loop (whose run-sched-var the caller made static with this chunk), nowait, over
 * the same count. */
static void static_then_runtime(const char *source, long n, int chunk, enum modifier m) {
    char clause[32], label[160];
    if (chunk > 0) snprintf(clause, sizeof clause, "static, %d", chunk);
    else snprintf(clause, sizeof clause, "static");
    snprintf(label, sizeof label, "%s: schedule(%s) nowait, then schedule(%s) nowait", source, clause,
             modifier_names[m]);
    conf_begin();
    long moved = 0, off_formula = 0;
#pragma omp parallel reduction(+ : moved, off_formula)
    {
        const int me = omp_get_thread_num(), p = omp_get_num_threads();
        if (chunk > 0) {
#pragma omp for schedule(static, chunk) nowait
            for (long i = 0; i < n; ++i) __atomic_store_n(&owner[i], me, __ATOMIC_RELAXED);
        } else {
#pragma omp for schedule(static) nowait
            for (long i = 0; i < n; ++i) __atomic_store_n(&owner[i], me, __ATOMIC_RELAXED);
        }
        switch (m) {
            case plain:
#pragma omp for schedule(runtime) nowait
                for (long i = 0; i < n; ++i) {
                    runtime_iteration(i, n, chunk, me, p, &moved, &off_formula);
                    conf_hit_monotonic(i, 0, (unsigned long long)i);
                }
                break;
            case monotonic:
#pragma omp for schedule(monotonic : runtime) nowait
                for (long i = 0; i < n; ++i) {
                    runtime_iteration(i, n, chunk, me, p, &moved, &off_formula);
                    conf_hit_monotonic(i, 0, (unsigned long long)i);
                }
                break;
            case nonmonotonic:
#pragma omp for schedule(nonmonotonic : runtime) nowait
                for (long i = 0; i < n; ++i) {
                    runtime_iteration(i, n, chunk, me, p, &moved, &off_formula);
                    conf_hit(i, 0, (unsigned long long)i);
                }
                break;
        }
    }
    CONF_CHECK(moved == 0, label, "%ld iterations ran on another thread than in the static loop", moved);
    CONF_CHECK(off_formula == 0, label, "%ld iterations ran on another thread than OpenMP's static schedule names",
               off_formula);
    conf_end(label, n);
}

/* Every runtime form after a static loop of the same count, for several counts. */
static void static_pairs(const char *source, int chunk) {
    const long counts[] = {V(1000), V(10), V(2), V(1), V(0), V(4093)};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; ++c)
        for (int m = plain; m <= nonmonotonic; ++m) static_then_runtime(source, counts[c], chunk, (enum modifier)m);
}

/* A combined `parallel for schedule(runtime)` (constant bounds: GOMP_parallel_loop_*) whose
 * run-sched-var is static: each iteration on the thread OpenMP's formula names. */
static int combined_chunk;
static long combined_off;
static void combined_static(const char *source) {
    char label[160];
    snprintf(label, sizeof label, "%s: parallel for schedule(runtime) is OpenMP's static", source);
    conf_begin();
    combined_off = 0;
#pragma omp parallel for schedule(runtime)
    for (long i = 0; i < 1000; ++i) {
        if (static_owner(i, 1000, omp_get_num_threads(), combined_chunk) != omp_get_thread_num())
            __atomic_fetch_add(&combined_off, 1, __ATOMIC_RELAXED);
        conf_hit(i, 0, (unsigned long long)i);
    }
    CONF_CHECK(combined_off == 0, label, "%ld iterations ran on another thread than OpenMP's static schedule names",
               combined_off);
    conf_end(label, 1000);
}

/* A runtime loop whose schedule is monotonic: each thread's iterations in increasing order,
 * thread 0 held back at first so the others run ahead. */
static void monotonic_runtime(const char *source) {
    const long n = V(3001);
    char label[160];
    snprintf(label, sizeof label, "%s: schedule(runtime), monotonic", source);
    conf_begin();
#pragma omp parallel
    {
        if (omp_get_thread_num() == 0) spin(200);
#pragma omp for schedule(runtime)
        for (long i = 0; i < n; ++i) {
            if (i % 97 == 0) spin(2);
            conf_hit_monotonic(i, 0, (unsigned long long)i);
        }
    }
    conf_end(label, n);
    snprintf(label, sizeof label, "%s: schedule(monotonic:runtime)", source);
    conf_begin();
#pragma omp parallel
    {
        if (omp_get_thread_num() == 0) spin(200);
#pragma omp for schedule(monotonic : runtime)
        for (long i = 0; i < n; ++i) {
            if (i % 97 == 0) spin(2);
            conf_hit_monotonic(i, 0, (unsigned long long)i);
        }
    }
    conf_end(label, n);
}

/* The schedule the environment gave, before the program sets one. */
static void from_environment(void) {
    omp_sched_t kind;
    int chunk;
    omp_get_schedule(&kind, &chunk);
    const unsigned base = (unsigned)kind & ~(unsigned)omp_sched_monotonic;
    const int flag = ((unsigned)kind & (unsigned)omp_sched_monotonic) != 0;
    printf("OMP_SCHEDULE: omp_get_schedule gives kind %#x chunk %d\n", (unsigned)kind, chunk);
    if (base == (unsigned)omp_sched_static) {
        static_pairs("OMP_SCHEDULE", chunk > 0 ? chunk : 0);
        combined_chunk = chunk > 0 ? chunk : 0;
        combined_static("OMP_SCHEDULE");
    }
    if (flag || base == (unsigned)omp_sched_static) monotonic_runtime("OMP_SCHEDULE");
}

/* omp_set_schedule(kind, chunk), and omp_get_schedule gives it back. */
static void set_schedule(omp_sched_t kind, int chunk, const char *name) {
    omp_set_schedule(kind, chunk);
    omp_sched_t got;
    int got_chunk;
    omp_get_schedule(&got, &got_chunk);
    char label[96];
    snprintf(label, sizeof label, "omp_set_schedule(%s)", name);
    CONF_CHECK(got == kind, label, "omp_get_schedule gives kind %#x, not %#x", (unsigned)got, (unsigned)kind);
    printf("%s: omp_get_schedule gives kind %#x chunk %d\n", label, (unsigned)got, got_chunk);
}

/* Loops whose clause asks for a monotonic schedule, with thread 0 held back. */
static void monotonic_clauses(void) {
    const long n = V(3001);
    conf_begin();
#pragma omp parallel
    {
        if (omp_get_thread_num() == 0) spin(200);
#pragma omp for schedule(monotonic : dynamic, 4)
        for (long i = 0; i < n; ++i) {
            if (i % 97 == 0) spin(2);
            conf_hit_monotonic(i, 0, (unsigned long long)i);
        }
    }
    conf_end("schedule(monotonic:dynamic, 4)", n);
    conf_begin();
#pragma omp parallel
    {
        if (omp_get_thread_num() == 0) spin(200);
#pragma omp for schedule(monotonic : guided)
        for (long i = 0; i < n; ++i) {
            if (i % 97 == 0) spin(2);
            conf_hit_monotonic(i, 0, (unsigned long long)i);
        }
    }
    conf_end("schedule(monotonic:guided)", n);
}

int main(void) {
    from_environment();

    set_schedule(omp_sched_static, 1, "static, 1");
    static_pairs("omp_set_schedule(static, 1)", 1);
    set_schedule(omp_sched_static, 0, "static, 0");
    static_pairs("omp_set_schedule(static, 0)", 0);
    combined_chunk = 0;
    combined_static("omp_set_schedule(static, 0)");
    set_schedule(omp_sched_static, 7, "static, 7");
    static_pairs("omp_set_schedule(static, 7)", 7);
    combined_chunk = 7;
    combined_static("omp_set_schedule(static, 7)");
    set_schedule((omp_sched_t)(omp_sched_static | omp_sched_monotonic), 1, "static | monotonic, 1");
    static_pairs("omp_set_schedule(static | monotonic, 1)", 1);
    monotonic_runtime("omp_set_schedule(static | monotonic, 1)");

    set_schedule((omp_sched_t)(omp_sched_dynamic | omp_sched_monotonic), 4, "dynamic | monotonic, 4");
    monotonic_runtime("omp_set_schedule(dynamic | monotonic, 4)");
    set_schedule((omp_sched_t)(omp_sched_guided | omp_sched_monotonic), 3, "guided | monotonic, 3");
    monotonic_runtime("omp_set_schedule(guided | monotonic, 3)");

    monotonic_clauses();
    return conf_finish("schedule_semantics");
}

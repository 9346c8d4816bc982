/* Team sizes, queries and the constructs libgomp runs itself, around runtime loops.
 *
 *  - the default region has omp_get_max_threads() threads (OMP_NUM_THREADS when set);
 *    num_threads(k) and omp_set_num_threads(k) give exactly k, numbered 0..k-1 (these
 *    programs are not malleable: an explicit count must be respected);
 *  - omp_in_parallel, omp_get_level, omp_get_active_level, omp_get_ancestor_thread_num,
 *    omp_get_team_size, omp_get_schedule after omp_set_schedule;
 *  - nested regions with the default max-active-levels (inner teams of one) and with
 *    omp_set_max_active_levels(2), with worksharing loops inside the inner teams;
 *  - omp_set_num_threads inside a region changes the calling thread's ICV only;
 *    threadprivate values persist between regions, copyin;
 *  - regions started inside tasks, the same loop site met by two inner teams at once, and
 *    two pthreads of the program each running its own OpenMP regions and loops at once;
 *  - single (with copyprivate), sections, parallel sections, critical, atomic, masked,
 *    task/taskwait, taskgroup, taskloop (with a reduction), tasks created from a loop's
 *    iterations, and host teams with distribute parallel for.
 *
 * Output depends on none of the thread counts (OMP_NUM_THREADS varies between runs of the
 * suite), only on whether each rule held.
 */
#include "omp_conf.h"

#include <pthread.h>

static volatile long v_offset = 0;
static long V(long x) { return x + v_offset; }

static const char *yes(int ok) { return ok ? "yes" : "NO"; }

/* Runs a region of `k` threads (k = 0: no clause) and checks its numbering. Returns the
 * size seen by the threads, or -1 if the numbering was wrong. */
static int team_of(int k) {
    int seen[CONF_MAX_THREADS];
    int size = 0, bad = 0;
    memset(seen, 0, sizeof seen);
    if (k > 0) {
#pragma omp parallel num_threads(k)
        {
            const int t = omp_get_thread_num();
            if (t >= 0 && t < CONF_MAX_THREADS) __atomic_fetch_add(&seen[t], 1, __ATOMIC_RELAXED);
#pragma omp single
            size = omp_get_num_threads();
            if (!omp_in_parallel() && omp_get_num_threads() > 1) __atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
        }
    } else {
#pragma omp parallel
        {
            const int t = omp_get_thread_num();
            if (t >= 0 && t < CONF_MAX_THREADS) __atomic_fetch_add(&seen[t], 1, __ATOMIC_RELAXED);
#pragma omp single
            size = omp_get_num_threads();
        }
    }
    for (int t = 0; t < CONF_MAX_THREADS; ++t)
        if (seen[t] != (t < size ? 1 : 0)) ++bad;
    return bad ? -1 : size;
}

static void team_sizes(void) {
    CONF_CHECK(!omp_in_parallel(), "omp_in_parallel", "true outside any region");
    CONF_CHECK(omp_get_level() == 0, "omp_get_level", "%d outside any region", omp_get_level());
    CONF_CHECK(omp_get_num_threads() == 1, "omp_get_num_threads", "%d outside any region", omp_get_num_threads());
    CONF_CHECK(omp_get_thread_num() == 0, "omp_get_thread_num", "%d outside any region", omp_get_thread_num());

    const int max = omp_get_max_threads();
    const int def = team_of(0);
    CONF_CHECK(def == max, "default region", "%d threads (-1: bad numbering), omp_get_max_threads() is %d", def, max);
    const char *env = getenv("OMP_NUM_THREADS");
    if (env && strspn(env, "0123456789") == strlen(env) && *env) {
        CONF_CHECK(def == atoi(env), "default region", "%d threads, OMP_NUM_THREADS is %s", def, env);
    }
    printf("default region: omp_get_num_threads() == omp_get_max_threads(): %s\n", yes(def == max));

    for (int k = 1; k <= 5; ++k) {
        const int got = team_of(k);
        CONF_CHECK(got == k, "num_threads clause", "num_threads(%d) gave %d threads (-1: bad numbering)", k, got);
        printf("num_threads(%d): %d threads, numbered 0..%d once each\n", k, got, got - 1);
    }

    omp_set_num_threads(4);
    CONF_CHECK(omp_get_max_threads() == 4, "omp_set_num_threads", "omp_get_max_threads() %d after setting 4",
               omp_get_max_threads());
    int got = team_of(0);
    CONF_CHECK(got == 4, "omp_set_num_threads", "a region has %d threads after omp_set_num_threads(4)", got);
    printf("omp_set_num_threads(4): max %d, region %d\n", omp_get_max_threads(), got);

    /* A runtime loop in a region sized by omp_set_num_threads, and a combined one. */
    const long n = V(1000);
    int size = 0;
    conf_begin();
#pragma omp parallel
    {
#pragma omp for schedule(dynamic, 3)
        for (long i = 0; i < n; ++i) conf_hit(i, 0, (unsigned long long)i);
#pragma omp single
        size = omp_get_num_threads();
    }
    conf_end("dynamic,3 in a region of omp_set_num_threads(4)", n);
    CONF_CHECK(size == 4, "omp_set_num_threads", "the loop's region had %d threads", size);

    omp_set_num_threads(2);
    conf_begin();
    size = 0;
#pragma omp parallel for schedule(dynamic)
    for (int i = 0; i < 1000; ++i) {
        conf_hit(i, 0, (unsigned long long)i);
        __atomic_store_n(&size, omp_get_num_threads(), __ATOMIC_RELAXED);
    }
    conf_end("parallel for dynamic const after omp_set_num_threads(2)", 1000);
    CONF_CHECK(size == 2, "omp_set_num_threads", "the combined loop's region had %d threads, not 2", size);
    printf("combined loop team after omp_set_num_threads(2): %d\n", size);

    /* num_threads beats omp_set_num_threads. */
    conf_begin();
    size = 0;
#pragma omp parallel num_threads(3)
    {
#pragma omp for schedule(guided)
        for (long i = 0; i < n; ++i) conf_hit(i, 0, (unsigned long long)i);
#pragma omp single
        size = omp_get_num_threads();
    }
    conf_end("guided in num_threads(3)", n);
    CONF_CHECK(size == 3, "num_threads(3)", "%d threads", size);
    omp_set_num_threads(max);
    CONF_CHECK(omp_get_max_threads() == max, "omp_set_num_threads", "could not restore %d", max);
}

static void levels(void) {
    int ok = 1;
#pragma omp parallel num_threads(3) reduction(&& : ok)
    {
        ok = omp_in_parallel() && omp_get_level() == 1 && omp_get_active_level() == 1 &&
             omp_get_ancestor_thread_num(0) == 0 && omp_get_ancestor_thread_num(1) == omp_get_thread_num() &&
             omp_get_team_size(0) == 1 && omp_get_team_size(1) == 3 && omp_get_team_size(2) == -1;
    }
    CONF_CHECK(ok, "levels", "omp_in_parallel/get_level/get_active_level/ancestor/team_size wrong at level 1");
    printf("level-1 queries: %s\n", yes(ok));

    int one = 1;
#pragma omp parallel num_threads(1) reduction(&& : one)
    one = !omp_in_parallel() && omp_get_level() == 1 && omp_get_active_level() == 0;
    CONF_CHECK(one, "levels", "a num_threads(1) region is not an inactive level-1 region");
    printf("num_threads(1) region is inactive: %s\n", yes(one));
}

/* Nested regions: default max-active-levels (1 when OMP_NUM_THREADS is one number), then 2. */
enum { NEST_N = 700 };
static int nest_hits[8][NEST_N];

static void nested(void) {
    const long n = V(NEST_N);
    int inner_sizes[8], inner_levels[8], bad = 0;

    CONF_CHECK(omp_get_max_active_levels() == 1, "max-active-levels", "default is %d, not 1",
               omp_get_max_active_levels());
    memset(nest_hits, 0, sizeof nest_hits);
#pragma omp parallel num_threads(2)
    {
        const int o = omp_get_thread_num();
#pragma omp parallel num_threads(3)
        {
            if (omp_get_thread_num() == 0) {
                inner_sizes[o] = omp_get_num_threads();
                inner_levels[o] = omp_get_level() * 10 + omp_get_active_level();
            }
#pragma omp for schedule(dynamic, 2)
            for (long i = 0; i < n; ++i) __atomic_fetch_add(&nest_hits[o][i], 1, __ATOMIC_RELAXED);
        }
    }
    for (int o = 0; o < 2; ++o) {
        for (long i = 0; i < NEST_N; ++i) bad += nest_hits[o][i] != 1;
        CONF_CHECK(inner_sizes[o] == 1 && inner_levels[o] == 21, "nested, default levels",
                   "inner team of outer thread %d: %d threads, level*10+active %d (want 1 and 21)", o, inner_sizes[o],
                   inner_levels[o]);
    }
    CONF_CHECK(bad == 0, "nested, default levels", "%d loop iterations in inner teams did not run once", bad);
    printf("nested, default max-active-levels: inner teams of %d, level %d, active level %d\n", inner_sizes[0],
           inner_levels[0] / 10, inner_levels[0] % 10);

    omp_set_max_active_levels(2);
    CONF_CHECK(omp_get_max_active_levels() == 2, "omp_set_max_active_levels", "reads %d", omp_get_max_active_levels());
    memset(nest_hits, 0, sizeof nest_hits);
    int ancestors_ok = 1;
    bad = 0;
#pragma omp parallel num_threads(2) reduction(&& : ancestors_ok)
    {
        const int o = omp_get_thread_num();
        int inner_ok = 1;
#pragma omp parallel num_threads(3) reduction(&& : inner_ok)
        {
            if (omp_get_thread_num() == 0) {
                inner_sizes[o] = omp_get_num_threads();
                inner_levels[o] = omp_get_level() * 10 + omp_get_active_level();
            }
            inner_ok = omp_get_ancestor_thread_num(1) == o && omp_get_team_size(1) == 2 && omp_get_team_size(2) == 3;
            /* Two inner teams run their loops at once; nowait chains inside each. */
#pragma omp for schedule(dynamic, 2) nowait
            for (long i = 0; i < n; ++i) __atomic_fetch_add(&nest_hits[2 * o][i], 1, __ATOMIC_RELAXED);
#pragma omp for schedule(guided) nowait
            for (long i = 0; i < n; ++i) __atomic_fetch_add(&nest_hits[2 * o + 1][i], 1, __ATOMIC_RELAXED);
#pragma omp for schedule(runtime)
            for (long i = 0; i < n; ++i) __atomic_fetch_add(&nest_hits[4 + o][i], 1, __ATOMIC_RELAXED);
        }
        ancestors_ok = inner_ok;
        /* A loop of the outer team after its inner regions. */
#pragma omp for schedule(dynamic)
        for (long i = 0; i < n; ++i) __atomic_fetch_add(&nest_hits[6][i], 1, __ATOMIC_RELAXED);
    }
    for (int a = 0; a < 7; ++a)
        for (long i = 0; i < NEST_N; ++i) bad += nest_hits[a][i] != 1;
    for (int o = 0; o < 2; ++o)
        CONF_CHECK(inner_sizes[o] == 3 && inner_levels[o] == 22, "nested, 2 active levels",
                   "inner team of outer thread %d: %d threads, level*10+active %d (want 3 and 22)", o, inner_sizes[o],
                   inner_levels[o]);
    CONF_CHECK(bad == 0, "nested, 2 active levels", "%d loop iterations did not run once", bad);
    CONF_CHECK(ancestors_ok, "nested, 2 active levels", "omp_get_ancestor_thread_num/omp_get_team_size wrong");
    printf("nested, 2 active levels: inner teams of %d and %d, level %d, active level %d, loops %s\n", inner_sizes[0],
           inner_sizes[1], inner_levels[0] / 10, inner_levels[0] % 10, yes(bad == 0 && ancestors_ok));

    /* Inner regions without num_threads take the nthreads ICV, like outer ones. */
    int inner_default = 0, outer_max = 0;
#pragma omp parallel num_threads(2)
    {
#pragma omp single
        outer_max = omp_get_max_threads();
#pragma omp parallel
        {
#pragma omp single
            __atomic_store_n(&inner_default, omp_get_num_threads(), __ATOMIC_RELAXED);
        }
    }
    CONF_CHECK(inner_default == outer_max, "nested default size", "inner region of %d threads, ICV %d", inner_default,
               outer_max);
    printf("nested region without num_threads has omp_get_max_threads() threads: %s\n",
           yes(inner_default == outer_max));
    omp_set_max_active_levels(1);
}

static void schedules(void) {
    static const struct {
        omp_sched_t kind;
        int chunk;
        const char *name;
        int monotonic;
    } cases[] = {
        {omp_sched_dynamic, 3, "dynamic,3", 0},
        {omp_sched_guided, 5, "guided,5", 0},
        {omp_sched_static, 4, "static,4", 1},
        {omp_sched_static, 0, "static", 1},
        {omp_sched_auto, 0, "auto", 0},
        {(omp_sched_t)(omp_sched_dynamic | omp_sched_monotonic), 2, "monotonic:dynamic,2", 1},
        {omp_sched_dynamic, 1000000, "dynamic,1000000", 0},
    };
    const long n = V(900);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        omp_set_schedule(cases[c].kind, cases[c].chunk);
        omp_sched_t kind;
        int chunk;
        omp_get_schedule(&kind, &chunk);
        char label[96];
        snprintf(label, sizeof label, "omp_set_schedule(%s)", cases[c].name);
        CONF_CHECK(kind == cases[c].kind, label, "omp_get_schedule gives kind %#x", (unsigned)kind);
        printf("%s: omp_get_schedule gives kind %#x chunk %d\n", label, (unsigned)kind, chunk);

        snprintf(label, sizeof label, "schedule(runtime) after omp_set_schedule(%s)", cases[c].name);
        conf_begin();
#pragma omp parallel
        {
            if (cases[c].monotonic) {
#pragma omp for schedule(runtime)
                for (long i = 0; i < n; ++i) conf_hit_monotonic(i, 0, (unsigned long long)i);
            } else {
#pragma omp for schedule(nonmonotonic : runtime)
                for (long i = 0; i < n; ++i) conf_hit(i, 0, (unsigned long long)i);
            }
        }
        conf_end(label, n);
    }
}

static long fib(int k) {
    if (k < 2) return k;
    long a, b;
#pragma omp task shared(a) if (k > 12)
    a = fib(k - 1);
#pragma omp task shared(b) if (k > 12)
    b = fib(k - 2);
#pragma omp taskwait
    return a + b;
}

static void libgomp_constructs(void) {
    const long n = V(1200);

    /* single with copyprivate, sections, critical, atomic, masked, around runtime loops. */
    int broadcast_ok = 1, singles = 0, sections = 0, crit = 0, team = 0, masked = 0;
    long atomic_sum = 0, captured_max = -1;
    conf_begin();
#pragma omp parallel reduction(&& : broadcast_ok)
    {
        int token;
#pragma omp single copyprivate(token)
        {
            token = 4242;
            ++singles;
        }
        broadcast_ok = token == 4242;
#pragma omp for schedule(dynamic, 4) nowait
        for (long i = 0; i < n; ++i) {
            conf_hit(i, 0, (unsigned long long)i);
#pragma omp atomic
            atomic_sum += i % 11;
            long old;
#pragma omp atomic capture
            {
                old = captured_max;
                captured_max = captured_max > i ? captured_max : i;
            }
            (void)old;
        }
#pragma omp sections
        {
#pragma omp section
            __atomic_fetch_add(&sections, 1, __ATOMIC_RELAXED);
#pragma omp section
            __atomic_fetch_add(&sections, 20, __ATOMIC_RELAXED);
#pragma omp section
            __atomic_fetch_add(&sections, 300, __ATOMIC_RELAXED);
#pragma omp section
            __atomic_fetch_add(&sections, 4000, __ATOMIC_RELAXED);
        }
#pragma omp critical(team_count)
        ++team;
#pragma omp masked
        ++masked;
#pragma omp barrier
#pragma omp for schedule(guided) reduction(+ : crit)
        for (long i = 0; i < n; ++i) {
#pragma omp critical
            ++crit;
        }
    }
    conf_end("dynamic,4 among single/sections/atomic", n);
    long want_atomic = 0;
    for (long i = 0; i < n; ++i) want_atomic += i % 11;
    CONF_CHECK(broadcast_ok && singles == 1, "single copyprivate", "%d singles, broadcast %s", singles,
               yes(broadcast_ok));
    CONF_CHECK(sections == 4321, "sections", "sections ran as %d, not 4321", sections);
    CONF_CHECK(team == omp_get_max_threads(), "critical", "%d threads counted, %d expected", team,
               omp_get_max_threads());
    CONF_CHECK(masked == 1, "masked", "ran %d times", masked);
    CONF_CHECK(atomic_sum == want_atomic, "atomic", "sum %ld, not %ld", atomic_sum, want_atomic);
    CONF_CHECK(captured_max == n - 1, "atomic capture", "max %ld, not %ld", captured_max, n - 1);
    CONF_CHECK(crit == n, "critical in guided loop", "%d, not %ld", crit, n);
    printf("single/sections/critical/atomic/masked: %d %d %s %s %ld %ld %d\n", singles, sections,
           yes(team == omp_get_max_threads()), yes(masked == 1), atomic_sum, captured_max, crit);

    /* parallel sections (GOMP_parallel_sections). */
    int ps = 0;
#pragma omp parallel sections
    {
#pragma omp section
        __atomic_fetch_add(&ps, 1, __ATOMIC_RELAXED);
#pragma omp section
        __atomic_fetch_add(&ps, 2, __ATOMIC_RELAXED);
#pragma omp section
        __atomic_fetch_add(&ps, 4, __ATOMIC_RELAXED);
    }
    CONF_CHECK(ps == 7, "parallel sections", "%d, not 7", ps);
    printf("parallel sections: %d\n", ps);

    /* Tasks: recursive fib with taskwait, a taskgroup, tasks created from loop iterations. */
    long f = 0;
#pragma omp parallel
    {
#pragma omp single
        f = fib((int)V(20));
    }
    CONF_CHECK(f == 6765, "tasks", "fib(20) = %ld", f);
    printf("tasks: fib(20) = %ld\n", f);

    int from_loop[1200];
    memset(from_loop, 0, sizeof from_loop);
    long group_sum = 0;
#pragma omp parallel
    {
#pragma omp for schedule(dynamic, 8)
        for (long i = 0; i < n; ++i) {
            if (i % 3 == 0) {
#pragma omp task firstprivate(i)
                __atomic_fetch_add(&from_loop[i], 1, __ATOMIC_RELAXED);
            } else {
                __atomic_fetch_add(&from_loop[i], 1, __ATOMIC_RELAXED);
            }
        }
        /* The loop's barrier completed the tasks. */
#pragma omp single
        {
#pragma omp taskgroup
            {
                for (int t = 0; t < 40; ++t) {
#pragma omp task firstprivate(t)
                    __atomic_fetch_add(&group_sum, t, __ATOMIC_RELAXED);
                }
            }
        }
    }
    int loop_bad = 0;
    for (long i = 0; i < n; ++i) loop_bad += from_loop[i] != 1;
    CONF_CHECK(loop_bad == 0, "tasks from loop iterations", "%d iterations ran not once", loop_bad);
    CONF_CHECK(group_sum == 780, "taskgroup", "sum %ld, not 780", group_sum);
    printf("tasks from a dynamic loop: %s, taskgroup sum %ld\n", yes(loop_bad == 0), group_sum);

    /* taskloop, with grainsize, num_tasks and a reduction. */
    int tl[1200];
    memset(tl, 0, sizeof tl);
    long tl_sum = 0;
#pragma omp parallel
    {
#pragma omp single
        {
#pragma omp taskloop grainsize(16)
            for (long i = 0; i < n; ++i) __atomic_fetch_add(&tl[i], 1, __ATOMIC_RELAXED);
#pragma omp taskloop num_tasks(7) reduction(+ : tl_sum)
            for (long i = 0; i < n; i += 2) tl_sum += i;
        }
#pragma omp for schedule(runtime)
        for (long i = 0; i < n; ++i) __atomic_fetch_add(&tl[i], 1, __ATOMIC_RELAXED);
    }
    int tl_bad = 0;
    long tl_want = 0;
    for (long i = 0; i < n; ++i) tl_bad += tl[i] != 2;
    for (long i = 0; i < n; i += 2) tl_want += i;
    CONF_CHECK(tl_bad == 0, "taskloop + runtime loop", "%d elements not visited twice", tl_bad);
    CONF_CHECK(tl_sum == tl_want, "taskloop reduction", "%ld, not %ld", tl_sum, tl_want);
    printf("taskloop: %s, reduction %ld\n", yes(tl_bad == 0), tl_sum);

    /* Host teams: distribute parallel for with a dynamic schedule in each team. */
    int th[1200];
    memset(th, 0, sizeof th);
#pragma omp teams num_teams(2) thread_limit(2)
#pragma omp distribute parallel for schedule(dynamic, 3)
    for (long i = 0; i < n; ++i) __atomic_fetch_add(&th[i], 1, __ATOMIC_RELAXED);
    int th_bad = 0;
    for (long i = 0; i < n; ++i) th_bad += th[i] != 1;
    CONF_CHECK(th_bad == 0, "teams distribute parallel for dynamic,3", "%d iterations ran not once", th_bad);
    printf("teams distribute parallel for dynamic,3: %s\n", yes(th_bad == 0));
}

/* ICVs belong to the data environment: omp_set_num_threads inside a region changes only
 * the calling thread's nthreads-var (its nested regions), not its team mates' nor the
 * initial thread's after the region. */
static void icv_scope(void) {
    const int max = omp_get_max_threads();
    int seen_max[2] = {0, 0}, inner[2] = {0, 0};
    omp_set_max_active_levels(2);
#pragma omp parallel num_threads(2)
    {
        const int o = omp_get_thread_num();
        const int outer_icv = omp_get_max_threads();
        if (o == 0) omp_set_num_threads(3);
#pragma omp barrier
        seen_max[o] = o == 0 ? omp_get_max_threads() : omp_get_max_threads() - outer_icv + 100;
#pragma omp parallel
        {
#pragma omp single
            inner[o] = omp_get_num_threads();
        }
        if (o == 1) inner[o] = inner[o] - outer_icv + 100; /* 100 when it kept its own ICV */
    }
    omp_set_max_active_levels(1);
    const int ok = seen_max[0] == 3 && inner[0] == 3 && seen_max[1] == 100 && inner[1] == 100;
    CONF_CHECK(ok, "omp_set_num_threads inside a region",
               "thread 0 (set 3): max %d, nested team %d; thread 1 (did not set): %+d, %+d against its ICV",
               seen_max[0], inner[0], seen_max[1] - 100, inner[1] - 100);
    CONF_CHECK(omp_get_max_threads() == max, "omp_set_num_threads inside a region",
               "the initial thread's ICV became %d, was %d", omp_get_max_threads(), max);
    printf("omp_set_num_threads inside a region is the calling thread's only: %s\n",
           yes(ok && omp_get_max_threads() == max));
}

/* threadprivate: values persist between regions of the same size (dyn-var false, no
 * nesting), and copyin copies the initial thread's value to the whole team. */
static int tp_value;
#pragma omp threadprivate(tp_value)

static void threadprivate_persistence(void) {
    int persisted = 1, copied = 1, size_a = 0, size_b = 0;
    const long n = V(600);
    long from_loop = 0;
#pragma omp parallel num_threads(3)
    {
        tp_value = 1000 + omp_get_thread_num();
#pragma omp single
        size_a = omp_get_num_threads();
    }
#pragma omp parallel num_threads(3) reduction(&& : persisted) reduction(+ : from_loop)
    {
        persisted = tp_value == 1000 + omp_get_thread_num();
#pragma omp single
        size_b = omp_get_num_threads();
        /* The loop's iterations read the threadprivate copy of whichever thread runs them. */
#pragma omp for schedule(dynamic, 5)
        for (long i = 0; i < n; ++i) from_loop += tp_value >= 1000 && tp_value < 1003 ? 1 : 1000000;
    }
    tp_value = 77;
#pragma omp parallel num_threads(3) copyin(tp_value) reduction(&& : copied)
    copied = tp_value == 77;
    CONF_CHECK(size_a == 3 && size_b == 3, "threadprivate", "regions of %d and %d threads", size_a, size_b);
    CONF_CHECK(persisted, "threadprivate", "values did not persist between two regions of 3 threads");
    CONF_CHECK(from_loop == n, "threadprivate in a dynamic loop", "%ld, not %ld", from_loop, n);
    CONF_CHECK(copied, "copyin", "a thread's copy was not the initial thread's value");
    printf("threadprivate persists: %s, seen from loop iterations: %s, copyin: %s\n", yes(persisted),
           yes(from_loop == n), yes(copied));
}

/* A region started from inside a task, and the same loop site met by two inner teams at once,
 * many times over. */
static void regions_in_tasks_and_repeated_nesting(void) {
    const long n = V(500);
    static int hits[4][500];
    memset(hits, 0, sizeof hits);
#pragma omp parallel
    {
#pragma omp single
        for (int t = 0; t < 2; ++t) {
#pragma omp task firstprivate(t)
            {
#pragma omp parallel for schedule(dynamic, 3)
                for (long i = 0; i < n; ++i) __atomic_fetch_add(&hits[t][i], 1, __ATOMIC_RELAXED);
            }
        }
    }
    omp_set_max_active_levels(2);
    for (int rep = 0; rep < 12; ++rep) {
#pragma omp parallel num_threads(2)
        {
            const int o = omp_get_thread_num();
#pragma omp parallel num_threads(2 + (rep + o) % 2)
            {
#pragma omp for schedule(guided) nowait
                for (long i = 0; i < n; ++i) __atomic_fetch_add(&hits[2 + o][i], 1, __ATOMIC_RELAXED);
#pragma omp for schedule(runtime)
                for (long i = 0; i < n; ++i) __atomic_fetch_add(&hits[2 + o][i], 1, __ATOMIC_RELAXED);
            }
        }
    }
    omp_set_max_active_levels(1);
    long bad = 0;
    for (long i = 0; i < n; ++i) {
        bad += hits[0][i] != 1 || hits[1][i] != 1;
        bad += hits[2][i] != 24 || hits[3][i] != 24;
    }
    CONF_CHECK(bad == 0, "regions in tasks, repeated nesting", "%ld elements counted wrong", bad);
    printf("parallel for inside tasks, 12 rounds of two inner teams: %s\n", yes(bad == 0));
}

/* Two threads of the program's own (pthreads), each the initial thread of its own OpenMP
 * regions, running loops at the same time. */
enum { ROOT_N = 3000 };
static int root_hits[2][ROOT_N];
static int root_sizes[2];

static void *root_thread(void *arg) {
    const int r = (int)(long)arg;
    const long n = V(ROOT_N);
    for (int rep = 0; rep < 10; ++rep) {
#pragma omp parallel num_threads(2)
        {
#pragma omp single
            root_sizes[r] = omp_get_num_threads();
#pragma omp for schedule(dynamic, 7) nowait
            for (long i = 0; i < n; ++i) __atomic_fetch_add(&root_hits[r][i], 1, __ATOMIC_RELAXED);
#pragma omp for schedule(guided)
            for (long i = n - 1; i >= 0; --i) __atomic_fetch_add(&root_hits[r][i], 1, __ATOMIC_RELAXED);
        }
    }
    return NULL;
}

static void program_threads(void) {
    pthread_t threads[2];
    memset(root_hits, 0, sizeof root_hits);
    for (long r = 0; r < 2; ++r)
        if (pthread_create(&threads[r], NULL, root_thread, (void *)r) != 0) {
            conf_fail("pthreads", "pthread_create failed");
            return;
        }
    for (int r = 0; r < 2; ++r) pthread_join(threads[r], NULL);
    long bad = 0;
    for (int r = 0; r < 2; ++r)
        for (long i = 0; i < ROOT_N; ++i) bad += root_hits[r][i] != 20;
    CONF_CHECK(bad == 0, "two pthreads with their own regions", "%ld elements counted wrong", bad);
    CONF_CHECK(root_sizes[0] == 2 && root_sizes[1] == 2, "two pthreads with their own regions",
               "num_threads(2) gave %d and %d threads", root_sizes[0], root_sizes[1]);
    printf("two pthreads running OpenMP loops at once: %s\n", yes(bad == 0));
}

int main(void) {
    team_sizes();
    levels();
    nested();
    icv_scope();
    threadprivate_persistence();
    regions_in_tasks_and_repeated_nesting();
    program_threads();
    schedules();
    libgomp_constructs();
    return conf_finish("nested_and_queries");
}

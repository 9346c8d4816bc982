/* aloe C API: parallel loops with aloe schedules, from C (and C++ without exceptions).
 *
 * Error convention: functions return an aloe_status (ALOE_OK is 0) or, for those that
 * return a pointer, NULL; aloe_last_error() then gives a message naming what was wrong.
 * No C function lets a C++ exception escape.
 *
 * Schedules use the same strings as everywhere else, e.g. "hybrid,fs=0.8,chunk=4";
 * NULL means ALOE_SCHEDULE, or static when that is unset.
 */
#ifndef ALOE_ALOE_H
#define ALOE_ALOE_H

#include <aloe/export.h>

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum aloe_status {
    ALOE_OK = 0,
    ALOE_ERROR_SCHEDULE = 1, /* malformed schedule string */
    ALOE_ERROR_ARGUMENT = 2, /* a bad argument (step 0, NULL body, thread out of range) */
    ALOE_ERROR_INTERNAL = 3  /* anything else; the message says what */
} aloe_status;

/* The message of the last failed call on this thread ("" when none). */
ALOE_API const char* aloe_last_error(void);

/* Threads of the process team. */
ALOE_API int aloe_num_threads(void);

/* body(lo, hi, thread, ctx) runs the iterations lo, lo+step, ... up to but excluding hi
 * (hi is always representable: the loop's own `last` for the final chunk).
 * With step 1 write `for (int64_t i = lo; i < hi; ++i)`: it never overflows. With any step,
 * ALOE_CHUNK_FOR(i, lo, hi, step) walks the chunk without overflow even next to
 * INT64_MAX/INT64_MIN, where `i += step` after the last iteration would overflow. */
typedef void (*aloe_body_fn)(int64_t lo, int64_t hi, int thread, void* ctx);

/* The number of iterations in [lo, hi) with `step` (step != 0). */
static inline uint64_t aloe_chunk_count(int64_t lo, int64_t hi, int64_t step) {
    if (step > 0) return hi > lo ? ((uint64_t)hi - (uint64_t)lo - 1) / (uint64_t)step + 1 : 0;
    return lo > hi ? ((uint64_t)lo - (uint64_t)hi - 1) / (0 - (uint64_t)step) + 1 : 0;
}

/* for (each i in the chunk): counts in unsigned arithmetic, where wrap-around is defined. */
#define ALOE_CHUNK_FOR(i, lo, hi, step)                                                              \
    for (uint64_t aloe_k_ = 0, aloe_n_ = aloe_chunk_count((lo), (hi), (step)); aloe_k_ < aloe_n_;      \
         ++aloe_k_)                                                                                   \
        for (int64_t i = (int64_t)((uint64_t)(lo) + aloe_k_ * (uint64_t)(step)), aloe_once_ = 1; aloe_once_; \
             aloe_once_ = 0)

/* Runs body over first, first+step, ... excluding last, on the process team.
 * `site` names the loop for statistics and history; NULL uses the body's address. */
ALOE_API aloe_status aloe_parallel_for(int64_t first, int64_t last, int64_t step, const char* schedule,
                                       aloe_body_fn body, void* ctx);
ALOE_API aloe_status aloe_parallel_for_site(int64_t first, int64_t last, int64_t step, const char* schedule,
                                            const char* site, aloe_body_fn body, void* ctx);

/* A loop handle for an existing OpenMP (or pthreads) parallel region: create it before the
 * region, have every thread call aloe_loop_next until it returns 0, destroy it after. */
typedef struct aloe_loop aloe_loop;

/* NULL on error (see aloe_last_error). `site` may be NULL (statistics under "c-loop"). */
ALOE_API aloe_loop* aloe_loop_create(int64_t first, int64_t last, int64_t step, const char* schedule,
                                     const char* site);
/* 1: [*lo, *hi) filled (same convention as aloe_body_fn); 0: no more work for this thread;
 * -1: error (thread or nthreads out of range or inconsistent; see aloe_last_error). */
ALOE_API int aloe_loop_next(aloe_loop* loop, int thread, int nthreads, int64_t* lo, int64_t* hi);
ALOE_API void aloe_loop_destroy(aloe_loop* loop);

/* Writes the per-site statistics as JSON. */
ALOE_API aloe_status aloe_stats_write(const char* path);

/* FORALL in the style of the Kale thesis, inside a parallel region:
 *
 *   aloe_loop* loop = aloe_loop_create(0, n, 1, "staggered,fs=0.9", "sweep");
 *   #pragma omp parallel
 *   {
 *       ALOE_FORALL_BEGIN(loop, omp_get_thread_num(), omp_get_num_threads(), lo, hi)
 *           for (int64_t i = lo; i < hi; ++i) c[i] += a[i] * b[i];
 *       ALOE_FORALL_END
 *   }
 *   aloe_loop_destroy(loop);
 */
#define ALOE_FORALL_BEGIN(loop, thread, nthreads, lo, hi)                                   \
    {                                                                                      \
        int64_t lo, hi;                                                                    \
        while (aloe_loop_next((loop), (thread), (nthreads), &lo, &hi) == 1) {
#define ALOE_FORALL_END \
    }                   \
    }

/* Task groups: tasks that wait together (include/aloe/task.hpp's aloe::task_group).
 * fn(arg) runs once on some thread of the process team; wait() runs tasks meanwhile and
 * returns ALOE_ERROR_INTERNAL when a task threw a C++ exception (the message names it; the
 * group's other tasks still ran). destroy() waits for the group's tasks first. */
typedef struct aloe_task_group aloe_task_group;
typedef void (*aloe_task_fn)(void* arg);
ALOE_API aloe_task_group* aloe_task_group_create(void);
ALOE_API aloe_status aloe_task_group_run(aloe_task_group* group, aloe_task_fn fn, void* arg);
ALOE_API aloe_status aloe_task_group_wait(aloe_task_group* group);
ALOE_API void aloe_task_group_destroy(aloe_task_group* group);

/* Knobs (include/aloe/knob.hpp's aloe::knob): an integer tuned in-run, between epochs, from
 * the task counters. divisors_of > 0: the divisors of it within [lo, hi]; 0: a geometric
 * range lo..hi (values 5% apart); < 0 is refused. options as in C++ ("objective=overall,search=golden"; NULL
 * or "" for the defaults). NULL on error (see aloe_last_error).
 *
 *   aloe_knob* grain = aloe_knob_create("stencil.partition", 1000, nx / 2, nx, nx / 100, NULL);
 *   for (int step = 0; step < steps; ++step) {
 *       run_timestep(aloe_knob_value(grain));
 *       aloe_knob_epoch_done(grain, 1.0, -1.0);
 *   }
 *   aloe_knob_destroy(grain);
 */
typedef struct aloe_knob aloe_knob;
ALOE_API aloe_knob* aloe_knob_create(const char* name, int64_t lo, int64_t hi, int64_t divisors_of, int64_t start,
                                     const char* options);
/* The value the current epoch should use (any thread); 0 when knob is NULL. */
ALOE_API int64_t aloe_knob_value(const aloe_knob* knob);
/* Ends the current epoch: work is the units of work it did (objectives are per unit; <= 0
 * counts as 1), wall_seconds its wall time (< 0: measured by the knob; NaN or infinite: no
 * measurement, the search skips the epoch). */
ALOE_API aloe_status aloe_knob_epoch_done(aloe_knob* knob, double work, double wall_seconds);
/* 1 when the search has converged, 0 when not, -1 on error. */
ALOE_API int aloe_knob_converged(const aloe_knob* knob);
/* The best value so far; 0 when knob is NULL. */
ALOE_API int64_t aloe_knob_best(const aloe_knob* knob);
ALOE_API void aloe_knob_destroy(aloe_knob* knob);

#ifdef __cplusplus
}
#endif

#endif /* ALOE_ALOE_H */

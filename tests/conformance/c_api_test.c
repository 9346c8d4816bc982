/* The C half of the C API conformance tests (see c_api_test.h): plain C11 callers of
 * <aloe/aloe.h>, with C bodies that count every index in C11 atomics and pthreads that
 * drive an aloe_loop. */
#include "c_api_test.h"

#include <aloe/aloe.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct tally {
    int64_t first;
    int64_t last;
    int64_t step;
    uint64_t count;
    int threads;
    int walk;
    _Atomic uint32_t* hits;
    atomic_int_fast64_t strays;
    atomic_int_fast64_t bad_threads;
    atomic_int_fast64_t bad_chunks;
    atomic_uint_fast64_t sum;
} tally;

static uint64_t magnitude(int64_t step) { return step > 0 ? (uint64_t)step : 0 - (uint64_t)step; }

/* Iterations of (first, last, step) in unsigned arithmetic. */
static uint64_t count_of(int64_t first, int64_t last, int64_t step) {
    if (step > 0 && last > first) return ((uint64_t)last - (uint64_t)first - 1) / (uint64_t)step + 1;
    if (step < 0 && last < first) return ((uint64_t)first - (uint64_t)last - 1) / magnitude(step) + 1;
    return 0;
}

static int tally_init(tally* t, int64_t first, int64_t last, int64_t step, int threads, int walk) {
    memset(t, 0, sizeof *t);
    t->first = first;
    t->last = last;
    t->step = step;
    t->count = step != 0 ? count_of(first, last, step) : 0;
    t->threads = threads;
    t->walk = walk;
    t->hits = calloc(t->count > 0 ? t->count : 1, sizeof *t->hits);
    atomic_init(&t->strays, 0);
    atomic_init(&t->bad_threads, 0);
    atomic_init(&t->bad_chunks, 0);
    atomic_init(&t->sum, 0);
    return t->hits != NULL;
}

static void tally_hit(tally* t, int64_t i) {
    const uint64_t d = t->step > 0 ? (uint64_t)i - (uint64_t)t->first : (uint64_t)t->first - (uint64_t)i;
    const uint64_t s = magnitude(t->step);
    if (d % s != 0 || d / s >= t->count) {
        atomic_fetch_add_explicit(&t->strays, 1, memory_order_relaxed);
        return;
    }
    atomic_fetch_add_explicit(&t->hits[d / s], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&t->sum, (uint64_t)i, memory_order_relaxed);
}

/* One chunk [lo, hi) as aloe hands it to a body or returns it from aloe_loop_next. */
static void tally_chunk(tally* t, int64_t lo, int64_t hi, int thread) {
    if (thread < 0 || thread >= t->threads) atomic_fetch_add_explicit(&t->bad_threads, 1, memory_order_relaxed);
    const int64_t step = t->step;
    if ((step > 0 && hi < lo) || (step < 0 && hi > lo)) {
        atomic_fetch_add_explicit(&t->bad_chunks, 1, memory_order_relaxed);
        return;
    }
    switch (t->walk) {
        case ALOE_CT_WALK_CHUNK_FOR:
            /* The walk aloe.h documents for any step. */
            ALOE_CHUNK_FOR(i, lo, hi, step) tally_hit(t, i);
            return;
        case ALOE_CT_WALK_STEP_ONE:
            /* The loop aloe.h documents for step 1 ("it never overflows"). */
            if (step != 1) {
                atomic_fetch_add_explicit(&t->bad_chunks, 1, memory_order_relaxed);
                return;
            }
            for (int64_t i = lo; i < hi; ++i) tally_hit(t, i);
            return;
        default: {
            /* This file's own overflow-free walk: the number of iterations in [lo, hi),
             * then i by unsigned steps. */
            const uint64_t span = step > 0 ? (uint64_t)hi - (uint64_t)lo : (uint64_t)lo - (uint64_t)hi;
            const uint64_t n = span == 0 ? 0 : (span - 1) / magnitude(step) + 1;
            for (uint64_t k = 0; k < n; ++k) tally_hit(t, (int64_t)((uint64_t)lo + k * (uint64_t)step));
            return;
        }
    }
}

static void tally_finish(tally* t, aloe_ct_result* r) {
    r->count = (int64_t)t->count;
    for (uint64_t k = 0; k < t->count; ++k) {
        const uint32_t h = atomic_load_explicit(&t->hits[k], memory_order_relaxed);
        if (h == 0) ++r->missed;
        else if (h > 1) ++r->repeated;
    }
    r->strays = atomic_load(&t->strays);
    r->bad_threads = atomic_load(&t->bad_threads);
    r->bad_chunks = atomic_load(&t->bad_chunks);
    r->sum = atomic_load(&t->sum);
    free((void*)t->hits);
}

static void copy_message(char* out, int size) {
    if (size <= 0) return;
    snprintf(out, (size_t)size, "%s", aloe_last_error());
}

static void tally_body(int64_t lo, int64_t hi, int thread, void* ctx) { tally_chunk((tally*)ctx, lo, hi, thread); }

aloe_ct_result aloe_ct_parallel_for(int64_t first, int64_t last, int64_t step, const char* schedule, const char* site,
                                    int walk) {
    aloe_ct_result r;
    memset(&r, 0, sizeof r);
    tally t;
    if (!tally_init(&t, first, last, step, aloe_num_threads(), walk)) {
        r.status = -1;
        return r;
    }
    r.status = site ? (int)aloe_parallel_for_site(first, last, step, schedule, site, tally_body, &t)
                    : (int)aloe_parallel_for(first, last, step, schedule, tally_body, &t);
    copy_message(r.message, (int)sizeof r.message);
    tally_finish(&t, &r);
    return r;
}

void aloe_ct_bad_arguments(int* null_body_status, char* null_body_message, int* step_zero_status,
                           char* step_zero_message, int message_size) {
    *null_body_status = (int)aloe_parallel_for(0, 10, 1, "static", NULL, NULL);
    copy_message(null_body_message, message_size);
    tally t;
    tally_init(&t, 0, 10, 1, aloe_num_threads(), ALOE_CT_WALK_COUNT);
    *step_zero_status = (int)aloe_parallel_for(0, 10, 0, "dynamic", tally_body, &t);
    copy_message(step_zero_message, message_size);
    aloe_ct_result ignored;
    memset(&ignored, 0, sizeof ignored);
    tally_finish(&t, &ignored);
}

typedef struct driver {
    aloe_loop* loop;
    tally* t;
    int thread;
    int threads;
} driver;

static void* drive_loop(void* p) {
    driver* d = p;
    int64_t lo, hi;
    int rc;
    while ((rc = aloe_loop_next(d->loop, d->thread, d->threads, &lo, &hi)) == 1) tally_chunk(d->t, lo, hi, d->thread);
    if (rc != 0) atomic_fetch_add_explicit(&d->t->bad_chunks, 1, memory_order_relaxed);
    /* Done means done: asking again still returns 0. */
    if (aloe_loop_next(d->loop, d->thread, d->threads, &lo, &hi) != 0)
        atomic_fetch_add_explicit(&d->t->bad_chunks, 1, memory_order_relaxed);
    return NULL;
}

aloe_ct_result aloe_ct_loop_pthreads(int64_t first, int64_t last, int64_t step, const char* schedule, const char* site,
                                     int threads, int walk) {
    aloe_ct_result r;
    memset(&r, 0, sizeof r);
    aloe_loop* loop = aloe_loop_create(first, last, step, schedule, site);
    if (loop == NULL) {
        copy_message(r.message, (int)sizeof r.message);
        return r;
    }
    r.status = 1;
    tally t;
    if (!tally_init(&t, first, last, step, threads, walk) || threads < 1 || threads > 64) {
        aloe_loop_destroy(loop);
        r.status = -1;
        return r;
    }
    pthread_t ids[64];
    driver drivers[64];
    for (int k = 0; k < threads; ++k) {
        drivers[k].loop = loop;
        drivers[k].t = &t;
        drivers[k].thread = k;
        drivers[k].threads = threads;
        if (pthread_create(&ids[k], NULL, drive_loop, &drivers[k]) != 0) {
            /* Could not start the thread: run its share here, after the others. */
            ids[k] = pthread_self();
        }
    }
    for (int k = 0; k < threads; ++k) {
        if (pthread_equal(ids[k], pthread_self())) drive_loop(&drivers[k]);
        else pthread_join(ids[k], NULL);
    }
    aloe_loop_destroy(loop);
    tally_finish(&t, &r);
    return r;
}

void aloe_ct_loop_inconsistent(int results[4], char* message, int message_size) {
    int64_t lo = 0, hi = 0;
    aloe_loop* loop = aloe_loop_create(0, 100, 1, "dynamic,chunk=10", NULL);
    if (loop == NULL) {
        results[0] = results[1] = results[2] = results[3] = -2;
        copy_message(message, message_size);
        return;
    }
    results[0] = aloe_loop_next(loop, 0, 2, &lo, &hi);
    results[1] = aloe_loop_next(loop, 1, 3, &lo, &hi);
    copy_message(message, message_size);
    results[2] = aloe_loop_next(loop, 2, 2, &lo, &hi);
    results[3] = aloe_loop_next(NULL, 0, 2, &lo, &hi);
    aloe_loop_destroy(loop);
}

int aloe_ct_loop_create_fails(const char* schedule, int64_t step, char* message, int message_size) {
    aloe_loop* loop = aloe_loop_create(0, 100, step, schedule, "conformance/c/create-fails");
    copy_message(message, message_size);
    if (loop == NULL) return 1;
    aloe_loop_destroy(loop);
    return 0;
}

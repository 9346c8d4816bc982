/* The C half of the C API conformance tests: functions written in C11 against
 * <aloe/aloe.h>, called and checked by c_api_test.cpp. */
#ifndef ALOE_CONFORMANCE_C_API_TEST_H
#define ALOE_CONFORMANCE_C_API_TEST_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What one C-side run saw. */
typedef struct aloe_ct_result {
    int status;               /* what the aloe call returned (aloe_status, or 0/1 for loops) */
    int64_t count;            /* iterations the loop has (computed in C) */
    int64_t missed;           /* iterations that never ran */
    int64_t repeated;         /* iterations that ran more than once */
    int64_t strays;           /* indices outside the loop */
    int64_t bad_threads;      /* calls with a thread outside [0, threads) */
    int64_t bad_chunks;       /* chunks with lo/hi not on the loop, or -1 from aloe_loop_next */
    uint64_t sum;             /* sum of the indices seen, modulo 2^64 */
    char message[512];        /* aloe_last_error() after the call */
} aloe_ct_result;

/* How a C body walks the chunk [lo, hi) it is given. */
enum {
    ALOE_CT_WALK_COUNT = 0,     /* this file's own loop over the iteration count */
    ALOE_CT_WALK_CHUNK_FOR = 1, /* ALOE_CHUNK_FOR(i, lo, hi, step), as aloe.h documents */
    ALOE_CT_WALK_STEP_ONE = 2   /* for (i = lo; i < hi; ++i), as aloe.h documents for step 1 */
};

/* Runs aloe_parallel_for_site (site may be NULL: then aloe_parallel_for) with a body that
 * walks each chunk as `walk` says and counts each index in C11 atomics. */
aloe_ct_result aloe_ct_parallel_for(int64_t first, int64_t last, int64_t step, const char* schedule,
                                    const char* site, int walk);

/* Calls aloe_parallel_for with a NULL body, and with step 0; returns the statuses and the
 * messages. */
void aloe_ct_bad_arguments(int* null_body_status, char* null_body_message, int* step_zero_status,
                           char* step_zero_message, int message_size);

/* aloe_loop_create + `threads` pthreads calling aloe_loop_next until it returns 0, then
 * aloe_loop_destroy. status: 1 when the loop could be created, else 0 (message set). */
aloe_ct_result aloe_ct_loop_pthreads(int64_t first, int64_t last, int64_t step, const char* schedule,
                                     const char* site, int threads, int walk);

/* aloe_loop_next on one loop with (thread, nthreads) = (0, 2), then (1, 3), then (2, 2),
 * then a NULL loop; returns the four results and the message after the second call. */
void aloe_ct_loop_inconsistent(int results[4], char* message, int message_size);

/* aloe_loop_create with a bad schedule and with step 0: 1 when it returned NULL. */
int aloe_ct_loop_create_fails(const char* schedule, int64_t step, char* message, int message_size);

#ifdef __cplusplus
}
#endif

#endif

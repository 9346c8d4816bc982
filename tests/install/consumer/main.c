/* Sums 0..999 with aloe_parallel_for through the installed C header, compiled with the flags
 * pkg-config gives. Exit status 0 when the sum is right and a bad schedule is refused. */
#include <aloe/aloe.h>

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

static void add_range(int64_t lo, int64_t hi, int thread, void* ctx) {
    (void)thread;
    _Atomic int64_t* sum = ctx;
    int64_t part = 0;
    for (int64_t i = lo; i < hi; ++i) part += i;
    atomic_fetch_add_explicit(sum, part, memory_order_relaxed);
}

int main(void) {
    const int64_t n = 1000;
    _Atomic int64_t sum = 0;
    aloe_status status = aloe_parallel_for(0, n, 1, "hybrid,fs=0.8", add_range, &sum);
    if (status != ALOE_OK) {
        fprintf(stderr, "c_consumer: aloe_parallel_for: status %d: %s\n", (int)status, aloe_last_error());
        return 1;
    }
    if (atomic_load(&sum) != n * (n - 1) / 2) {
        fprintf(stderr, "c_consumer: sum %lld, expected %lld\n", (long long)atomic_load(&sum),
                (long long)(n * (n - 1) / 2));
        return 1;
    }
    status = aloe_parallel_for(0, n, 1, "no-such-schedule", add_range, &sum);
    if (status != ALOE_ERROR_SCHEDULE) {
        fprintf(stderr, "c_consumer: a malformed schedule gave status %d, expected %d\n", (int)status,
                (int)ALOE_ERROR_SCHEDULE);
        return 1;
    }
    printf("c_consumer: %d threads: ok\n", aloe_num_threads());
    return 0;
}

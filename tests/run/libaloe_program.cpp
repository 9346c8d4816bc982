// A program that uses both OpenMP (a dynamic loop, which `aloe run` interposes) and aloe's own
// library (a parallel_for with the schedule ALOE_SCHEDULE names). Prints the schedule its aloe
// loops use, so aloe_run_check.cmake (forward_program_links_libaloe) can tell what reached
// them; exits 3 when either loop missed an iteration.
#include <aloe/aloe.hpp>

#include <omp.h>

#include <atomic>
#include <cstdint>
#include <cstdio>

int main() {
    constexpr std::int64_t n = 10000;
    std::atomic<std::int64_t> aloe_sum{0};
    aloe::parallel_for(0, n, [&](std::int64_t i) { aloe_sum.fetch_add(i, std::memory_order_relaxed); },
                       aloe::loop_site("run-test/aloe-loop"));
    std::int64_t omp_sum = 0;
#pragma omp parallel for schedule(dynamic, 16) reduction(+ : omp_sum)
    for (std::int64_t i = 0; i < n; ++i) omp_sum += i;
    const std::int64_t expected = n * (n - 1) / 2;
    std::printf("aloe schedule: %s\n", aloe::schedule_from_environment().to_string().c_str());
    std::printf("sums %lld %lld\n", static_cast<long long>(aloe_sum.load()), static_cast<long long>(omp_sum));
    return aloe_sum.load() == expected && omp_sum == expected ? 0 : 3;
}

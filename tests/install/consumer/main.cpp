// Sums 0..999 with aloe::parallel_for under a few schedules, through the installed headers
// and library. Exit status 0 when every sum is right.
#include <aloe/aloe.hpp>

#include <atomic>
#include <cstdint>
#include <cstdio>

int main() {
    constexpr std::int64_t n = 1000;
    constexpr std::int64_t expected = n * (n - 1) / 2;
    int failures = 0;
    for (const char* spec : {"static", "dynamic,chunk=7", "hybrid,fs=0.8"}) {
        std::atomic<std::int64_t> sum{0};
        aloe::parallel_for(0, n, spec, [&](std::int64_t i) { sum.fetch_add(i, std::memory_order_relaxed); });
        if (sum.load() != expected) {
            std::fprintf(stderr, "consumer: %s: sum %lld, expected %lld\n", spec,
                         static_cast<long long>(sum.load()), static_cast<long long>(expected));
            ++failures;
        }
    }
    std::printf("consumer: aloe %s, %d threads: %s\n", aloe::version(), aloe::team::global().size(),
                failures == 0 ? "ok" : "FAILED");
    return failures == 0 ? 0 : 1;
}

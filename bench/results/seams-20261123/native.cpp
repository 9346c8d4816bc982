#include <aloe/aloe.hpp>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
int main(int argc, char** argv) {
    const int loops = argc > 1 ? std::atoi(argv[1]) : 100;
    const char* sched = argc > 2 ? argv[2] : "static";
    const std::int64_t n = argc > 3 ? std::atoll(argv[3]) : 4096;
    std::atomic<long> sink{0};
    const aloe::schedule s(sched);
    for (int l = 0; l < loops; ++l)
        aloe::parallel_for(0, n, s, [&](aloe::subrange r, int) { long x = 0; for (auto i : r) x += i; sink.fetch_add(x, std::memory_order_relaxed); }, aloe::loop_site("native-bench"));
    std::printf("%ld\n", sink.load());
}

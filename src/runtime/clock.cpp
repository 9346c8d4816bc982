#include "runtime/clock.hpp"

#include <chrono>
#include <fstream>
#include <mutex>
#include <string>

namespace aloe::runtime {

namespace {

// rdtsc is only a clock when the TSC runs at a constant rate and does not stop in idle
// states; Linux reports both as cpuinfo flags.
bool tsc_is_invariant() {
#if defined(__x86_64__)
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line;
    while (std::getline(cpuinfo, line)) {
        if (line.rfind("flags", 0) == 0) {
            return line.find(" constant_tsc") != std::string::npos && line.find(" nonstop_tsc") != std::string::npos;
        }
    }
#endif
    return false;
}

// Calibration interval: long enough that the steady_clock's resolution (ns) gives a ratio
// good to about 1e-6, short enough not to be noticed at the first statistics read.
constexpr auto calibration_interval = std::chrono::milliseconds(5);

}  // namespace

namespace clock_detail {
bool use_tsc = tsc_is_invariant();

// The calibration's first sample, taken when the library loads: by the first conversion the
// program has usually run longer than the calibration interval, and nothing has to wait.
const auto loaded_at = std::chrono::steady_clock::now();
const ticks loaded_ticks = use_tsc ? now_ticks() : 0;

ticks steady_ticks() noexcept {
    return static_cast<ticks>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count());
}
}  // namespace clock_detail

double ticks_per_second() noexcept {
    static const double rate = [] {
        if (!clock_detail::use_tsc) return 1e9;
        // From the load-time sample; waits only for what is left of the interval (the first
        // loop or region of a program that started less than 5 ms ago).
        const auto t0 = clock_detail::loaded_at;
        const ticks c0 = clock_detail::loaded_ticks;
        auto t1 = std::chrono::steady_clock::now();
        while (t1 - t0 < calibration_interval) t1 = std::chrono::steady_clock::now();
        const ticks c1 = now_ticks();
        const double seconds = std::chrono::duration<double>(t1 - t0).count();
        return static_cast<double>(c1 - c0) / seconds;
    }();
    return rate;
}

const char* clock_source() noexcept { return clock_detail::use_tsc ? "rdtsc" : "steady_clock"; }

}  // namespace aloe::runtime

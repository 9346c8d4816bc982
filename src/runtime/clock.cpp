#include "runtime/clock.hpp"

#include <time.h>

#include <chrono>
#include <cmath>
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

// One (steady_clock, TSC) pair: the steady reading bracketed by two TSC readings, the
// narrowest bracket of a few tries, and the TSC at its middle. A pair read once could have
// the thread preempted between its two readings (tens of µs on a VM: 1% of the interval,
// which every task counter in ns would then carry).
struct clock_pair {
    std::chrono::steady_clock::time_point steady;
    ticks tsc = 0;
};

clock_pair read_clock_pair() noexcept {
    clock_pair best;
    ticks best_width = ~ticks{0};
    for (int attempt = 0; attempt < 8; ++attempt) {
        const ticks before = now_ticks();
        const auto steady = std::chrono::steady_clock::now();
        const ticks after = now_ticks();
        if (after - before < best_width) {
            best_width = after - before;
            best = {steady, before + (after - before) / 2};
        }
    }
    return best;
}

}  // namespace

namespace clock_detail {
bool use_tsc = tsc_is_invariant();

ticks steady_ticks() noexcept {
    return static_cast<ticks>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count());
}
}  // namespace clock_detail

namespace {
// The calibration's first sample, taken when the library loads (after use_tsc, defined above
// in this file): by the first conversion the program has usually run longer than the
// calibration interval, and nothing has to wait.
const clock_pair loaded = clock_detail::use_tsc ? read_clock_pair() : clock_pair{};
}  // namespace

double ticks_per_second() noexcept {
    static const double rate = [] {
        if (!clock_detail::use_tsc) return 1e9;
        // From the load-time sample; waits only for what is left of the interval (the first
        // loop or region of a program that started less than 5 ms ago).
        // A static initializer of another file that asks first finds `loaded` not made yet.
        const clock_pair start = loaded.tsc != 0 ? loaded : read_clock_pair();
        while (std::chrono::steady_clock::now() - start.steady < calibration_interval) {
        }
        const clock_pair end = read_clock_pair();
        const double seconds = std::chrono::duration<double>(end.steady - start.steady).count();
        return static_cast<double>(end.tsc - start.tsc) / seconds;
    }();
    return rate;
}

tick_scale::tick_scale(double ticks_per_s) noexcept
    : ns_per_tick_q32_(static_cast<std::uint64_t>(std::llround(1e9 / ticks_per_s * 4294967296.0))) {}

const tick_scale& ns_scale() noexcept {
    static const tick_scale scale(ticks_per_second());
    return scale;
}

double monotonic_seconds() noexcept {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double thread_cpu_seconds() noexcept {
    timespec ts{};
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return -1;
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

const char* clock_source() noexcept { return clock_detail::use_tsc ? "rdtsc" : "steady_clock"; }

}  // namespace aloe::runtime

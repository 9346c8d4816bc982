// A cheap per-thread clock for statistics.
//
// On x86-64 with an invariant TSC the clock is rdtsc (about 20-40 cycles, no syscall, no
// vDSO); elsewhere it is CLOCK_MONOTONIC through std::chrono::steady_clock. Ticks are
// converted to seconds with a ratio calibrated once, on first conversion.
#pragma once

#include <cstdint>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace aloe::runtime {

using ticks = std::uint64_t;

namespace clock_detail {
extern bool use_tsc;  // decided once at start-up (static initialisation in clock.cpp)
ticks steady_ticks() noexcept;
}  // namespace clock_detail

/// Current time in ticks. Monotonic per thread; comparable across threads on the same node.
inline ticks now_ticks() noexcept {
#if defined(__x86_64__)
    if (clock_detail::use_tsc) return __rdtsc();
#endif
    return clock_detail::steady_ticks();
}

/// Ticks per second (calibrated once when rdtsc is used: over the time since the library
/// loaded, waiting on the first call only until 5 ms have passed since then).
double ticks_per_second() noexcept;

/// Seconds of CLOCK_MONOTONIC (std::chrono::steady_clock on Linux): the clock every process
/// of a node shares, for times that other processes or their traces compare.
double monotonic_seconds() noexcept;

/// The calling thread's CPU time in seconds (CLOCK_THREAD_CPUTIME_ID, a system call); < 0
/// when it cannot be read.
double thread_cpu_seconds() noexcept;

inline double ticks_to_seconds(ticks t) noexcept { return static_cast<double>(t) / ticks_per_second(); }

/// Ticks to nanoseconds as one multiply and a shift: nanoseconds per tick in fixed point with
/// 32 fractional bits (a relative error under 1e-9 for a clock up to 8 GHz). A hot path
/// converts durations often (the task scheduler's counters three times a task), and the round
/// trip through double costs GCC about 20 instructions a conversion for unsigned values.
class tick_scale {
public:
    explicit tick_scale(double ticks_per_s) noexcept;
    std::uint64_t to_ns(ticks t) const noexcept {
        // t < 2^64 and the scale < 2^40 (a clock of 4 MHz or more): the product fits 128 bits.
        __extension__ using wide = unsigned __int128;
        return static_cast<std::uint64_t>((wide{t} * ns_per_tick_q32_) >> 32);
    }

private:
    std::uint64_t ns_per_tick_q32_;
};

/// This clock's scale (made on first use, from ticks_per_second()).
const tick_scale& ns_scale() noexcept;
inline std::uint64_t ticks_to_ns(ticks t) noexcept { return ns_scale().to_ns(t); }

/// "rdtsc" or "steady_clock", for `aloe info`.
const char* clock_source() noexcept;

/// Hint to the CPU that this is a spin-wait loop.
inline void cpu_relax() noexcept {
#if defined(__x86_64__)
    _mm_pause();
#elif defined(__aarch64__)
    asm volatile("yield" ::: "memory");
#endif
}

}  // namespace aloe::runtime

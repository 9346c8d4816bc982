// What the task suites share: sizes scaled down under the sanitizers, a seeded generator,
// busy-waits on the runtime's own clock (the one the task counters use) and a deadline.
#pragma once

#include "runtime/clock.hpp"

#include <chrono>
#include <cstdint>
#include <thread>

namespace aloe::task_test {

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
inline constexpr bool sanitized = true;
#else
inline constexpr bool sanitized = false;
#endif

/// `full` in a release build, `small` under a sanitizer (5-20x slower, on 2 cores).
constexpr std::int64_t scaled(std::int64_t full, std::int64_t small) noexcept { return sanitized ? small : full; }

/// xorshift64*: small, seedable, good enough to pick interleavings.
struct rng {
    std::uint64_t s;
    explicit rng(std::uint64_t seed) noexcept : s(seed * 0x9e3779b97f4a7c15ULL + 0x2545f4914f6cdd1dULL) {
        if (s == 0) s = 1;
    }
    std::uint64_t next() noexcept {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        return s * 0x2545f4914f6cdd1dULL;
    }
    /// Uniform in [0, n).
    std::uint64_t below(std::uint64_t n) noexcept { return n == 0 ? 0 : next() % n; }
};

/// Busy-waits at least `ns` nanoseconds of the runtime's clock.
inline void spin_ns(std::uint64_t ns) noexcept {
    const runtime::ticks start = runtime::now_ticks();
    while (runtime::ticks_to_ns(runtime::now_ticks() - start) < ns) {
    }
}

/// A random pause for a task body: nothing, a spin of a few µs, a yield, or (rarely) a sleep.
inline void random_pause(rng& r) noexcept {
    switch (r.below(16)) {
    case 0: std::this_thread::yield(); break;
    case 1: std::this_thread::sleep_for(std::chrono::microseconds(50)); break;
    case 2:
    case 3:
    case 4: spin_ns(r.below(5000)); break;
    default: break;
    }
}

/// Polls `done` (yielding) until it is true or `seconds` passed; returns done's last value.
template <class Done>
bool eventually(Done&& done, double seconds = 10.0) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (!done()) {
        if (std::chrono::steady_clock::now() > until) return done();
        std::this_thread::yield();
    }
    return true;
}

}  // namespace aloe::task_test

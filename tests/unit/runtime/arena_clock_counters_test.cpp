// Small runtime pieces: the loop arena, the clock (the counter registry: counters_test.cpp).
#include "runtime/arena.hpp"
#include "runtime/clock.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace aloe::runtime {
namespace {

TEST(RuntimeArena, SpansAreAlignedZeroedAndStable) {
    arena a;
    auto first = a.make<std::uint64_t>(3);
    first[0] = 42;
    auto big = a.make<std::uint64_t>(100000);  // forces a second block
    for (std::uint64_t v : big) EXPECT_EQ(v, 0u);
    EXPECT_EQ(first[0], 42u) << "growing must not move earlier allocations";
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(first.data()) % cache_line, 0u);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(big.data()) % cache_line, 0u);
    EXPECT_EQ(a.used_regions().size(), 2u);
}

TEST(RuntimeArena, ResetMergesBlocksSoTheSteadyStateDoesNotAllocate) {
    arena a;
    (void)a.make<std::uint64_t>(3);
    (void)a.make<std::uint64_t>(100000);
    a.reset();
    const std::size_t capacity = a.capacity();
    for (int round = 0; round < 5; ++round) {
        (void)a.make<std::uint64_t>(3);
        (void)a.make<std::uint64_t>(100000);
        EXPECT_EQ(a.used_regions().size(), 1u) << "round " << round;
        EXPECT_EQ(a.capacity(), capacity);
        a.reset();
    }
    EXPECT_TRUE(a.used_regions().empty());
}

TEST(RuntimeClock, MonotonicAndCalibrated) {
    const ticks a = now_ticks();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const ticks b = now_ticks();
    ASSERT_GT(b, a);
    // A 20 ms sleep lasts at least 20 ms; the conversion must say so (no upper bound: the
    // machine may be busy).
    EXPECT_GE(ticks_to_seconds(b - a), 0.019);
    EXPECT_GT(ticks_per_second(), 1e6);
    const std::string source = clock_source();
    EXPECT_TRUE(source == "rdtsc" || source == "steady_clock") << source;
}

// The fixed-point conversion against the exact one (long double), for clocks from the
// steady clock's 1 GHz of nanoseconds to an 8 GHz TSC and one as slow as 4 MHz, over
// durations from a tick to years.
TEST(RuntimeClock, TickScaleAgreesWithTheExactConversion) {
    for (const double rate : {4e6, 1e9, 2.1e9, 2.9e9, 3.7e9, 8e9}) {
        const tick_scale scale(rate);
        for (const ticks t : {ticks{0}, ticks{1}, ticks{3}, ticks{1000}, ticks{123456789}, ticks{1} << 40,
                              ticks{1} << 50, (ticks{1} << 56) + 12345}) {
            const long double exact = static_cast<long double>(t) * 1e9L / static_cast<long double>(rate);
            const long double got = static_cast<long double>(scale.to_ns(t));
            // Truncation (below 1 ns) plus the scale's rounding (below 1e-9 of the value).
            EXPECT_LE(got, exact + exact * 1e-9L + 1e-6L) << "rate " << rate << " ticks " << t;
            EXPECT_GE(got, exact - exact * 1e-9L - 1.0L) << "rate " << rate << " ticks " << t;
        }
    }
    // This clock's own scale is the one ticks_to_ns uses.
    const ticks second = static_cast<ticks>(ticks_per_second());
    EXPECT_NEAR(static_cast<double>(ticks_to_ns(second)), 1e9, 2.0);
    EXPECT_EQ(ticks_to_ns(second), ns_scale().to_ns(second));
}

}  // namespace
}  // namespace aloe::runtime

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

}  // namespace
}  // namespace aloe::runtime

// Whether a region takes a thread on a borrowed core (runtime/guest_efficiency.hpp): the
// bound own/(own+1) and the probes, from fed seats; and the thread CPU clock the seats read.
#include "runtime/clock.hpp"
#include "runtime/guest_efficiency.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <thread>
#include <vector>

namespace {

using aloe::runtime::guest_efficiency;

TEST(GuestEfficiency, UnknownUntilASeatLongEnoughToSayAnything) {
    guest_efficiency g;
    EXPECT_LT(g.average(), 0.0);
    EXPECT_TRUE(g.worth_a_guest(1));
    g.seat_ended(guest_efficiency::shortest_seat_s / 2, 0.0);  // too short
    g.seat_ended(std::numeric_limits<double>::quiet_NaN(), 0.001);
    g.seat_ended(0.001, -1.0);  // no CPU clock
    EXPECT_LT(g.average(), 0.0);
    EXPECT_EQ(g.refused(), 0u);
}

TEST(GuestEfficiency, AveragesWithWeightAQuarterAndCapsAtOne) {
    guest_efficiency g;
    g.seat_ended(0.004, 0.001);  // 0.25
    EXPECT_DOUBLE_EQ(g.average(), 0.25);
    g.seat_ended(0.002, 0.002);  // 1: 0.25 + (1 - 0.25) / 4
    EXPECT_DOUBLE_EQ(g.average(), 0.4375);
    g.seat_ended(0.001, 0.003);  // more CPU than wall (clock granularity): counts as 1
    EXPECT_DOUBLE_EQ(g.average(), 0.4375 + 0.25 * (1 - 0.4375));
}

// The bound: one own thread needs a guest that gets more than half its core, four own
// threads more than four fifths.
TEST(GuestEfficiency, TakesGuestsOnlyAboveOwnOverOwnPlusOne) {
    guest_efficiency g;
    g.seat_ended(0.010, 0.006);  // 0.6
    EXPECT_TRUE(g.worth_a_guest(1));   // 0.6 > 1/2
    EXPECT_FALSE(g.worth_a_guest(4));  // 0.6 < 4/5
    EXPECT_EQ(g.refused(), 1u);
    guest_efficiency h;
    h.seat_ended(0.010, 0.009);  // 0.9
    EXPECT_TRUE(h.worth_a_guest(4));
    EXPECT_FALSE(h.worth_a_guest(16));  // 16/17 = 0.94
}

TEST(GuestEfficiency, EveryProbeEveryThRefusedRegionTakesGuestsAnyway) {
    guest_efficiency g;
    g.seat_ended(0.010, 0.001);  // 0.1: refused for one own thread
    unsigned taken = 0;
    for (unsigned i = 1; i <= 2 * guest_efficiency::probe_every; ++i) {
        if (g.worth_a_guest(1)) {
            ++taken;
            EXPECT_EQ(i % guest_efficiency::probe_every, 0u) << "region " << i;
        }
    }
    EXPECT_EQ(taken, 2u);
    EXPECT_EQ(g.refused(), 2u * (guest_efficiency::probe_every - 1));
    // A probe whose guest got its core back moves the average up again.
    for (int i = 0; i < 20; ++i) g.seat_ended(0.010, 0.010);
    EXPECT_GT(g.average(), 0.99);
    EXPECT_TRUE(g.worth_a_guest(1));
}

TEST(GuestEfficiency, SeatsFromManyThreadsAllCount) {
    guest_efficiency g;
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&g] {
            for (int i = 0; i < 1000; ++i) g.seat_ended(0.001, 0.0005);
        });
    for (std::thread& t : threads) t.join();
    EXPECT_DOUBLE_EQ(g.average(), 0.5);  // every sample 0.5: any interleaving averages to it
}

TEST(ThreadCpuClock, AdvancesWithTheThreadsWorkOnly) {
    const double before = aloe::runtime::thread_cpu_seconds();
    ASSERT_GE(before, 0.0);
    volatile double x = 0;
    for (int i = 0; i < 2000000; ++i) x = x + std::sqrt(static_cast<double>(i));
    const double after = aloe::runtime::thread_cpu_seconds();
    EXPECT_GT(after, before);
    // A sleeping thread's clock stands (nearly) still while the wall clock moves.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_LT(aloe::runtime::thread_cpu_seconds() - after, 0.020);
}

}  // namespace

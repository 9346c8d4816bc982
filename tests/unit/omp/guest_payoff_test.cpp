// Whether a region site takes guests (omp/guest_payoff.hpp): the averages, the 10% bar
// of a loss, and the probes, from fed region times worked out by hand.
#include "omp/guest_payoff.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <thread>
#include <vector>

namespace {

using aloe::omp::guest_payoff;

TEST(GuestPayoff, TakesGuestsUntilBothAveragesExist) {
    guest_payoff p;
    EXPECT_TRUE(p.take_guests());
    p.region_ran(false, 2e-6);
    EXPECT_TRUE(p.take_guests());  // no region with guests seen yet
    EXPECT_EQ(p.refused(), 0u);
}

// A site that ran only with guests: every probe_every-th region runs without, until one has.
TEST(GuestPayoff, ASiteSeenOnlyWithGuestsRunsEveryProbeEveryThRegionWithout) {
    guest_payoff q;
    q.region_ran(true, 200e-6);
    for (unsigned i = 1; i <= 2 * guest_payoff::probe_every; ++i)
        EXPECT_EQ(q.take_guests(), i % guest_payoff::probe_every != 0) << "region " << i;
    EXPECT_EQ(q.refused(), 2u);
    q.region_ran(false, 190e-6);  // the probe ran: guests cost under 10%, so they stay
    for (unsigned i = 0; i < 2 * guest_payoff::probe_every; ++i) EXPECT_TRUE(q.take_guests());
    EXPECT_EQ(q.refused(), 2u);
}

// NAS's tiny regions: 2 us alone, 30 us with a guest woken on another core.
TEST(GuestPayoff, RefusesASiteGuestsMakeClearlySlower) {
    guest_payoff p;
    p.region_ran(false, 2e-6);
    p.region_ran(true, 30e-6);
    EXPECT_FALSE(p.take_guests());
    EXPECT_EQ(p.refused(), 1u);
}

// jacobi3d-mpi's 0.9 ms regions: with guests about the same on average (most faster, the one
// the lender's return stretched slower): not a loss of more than 10%, so guests stay.
TEST(GuestPayoff, KeepsGuestsWhereTheyCostAtMostTenPercent) {
    guest_payoff p;
    p.region_ran(false, 900e-6);
    p.region_ran(true, 980e-6);  // 8.9% slower
    EXPECT_TRUE(p.take_guests());
    guest_payoff q;
    q.region_ran(false, 900e-6);
    q.region_ran(true, 1000e-6);  // 11% slower
    EXPECT_FALSE(q.take_guests());
}

TEST(GuestPayoff, AveragesWithWeightAThirtySecond) {
    guest_payoff p;
    p.region_ran(true, 80e-6);
    p.region_ran(true, 400e-6);  // 80 + (400 - 80) / 32 = 90: one stretched region moves it little
    EXPECT_NEAR(p.with_guests_s(), 90e-6, 1e-15);
    p.region_ran(false, std::numeric_limits<double>::quiet_NaN());  // ignored
    p.region_ran(false, -1.0);
    EXPECT_LT(p.without_guests_s(), 0.0);
}

TEST(GuestPayoff, EveryProbeEveryThRefusedRegionTakesGuestsAnyway) {
    guest_payoff p;
    p.region_ran(false, 2e-6);
    p.region_ran(true, 30e-6);
    unsigned taken = 0;
    for (unsigned i = 1; i <= 3 * guest_payoff::probe_every; ++i) {
        if (p.take_guests()) {
            ++taken;
            EXPECT_EQ(i % guest_payoff::probe_every, 0u) << "region " << i;
        }
    }
    EXPECT_EQ(taken, 3u);
    EXPECT_EQ(p.refused(), 3u * (guest_payoff::probe_every - 1));
    // Probes that find guests cheap again bring the average down: guests are taken again.
    for (int i = 0; i < 200; ++i) p.region_ran(true, 2e-6);
    EXPECT_TRUE(p.take_guests());
}

TEST(GuestPayoff, RegionsFromManyThreadsAllCount) {
    guest_payoff p;
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&p, t] {
            for (int i = 0; i < 1000; ++i) p.region_ran(t % 2 == 0, 5e-6);
        });
    for (std::thread& t : threads) t.join();
    EXPECT_DOUBLE_EQ(p.with_guests_s(), 5e-6);  // every sample 5 us: any interleaving averages to it
    EXPECT_DOUBLE_EQ(p.without_guests_s(), 5e-6);
}

}  // namespace

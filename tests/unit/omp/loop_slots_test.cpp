// omp::join_loop and leave_loop: where each taken loop of a region lives (the ring, or an
// overflow slot when the ring slot still holds an older loop), driven from one OS thread by
// a seeded interleaver over several threads' views, so that threads any number of loops
// apart are tested without timing. Outside any OpenMP region, libgomp says no region was
// cancelled, so join_loop never forwards unless a test sets the mark itself.
#include "omp/team_region.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

namespace aloe::omp {
namespace {

struct team {
    team_region region;
    std::vector<thread_view> views;
    std::vector<loop_slot*> inside;  ///< per thread: the slot it has joined and not left
    std::map<std::uint64_t, loop_slot*> placed;  ///< loop index → where its first thread found it
    std::map<std::uint64_t, int> fills;

    explicit team(int threads) : views(static_cast<std::size_t>(threads)), inside(views.size(), nullptr) {
        EXPECT_EQ(omp_get_level(), 0) << "no region: region_cancelled() is false";
        for (int t = 0; t < threads; ++t) {
            views[static_cast<std::size_t>(t)].region = &region;
            views[static_cast<std::size_t>(t)].thread = t;
            views[static_cast<std::size_t>(t)].threads = threads;
        }
    }

    int threads() const { return static_cast<int>(views.size()); }

    // Thread t meets its next taken loop; returns its slot (nullptr: forwarded).
    loop_slot* join(int t) {
        thread_view& v = views[static_cast<std::size_t>(t)];
        const std::uint64_t index = v.loops_met;
        loop_slot* s = join_loop(v, [&](loop_slot&) { ++fills[index]; });
        if (s == nullptr) return nullptr;
        EXPECT_EQ(s->holds.load(), index + 1) << "thread " << t << " loop " << index;
        const auto [at, first] = placed.emplace(index, s);
        if (!first) {
            EXPECT_EQ(at->second, s) << "thread " << t << " found loop " << index << " elsewhere";
        }
        inside[static_cast<std::size_t>(t)] = s;
        return s;
    }

    void leave(int t) {
        loop_slot*& s = inside[static_cast<std::size_t>(t)];
        leave_loop(region, *s, threads());
        s = nullptr;
    }

    // Thread t runs `loops` loops, each joined and left at once.
    void run(int t, int loops) {
        for (int k = 0; k < loops; ++k) {
            ASSERT_NE(join(t), nullptr);
            leave(t);
        }
    }

    bool all_free() const {
        for (const loop_slot& s : region.slots)
            if (s.holds.load() != 0 || s.departed.load() != 0) return false;
        return region.overflow.size() == 0;
    }
};

TEST(OmpLoopSlots, AThreadFarAheadGetsOverflowSlotsAndTheOthersFindThem) {
    for (int ahead : {9, 16, 17, 64, 500}) {
        team tm(2);
        tm.run(1, ahead);  // thread 0 has not started the first loop
        const std::size_t ring = team_region::ring_size;
        EXPECT_EQ(tm.region.overflow.size(), static_cast<std::size_t>(ahead) - ring) << ahead;
        tm.run(0, ahead);
        EXPECT_TRUE(tm.all_free()) << ahead;
        for (const auto& [index, n] : tm.fills) EXPECT_EQ(n, 1) << "loop " << index << " filled " << n << " times";
        EXPECT_EQ(tm.fills.size(), static_cast<std::size_t>(ahead));
    }
}

TEST(OmpLoopSlots, OverflowSlotsAreReusedSoASteadyStateAllocatesNothing) {
    team tm(3);
    for (int round = 0; round < 4; ++round) {
        tm.run(2, 40);
        tm.run(1, 40);
        tm.run(0, 40);
        ASSERT_TRUE(tm.all_free()) << round;
    }
    EXPECT_EQ(tm.region.overflow.slots_made(), 40 - team_region::ring_size)
        << "the first round made one per loop beyond the ring; the others reused them";
}

TEST(OmpLoopSlots, AForwardingMarkSendsLaterLoopsToLibgompButKeepsPlacedOnes) {
    team tm(2);
    tm.run(1, 12);  // loops 0..11 placed (8..11 in overflow)
    {
        std::lock_guard lock(tm.region.mutex);
        tm.region.forward_from = 12;  // as join_loop_slow sets it in a cancelled region
    }
    EXPECT_EQ(tm.join(1), nullptr);
    for (int k = 0; k < 12; ++k) {
        ASSERT_NE(tm.join(0), nullptr) << "loop " << k << " was placed before the mark";
        tm.leave(0);
    }
    EXPECT_EQ(tm.join(0), nullptr);
    EXPECT_TRUE(tm.all_free());
}

// Threads meet loops in a seeded random order: each step, one thread joins its next loop or
// leaves the one it is in, so they drift any number of loops apart and back.
TEST(OmpLoopSlots, SeededInterleavingsAgreeOnEveryLoopAndFreeEverySlot) {
    constexpr int loops = 300;
    for (int threads : {1, 2, 3, 5}) {
        for (std::uint32_t seed = 1; seed <= 20; ++seed) {
            team tm(threads);
            std::mt19937 rng(seed);
            std::vector<int> done(static_cast<std::size_t>(threads), 0);
            int finished = 0;
            std::size_t most_overflow = 0;
            while (finished < threads) {
                const int t = static_cast<int>(rng() % static_cast<std::uint32_t>(threads));
                const auto ti = static_cast<std::size_t>(t);
                if (done[ti] == loops) continue;
                // Thread 0 lags: it moves a quarter as often as the others.
                if (t == 0 && threads > 1 && rng() % 4 != 0) continue;
                if (tm.inside[ti] == nullptr) {
                    ASSERT_NE(tm.join(t), nullptr);
                    most_overflow = std::max(most_overflow, tm.region.overflow.size());
                } else {
                    tm.leave(t);
                    finished += ++done[ti] == loops;
                }
            }
            ASSERT_TRUE(tm.all_free()) << threads << " threads, seed " << seed;
            if (threads > 1) {
                EXPECT_GT(most_overflow, 0u) << "the lagging thread fell a ring behind";
            }
            ASSERT_EQ(tm.fills.size(), static_cast<std::size_t>(loops));
            for (const auto& [index, n] : tm.fills) ASSERT_EQ(n, 1) << "loop " << index;
        }
    }
}

}  // namespace
}  // namespace aloe::omp

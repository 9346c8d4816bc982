// The race's replay split: a cost profile learned from static block times must balance a
// ramp, a slow core and a hot spot in a few runs, keep its shape across trip counts, and
// move only part of the way on one disturbed run.
#include "adapt/cost_profile.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <vector>

namespace aloe::adapt {
namespace {

// The exact cost of [begin, end) (fractions) under density `cost`, by the midpoint rule on
// a fine grid, divided by the speed of the thread that runs it.
double exact(const std::function<double(double)>& cost, double begin, double end) {
    constexpr int steps = 20000;
    double sum = 0;
    for (int i = 0; i < steps; ++i) {
        const double x = (static_cast<double>(i) + 0.5) / steps;
        if (x >= begin && x < end) sum += cost(x) / steps;
    }
    return sum;
}

// One static run with `weights` on a loop of density `cost` and per-thread `speed`: the
// block times, folded into `profile`; returns the run's max/mean block time.
double run_once(cost_profile& profile, const std::vector<double>& weights, const std::function<double(double)>& cost,
                const std::vector<double>& speed, double disturb_thread_s = 0, std::size_t disturbed = 0) {
    const double sum = std::accumulate(weights.begin(), weights.end(), 0.0);
    std::vector<cost_profile::block_time> blocks;
    double begin = 0, most = 0, all = 0;
    for (std::size_t t = 0; t < weights.size(); ++t) {
        const double end = t + 1 == weights.size() ? 1.0 : begin + weights[t] / sum;
        double s = exact(cost, begin, end) / speed[t];
        if (t == disturbed) s += disturb_thread_s;
        blocks.push_back({begin, end, s});
        most = std::max(most, s);
        all += s;
        begin = end;
    }
    profile.observe(blocks);
    return most / (all / static_cast<double>(weights.size()));
}

// Runs static blocks split by the profile `runs` times; the last run's imbalance.
double balance(cost_profile& profile, std::size_t threads, const std::function<double(double)>& cost,
               const std::vector<double>& speed, int runs) {
    std::vector<double> w(threads, 1.0);
    double imbalance = run_once(profile, w, cost, speed);
    for (int r = 1; r < runs; ++r) {
        profile.split(w);
        imbalance = run_once(profile, w, cost, speed);
    }
    return imbalance;
}

TEST(CostProfile, EqualSplitWhileNothingIsKnown) {
    const cost_profile profile;
    std::vector<double> w(4, 0.0);
    profile.split(w);
    for (const double x : w) EXPECT_DOUBLE_EQ(x, 1.0);
    EXPECT_FALSE(profile.known());
}

TEST(CostProfile, ARampIsBalancedInAFewRuns) {
    const auto ramp = [](double x) { return 0.1 + x; };
    for (const std::size_t threads : {2u, 4u, 16u}) {
        cost_profile profile;
        const std::vector<double> speed(threads, 1.0);
        // Equal blocks of a ramp are far off: 1.83 on two threads.
        std::vector<double> equal(threads, 1.0);
        cost_profile scratch;
        EXPECT_GT(run_once(scratch, equal, ramp, speed), 1.3) << threads;
        EXPECT_LT(balance(profile, threads, ramp, speed, 4), 1.02) << threads << " threads";
        // The split puts fewer iterations where they cost more.
        std::vector<double> w(threads);
        profile.split(w);
        EXPECT_GT(w.front(), w.back());
    }
}

TEST(CostProfile, AHotSpotAndASlowCoreAreBalanced) {
    // A tenth of the space costs 20 times the rest (a refined region), on 4 threads: equal
    // blocks are 2.97 off; block times alone find a spot this sharp slowly once the damped
    // runs begin (1.07 after 8 runs, 1.02 after 16).
    const auto hot = [](double x) { return x > 0.3 && x < 0.4 ? 20.0 : 1.0; };
    cost_profile a;
    EXPECT_LT(balance(a, 4, hot, {1, 1, 1, 1}, 8), 1.10);
    cost_profile a16;
    EXPECT_LT(balance(a16, 4, hot, {1, 1, 1, 1}, 16), 1.03);
    // Uniform cost, thread 1 at half speed: it gets half the others' share.
    const auto flat = [](double) { return 1.0; };
    cost_profile b;
    EXPECT_LT(balance(b, 2, flat, {1.0, 0.5}, 4), 1.02);
    std::vector<double> w(2);
    b.split(w);
    EXPECT_NEAR(w[0] / w[1], 2.0, 0.05);
}

TEST(CostProfile, OneDisturbedRunMovesTheSplitOnlyPartWay) {
    const auto flat = [](double) { return 1.0; };
    cost_profile profile;
    const std::vector<double> speed{1.0, 1.0};
    balance(profile, 2, flat, speed, 3);
    std::vector<double> w(2);
    profile.split(w);
    EXPECT_NEAR(w[0], 1.0, 0.01);
    // Thread 0's block took twice its time once (a noise event as long as the block).
    run_once(profile, w, flat, speed, exact(flat, 0, 0.5), 0);
    profile.split(w);
    // Taken whole it would give thread 0 a third; half the way in log terms, ~0.41.
    EXPECT_GT(w[0] / 2, 0.38);
    EXPECT_LT(w[0] / 2, 0.5);
    // Quiet runs bring it back.
    for (int r = 0; r < 8; ++r) {
        run_once(profile, w, flat, speed);
        profile.split(w);
    }
    EXPECT_NEAR(w[0], 1.0, 0.02);
}

TEST(CostProfile, AnAssumedSplitIsWhatItSplitsInto) {
    cost_profile profile;
    const std::vector<double> recalled{1.5, 0.5, 1.0, 1.0};
    profile.assume_split(recalled);
    EXPECT_TRUE(profile.known());
    std::vector<double> w(4);
    profile.split(w);
    for (std::size_t t = 0; t < w.size(); ++t) EXPECT_NEAR(w[t], recalled[t], 0.02) << t;
    EXPECT_NEAR(profile.imbalance(recalled), 1.0, 0.02);
    EXPECT_GT(profile.imbalance(std::vector<double>(4, 1.0)), 1.2);
}

TEST(CostProfile, BlocksThatNeverRanKeepTheirShare) {
    cost_profile profile;
    // A block of no time (or reversed, or empty) is not evidence: the profile ignores it.
    const std::vector<cost_profile::block_time> junk{{0.0, 0.5, 0.0}, {0.6, 0.5, 1.0}, {0.7, 0.7, 1.0}};
    profile.observe(junk);
    EXPECT_FALSE(profile.known());
    // All the cost in one spot still leaves every block a sliver.
    const std::vector<cost_profile::block_time> spot{{0.0, 0.5, 1.0}, {0.5, 1.0, 1e-9}};
    profile.observe(spot);
    std::vector<double> w(2);
    profile.split(w);
    EXPECT_GT(w[1], 0.0);
    EXPECT_NEAR(w[0] + w[1], 2.0, 1e-3);
}

}  // namespace
}  // namespace aloe::adapt

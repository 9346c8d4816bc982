// The race's arithmetic: Welford's statistics, Student's t intervals, elimination, the
// budget's fallback to the best mean, re-check slots and take-overs, carried-over samples.
#include "adapt/candidate_race.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

namespace aloe::adapt {
namespace {

TEST(RunningStats, MatchesTheTwoPassMeanAndVariance) {
    const std::vector<double> x{3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0};
    running_stats s;
    for (double v : x) s.add(v);
    const double mean = std::accumulate(x.begin(), x.end(), 0.0) / 8;
    double ss = 0;
    for (double v : x) ss += (v - mean) * (v - mean);
    EXPECT_EQ(s.n, 8u);
    EXPECT_DOUBLE_EQ(s.mean, mean);
    EXPECT_NEAR(s.variance(), ss / 7, 1e-12);
    EXPECT_EQ(s.least, 1.0);
    EXPECT_NEAR(s.half_width(), student_t95(7) * std::sqrt(ss / 7 / 8), 1e-12);
    EXPECT_TRUE(std::isinf(running_stats{}.half_width()));
}

TEST(RunningStats, StudentTQuantilesShrinkTowardsTheNormal) {
    EXPECT_NEAR(student_t95(1), 6.314, 1e-3);
    EXPECT_NEAR(student_t95(10), 1.812, 1e-3);
    EXPECT_NEAR(student_t95(1000), 1.645, 1e-3);
    for (std::uint64_t d = 1; d < 200; ++d) EXPECT_GE(student_t95(d), student_t95(d + 1));
}

TEST(CandidateRace, RunsRoundRobinAndDropsTheClearlySlower) {
    candidate_race r({"a", "b", "c"});
    std::mt19937 rng(3);
    std::normal_distribution<double> noise(0, 0.01);
    const double cost[] = {1.0, 1.5, 1.02};
    std::vector<int> ran;
    while (!r.decided()) {
        const int i = r.to_run();
        ran.push_back(i);
        r.observe(i, cost[i] + noise(rng));
    }
    // Round robin: the first round runs each once (in an order drawn at random).
    ASSERT_GE(ran.size(), 3u);
    std::vector<int> first(ran.begin(), ran.begin() + 3);
    std::sort(first.begin(), first.end());
    EXPECT_EQ(first, (std::vector<int>{0, 1, 2}));
    EXPECT_FALSE(r.entries()[1].in) << "1.5 against 1.0 at 1% noise";
    EXPECT_EQ(r.winner(), 0);
    EXPECT_LE(r.samples_in_race(), 18);
}

TEST(CandidateRace, InsideEachOthersNoiseTheBudgetEndsItOnTheBestMean) {
    candidate_race r({"a", "b"}, race_options{10, 5, 0.0});  // intervals only
    // Alternating wide samples: a's mean 1.00, b's 1.01; ±30% spreads never separate.
    const double a[] = {0.7, 1.3}, b[] = {1.31, 0.71};
    int k = 0;
    while (!r.decided()) {
        const int i = r.to_run();
        const double* samples = i == 0 ? a : b;
        r.observe(i, samples[(k++ / 2) % 2]);
    }
    EXPECT_EQ(r.how(), candidate_race::verdict::best_mean);
    EXPECT_EQ(r.samples_in_race(), 10);
    EXPECT_TRUE(r.entries()[0].in && r.entries()[1].in);
    EXPECT_EQ(r.winner(), r.entries()[0].stats.mean <= r.entries()[1].stats.mean ? 0 : 1);
}

TEST(CandidateRace, ReChecksTheRunnerUpAndLetsItTakeOver) {
    candidate_race r({"a", "b"}, race_options{4, 4, 0.0});  // intervals only
    // The race ends on a (b unlucky), then b proves faster in its re-check slots.
    const double a[] = {1.0, 1.2}, b[] = {1.4, 1.0};
    int na = 0, nb = 0;
    for (int i = 0; i < 4; ++i) {
        const int k = r.to_run();
        r.observe(k, k == 0 ? a[na++] : b[nb++]);
    }
    ASSERT_TRUE(r.decided());
    ASSERT_EQ(r.winner(), 0);
    int rechecks = 0;
    for (int i = 0; i < 80 && r.winner() == 0; ++i) {
        const int k = r.to_run();
        if (k == 1) ++rechecks;
        r.observe(k, k == 0 ? 1.1 : 0.9);
    }
    EXPECT_EQ(r.winner(), 1);
    EXPECT_TRUE(r.take_winner_changed());
    EXPECT_FALSE(r.take_winner_changed());
    EXPECT_GE(rechecks, 1);
}

TEST(CandidateRace, AGrossGapDropsACandidateAtItsSecondSampleByLeastTimes) {
    candidate_race r({"fast", "slow", "close", "cold first"}, race_options{18, 10, 0.15});
    r.observe(0, 1.00);
    r.observe(1, 1.40);
    r.observe(2, 1.05);
    r.observe(3, 1.60);  // tried first, while the program warmed up
    for (const auto& e : r.entries()) EXPECT_TRUE(e.in) << "one sample judges nothing";
    r.observe(0, 1.01);
    r.observe(1, 1.30);  // least 1.30 > 1.15 × 1.00: out
    r.observe(2, 1.04);
    r.observe(3, 0.98);  // warm now: its least is the best
    EXPECT_FALSE(r.entries()[1].in);
    EXPECT_TRUE(r.entries()[2].in);
    EXPECT_TRUE(r.entries()[3].in) << "a cold first sample must not cost a candidate its place";
    EXPECT_FALSE(r.decided());
}

TEST(CandidateRace, ALateCandidateGetsTheReCheckSlots) {
    candidate_race r({"a", "b"}, race_options{4, 2});
    for (int i = 0; i < 4; ++i) {
        const int k = r.to_run();
        r.observe(k, k == 0 ? 1.0 : 2.0);
    }
    ASSERT_TRUE(r.decided());
    const int late = r.add("c");
    EXPECT_EQ(r.add("c"), late);
    int runs_of_late = 0;
    for (int i = 0; i < 12; ++i) {
        const int k = r.to_run();
        if (k == late) ++runs_of_late;
        r.observe(k, k == late ? 0.5 : 1.0);
    }
    EXPECT_GE(runs_of_late, 3);
    EXPECT_EQ(r.winner(), late);
}

TEST(CandidateRace, CarriedOverSamplesPoolAndFinishARaceCutShort) {
    candidate_race first({"a", "b", "c"}, race_options{12, 10});
    for (int i = 0; i < 7; ++i) {
        const int k = first.to_run();
        first.observe(k, 1.0 + 0.1 * k + 0.01 * i);
    }
    ASSERT_FALSE(first.decided());
    const std::vector<candidate_memory> kept = first.remember();
    ASSERT_EQ(kept.size(), 3u);

    candidate_race next({"a", "b", "c"}, race_options{12, 10});
    next.recall(kept, false, "");
    for (std::size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(next.entries()[i].stats.n, first.entries()[i].stats.n);
        EXPECT_DOUBLE_EQ(next.entries()[i].stats.mean, first.entries()[i].stats.mean);
    }
    EXPECT_EQ(next.samples_in_race(), 7);
    int more = 0;
    while (!next.decided()) {
        const int k = next.to_run();
        next.observe(k, 1.0 + 0.1 * k);
        ++more;
    }
    EXPECT_LE(more, 12 - 7);
    EXPECT_EQ(next.winner(), 0);

    // Pooling is exact: Chan's combination equals one pass over both halves.
    candidate_race pooled({"x"});
    running_stats all, half;
    for (double v : {1.0, 2.0, 4.0}) all.add(v), half.add(v);
    pooled.recall({{"x", false, half.n, half.mean, half.m2, false}}, false, "");
    pooled.recall({{"x", false, half.n, half.mean, half.m2, false}}, false, "");
    for (double v : {1.0, 2.0, 4.0}) all.add(v);
    EXPECT_EQ(pooled.entries()[0].stats.n, 6u);
    EXPECT_NEAR(pooled.entries()[0].stats.mean, all.mean, 1e-12);
    EXPECT_NEAR(pooled.entries()[0].stats.m2, all.m2, 1e-12);
}

TEST(CandidateRace, RecallRestoresADecidedRaceAndIgnoresBadNumbers) {
    candidate_race r({"a", "b"});
    r.recall({{"a", false, 5, 1.0, 0.01, false},
              {"b", false, 5, 0.9, 0.01, false},
              {"c", false, 3, std::nan(""), 0, false},
              {"d", false, 3, -1.0, 0, false}},
             true, "b");
    EXPECT_TRUE(r.decided());
    EXPECT_EQ(r.winner(), 1);
    EXPECT_EQ(r.find("c"), -1);
    EXPECT_EQ(r.find("d"), -1);
}

}  // namespace
}  // namespace aloe::adapt

// Slack prediction on recorded traces (exact values, no timing): the seed, the last-value
// predictor's and the windowed median's errors, the change detector.
#include "mpi/slack_prediction.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace {

using aloe::mpi::slack_predictor;

void feed(slack_predictor& p, const std::vector<double>& slacks, double interval_s = 0) {
    for (const double s : slacks) p.observe(s, interval_s);
}

TEST(MpiSlackPrediction, TheSeedIsTheFirstPredictionOfBoth) {
    slack_predictor p(2e-3);
    EXPECT_DOUBLE_EQ(p.predict_last(), 2e-3);
    EXPECT_DOUBLE_EQ(p.predict_median(), 2e-3);
    p.observe(5e-3, 10e-3);
    EXPECT_DOUBLE_EQ(p.error_of_last().abs_error_s, 3e-3);
    EXPECT_DOUBLE_EQ(p.error_of_median().abs_error_s, 3e-3);
    EXPECT_DOUBLE_EQ(p.predict_last(), 5e-3);
    EXPECT_DOUBLE_EQ(p.error_of_last().relative_to_interval(), 0.3);
}

TEST(MpiSlackPrediction, AConstantSlackIsPredictedExactlyAfterTheFirst) {
    slack_predictor p(0);
    feed(p, std::vector<double>(20, 1e-3));
    EXPECT_DOUBLE_EQ(p.error_of_last().abs_error_s, 1e-3);  // the seed's miss only
    EXPECT_DOUBLE_EQ(p.error_of_median().abs_error_s, 1e-3);
    EXPECT_EQ(p.changes(), 0u);
    EXPECT_NEAR(p.error_of_last().relative_to_slack(), 1.0 / 20, 1e-12);
}

TEST(MpiSlackPrediction, OneLateStepMovesTheMedianNotAtAll) {
    slack_predictor p(1e-3);
    feed(p, {1e-3, 1e-3, 1e-3, 1e-3, 9e-3, 1e-3, 1e-3, 1e-3});
    // last: misses the spike (8 ms) and the step after it (8 ms); median: only the spike.
    EXPECT_NEAR(p.error_of_last().abs_error_s, 16e-3, 1e-12);
    EXPECT_NEAR(p.error_of_median().abs_error_s, 8e-3, 1e-12);
    EXPECT_DOUBLE_EQ(p.predict_median(), 1e-3);
    EXPECT_EQ(p.changes(), 0u);
}

TEST(MpiSlackPrediction, ALastingChangeRestartsTheWindowWithinTwoInvocations) {
    slack_predictor p(1e-3);
    feed(p, std::vector<double>(10, 1e-3));
    feed(p, std::vector<double>(10, 3e-3));
    EXPECT_EQ(p.changes(), 1u);
    EXPECT_DOUBLE_EQ(p.predict_median(), 3e-3);
    // The median misses the first two of the new phase (2 ms each); last misses the first.
    EXPECT_NEAR(p.error_of_median().abs_error_s, 4e-3, 1e-12);
    EXPECT_NEAR(p.error_of_last().abs_error_s, 2e-3, 1e-12);
}

// The lending rule sees the waits as they came: a noise event the median keeps out of its
// window is in recent(), and only the last `window` of them are.
TEST(MpiSlackPrediction, RecentKeepsTheLastWaitsFarOnesIncluded) {
    slack_predictor p(1e-3);
    EXPECT_TRUE(p.recent().empty());
    feed(p, {1e-3, 1e-3, 1e-3, 1e-3, 9e-3});
    EXPECT_DOUBLE_EQ(p.predict_median(), 1e-3);  // the median left the 9 ms out
    std::vector<double> seen(p.recent().begin(), p.recent().end());
    std::sort(seen.begin(), seen.end());
    EXPECT_EQ(seen, (std::vector<double>{1e-3, 1e-3, 1e-3, 1e-3, 9e-3}));
    std::vector<double> many;
    for (int i = 1; i <= 2 * slack_predictor::window; ++i) many.push_back(i * 1e-3);
    feed(p, many);
    seen.assign(p.recent().begin(), p.recent().end());
    std::sort(seen.begin(), seen.end());
    ASSERT_EQ(seen.size(), static_cast<std::size_t>(slack_predictor::window));
    EXPECT_DOUBLE_EQ(seen.front(), (slack_predictor::window + 1) * 1e-3);
    EXPECT_DOUBLE_EQ(seen.back(), 2 * slack_predictor::window * 1e-3);
}

TEST(MpiSlackPrediction, FarValuesOnOppositeSidesAreNoChange) {
    slack_predictor p(1e-3);
    feed(p, {1e-3, 1e-3, 1e-3, 1e-3, 5e-3, 0.0, 1e-3});
    EXPECT_EQ(p.changes(), 0u);
    EXPECT_DOUBLE_EQ(p.predict_median(), 1e-3);
}

TEST(MpiSlackPrediction, AlternatingSlackFavoursTheMedianOverTheLastValue) {
    // A rank that waits in every other step (two kinds of step at one call site): the last
    // value is wrong every time, the median only on the minority steps.
    slack_predictor p(0);
    for (int i = 0; i < 40; ++i) p.observe(i % 4 == 3 ? 4e-3 : 1e-3);
    EXPECT_LT(p.error_of_median().abs_error_s, p.error_of_last().abs_error_s);
    EXPECT_EQ(p.changes(), 0u);
}

TEST(MpiSlackPrediction, NegativeSlackCountsAsNoneAndUndefinedRatiosSaySo) {
    slack_predictor p(0);
    p.observe(-1e-6);
    EXPECT_DOUBLE_EQ(p.predict_last(), 0.0);
    EXPECT_LT(p.error_of_last().relative_to_slack(), 0) << "a rank that never waits: undefined";
    EXPECT_LT(p.error_of_last().relative_to_interval(), 0) << "no interval given";
}

}  // namespace

// The per-step lending report (mpi/lending_steps.hpp): steps cut where the first wait's path
// recurs, their sums worked out by hand, and the JSON, trace and summary it writes.
#include "mpi/lending_steps.hpp"
#include "unit/strict_json.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using namespace aloe::mpi;
using aloe::testing::json_value;
using aloe::testing::strict_json_reader;

// One wait of path `path`: the phase [start, entry), the wait [entry, end).
phase_sample wait_of(std::size_t path, double start, double entry, double end, std::optional<double> predicted,
                     double lent, double borrowed_total, unsigned own = 2) {
    return {.path = path, .phase_start_s = start, .entry_s = entry, .end_s = end, .predicted_s = predicted,
            .lent_core_s = lent, .borrowed_total_core_s = borrowed_total, .own_threads = own};
}

// A halo wait (path 7) then an Allreduce (path 3) each step, the steps from t = 1 s.
lending_steps two_steps() {
    lending_steps log;
    log.add(wait_of(9, 0.0, 0.1, 0.2, std::nullopt, 0, 0));       // a set-up Barrier: never again
    log.add(wait_of(7, 0.2, 0.4, 0.5, std::nullopt, 0, 0));
    log.add(wait_of(3, 0.5, 0.7, 0.8, std::nullopt, 0, 0));
    log.add(wait_of(7, 0.8, 0.9, 1.0, std::nullopt, 0, 0));       // 7 recurs first: the steps start
    log.add(wait_of(3, 1.0, 1.5, 1.6, 0.05, 0.1, 0.2));           // step 0, phase 1
    log.add(wait_of(7, 1.6, 1.9, 2.0, std::nullopt, 0.0, 0.5));   // step 0 ends
    log.add(wait_of(3, 2.0, 2.2, 2.6, 0.3, 0.8, 0.5));            // step 1
    log.add(wait_of(7, 2.6, 2.8, 2.9, 0.02, 0.0, 0.5));           // step 1 ends
    log.add(wait_of(3, 2.9, 3.0, 3.1, 0.0, 0.0, 0.6));            // a step still open
    return log;
}

TEST(MpiLendingSteps, AStepIsTheCycleOfTheFirstWaitsPath) {
    const lending_steps log = two_steps();
    ASSERT_EQ(log.steps().size(), 2u);  // the open one is not reported
    const lending_step& a = log.steps()[0];
    EXPECT_DOUBLE_EQ(a.start_s, 1.0);
    EXPECT_DOUBLE_EQ(a.seconds, 1.0);
    EXPECT_DOUBLE_EQ(a.compute_s, 0.5 + 0.3);
    EXPECT_NEAR(a.waited_s, 0.1 + 0.1, 1e-12);
    EXPECT_DOUBLE_EQ(a.predicted_s, 0.05);  // the halo wait had no prediction
    EXPECT_DOUBLE_EQ(a.lent_core_s, 0.1);
    EXPECT_DOUBLE_EQ(a.borrowed_core_s, 0.5);
    EXPECT_EQ(a.waits, 2u);
    EXPECT_DOUBLE_EQ(a.threads_used(), 2 + (0.5 - 0.1) / 1.0);
    const lending_step& b = log.steps()[1];
    EXPECT_DOUBLE_EQ(b.start_s, 2.0);
    EXPECT_NEAR(b.seconds, 0.9, 1e-12);
    EXPECT_NEAR(b.predicted_s, 0.32, 1e-12);
    EXPECT_DOUBLE_EQ(b.borrowed_core_s, 0.0);  // the running total did not move
    EXPECT_NEAR(b.threads_used(), 2 - 0.8 / 0.9, 1e-12);
}

TEST(MpiLendingSteps, ACodeWhosePathsNeverRecurHasNoStep) {
    lending_steps log;
    for (int i = 0; i < 5; ++i) log.add(wait_of(static_cast<std::size_t>(i), i, i + 0.5, i + 1.0, 0.1, 0, 0));
    EXPECT_TRUE(log.steps().empty());
    EXPECT_NE(log.summary_text(0, "reactive").find("no step completed"), std::string::npos);
}

TEST(MpiLendingSteps, WritesStrictJsonWithEveryStep) {
    const lending_steps log = two_steps();
    std::string error;
    const auto doc = strict_json_reader::parse("{" + log.json_members() + "}", error);
    ASSERT_TRUE(doc) << error;
    const json_value* steps = doc->member("steps");
    ASSERT_NE(steps, nullptr);
    ASSERT_EQ(steps->items.size(), 2u);
    EXPECT_DOUBLE_EQ(std::stod(steps->items[0].member("predicted_s")->text), 0.05);
    EXPECT_EQ(steps->items[0].member("own_threads")->text, "2");
    EXPECT_EQ(doc->member("steps_dropped")->text, "0");
    // No step: still strict JSON (an empty array).
    const auto empty = strict_json_reader::parse("{" + lending_steps{}.json_members() + "}", error);
    ASSERT_TRUE(empty) << error;
    EXPECT_TRUE(empty->member("steps")->items.empty());
}

TEST(MpiLendingSteps, TraceEventsAreAJsonArrayOnTheirOwnTrack) {
    const lending_steps log = two_steps();
    std::string error;
    const auto doc = strict_json_reader::parse("[" + log.trace_events(4242, 1) + "]", error);
    ASSERT_TRUE(doc) << error;
    // The track's name, then per step a slice and a counter.
    ASSERT_EQ(doc->items.size(), 1u + 2 * 2);
    EXPECT_EQ(doc->items[0].member("ph")->text, "M");
    const json_value& slice = doc->items[1];
    EXPECT_EQ(slice.member("ph")->text, "X");
    EXPECT_EQ(slice.member("pid")->text, "4242");
    EXPECT_EQ(slice.member("ts")->text, "1000000.000");
    EXPECT_EQ(slice.member("dur")->text, "1000000.000");
    EXPECT_EQ(doc->items[2].member("ph")->text, "C");
    EXPECT_NE(doc->items[2].member("args")->member("cores borrowed"), nullptr);
}

TEST(MpiLendingSteps, TheSummaryGivesMediansAndElidesTheMiddleSteps) {
    lending_steps log;
    log.add(wait_of(1, 0, 0, 0.0005, std::nullopt, 0, 0, 1));
    log.add(wait_of(1, 0.0005, 0.0008, 0.001, std::nullopt, 0, 0, 1));
    for (int i = 0; i < 10; ++i) {
        const double t = 0.001 + i * 0.010;
        log.add(wait_of(1, t, t + 0.008, t + 0.010, 0.002, 0.002, 0.0, 1));
    }
    const std::string text = log.summary_text(3, "predictive");
    EXPECT_NE(text.find("lending, rank 3 (predictive): 10 steps, 1 own threads"), std::string::npos) << text;
    EXPECT_NE(text.find("median step 10.000 ms: compute 8.000, waited 2.000 (predicted 2.000)"), std::string::npos)
        << text;
    EXPECT_NE(text.find("4 more;"), std::string::npos) << text;  // 3 first, 3 last shown
}

TEST(MpiLendingSteps, StepsBeyondTheKeptOnesAreCounted) {
    lending_steps log;
    log.add(wait_of(1, 0, 0, 0, std::nullopt, 0, 0));
    log.add(wait_of(1, 0, 0, 0, std::nullopt, 0, 0));
    const std::size_t n = lending_steps::most_kept + 5;
    for (std::size_t i = 0; i < n; ++i) log.add(wait_of(1, 0, 0, 0, std::nullopt, 0, 0));
    EXPECT_EQ(log.steps().size(), lending_steps::most_kept);
    EXPECT_EQ(log.dropped(), 5u);
}

}  // namespace

// adapt/probes: what each probe measures and where it records it; values are checked for
// shape (finite, non-negative, derived as documented), never for speed.
#include "adapt/probes.hpp"

#include <aloe/loop_site.hpp>
#include <aloe/stats.hpp>
#include <aloe/team.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

namespace {
using namespace aloe::adapt;

TEST(AdaptProbes, DequeueCostRunsInterleavedProbeLoopsOnTheTeam) {
    aloe::team t(2);
    const auto before = aloe::stats_of(aloe::loop_site("aloe.probe.dynamic"));
    const std::uint64_t runs_before = before ? before->invocations + before->serial_invocations : 0;
    const double q = measure_dequeue_cost(t, 3, 4096);
    EXPECT_TRUE(std::isfinite(q));
    EXPECT_GE(q, 0.0);
    const auto dyn = aloe::stats_of(aloe::loop_site("aloe.probe.dynamic"));
    const auto fixed = aloe::stats_of(aloe::loop_site("aloe.probe.static"));
    ASSERT_TRUE(dyn && fixed);
    EXPECT_EQ(dyn->invocations + dyn->serial_invocations - runs_before, 3u);
    EXPECT_EQ(dyn->schedule.rfind("dynamic", 0), 0u);
    EXPECT_EQ(fixed->schedule, "static");
    EXPECT_THROW(measure_dequeue_cost(t, 0, 10), std::invalid_argument);
    EXPECT_THROW(measure_dequeue_cost(t, 1, 0), std::invalid_argument);
}

TEST(AdaptProbes, NoiseLengthIsFiniteAndNonNegative) {
    const double delta = measure_noise_length(5, 0.01);
    EXPECT_TRUE(std::isfinite(delta));
    EXPECT_GE(delta, 0.0);
    EXPECT_THROW(measure_noise_length(0, 0.01), std::invalid_argument);
}

TEST(AdaptProbes, IterationTimeIsTheLeastBusyThreadPerIteration) {
    aloe::site_stats s;
    EXPECT_FALSE(iteration_time(s).has_value());
    s.last.resize(3);
    s.last[0] = {0.004, 0.001, 0, 1000, 0, 0};  // 5 µs per iteration
    s.last[1] = {0.003, 0.0, 0, 1000, 0, 0};    // 3 µs: the least disturbed thread
    s.last[2] = {0.001, 0.0, 0, 0, 0, 0};       // no iterations: ignored
    ASSERT_TRUE(iteration_time(s).has_value());
    EXPECT_DOUBLE_EQ(*iteration_time(s), 3e-6);
}

}  // namespace

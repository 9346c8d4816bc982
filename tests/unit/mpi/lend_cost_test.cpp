// What a lend costs the lender (mpi/lend_cost.hpp) from fed phases, and the predictive rule
// that lends only where the slack covers it (mpi/lending_rule.hpp): numbers worked out by hand.
#include "mpi/lend_cost.hpp"
#include "mpi/lending_rule.hpp"

#include <gtest/gtest.h>

#include <vector>

#include <limits>

namespace {

using namespace aloe::mpi;
using aloe::runtime::lend_mode;

TEST(MpiLendCost, NothingIsKnownUntilAPhaseAfterALend) {
    lend_cost c;
    EXPECT_EQ(c.cost_s(), 0.0);
    c.phase_ended(false, 0.010, 0.006);  // 4 ms off the CPU after a kept wait: the baseline
    EXPECT_EQ(c.cost_s(), 0.0);
}

TEST(MpiLendCost, IsTheTimeLostAfterALendBeyondTheBaseline) {
    lend_cost c;
    c.phase_ended(false, 0.010, 0.0095);  // baseline 0.5 ms
    c.phase_ended(true, 0.014, 0.0095);   // after a lend: 4.5 ms
    EXPECT_NEAR(c.cost_s(), 0.004, 1e-12);
    // Weight 1/4: a second phase after a lend losing 0.5 ms moves the average 4.5 -> 3.5 ms.
    c.phase_ended(true, 0.010, 0.0095);
    EXPECT_NEAR(c.cost_s(), 0.003, 1e-12);
    // The baseline moves the same way: 0.5 -> 1.25 ms after a kept phase losing 3.5 ms.
    c.phase_ended(false, 0.010, 0.0065);
    EXPECT_NEAR(c.cost_s(), 0.0035 - 0.00125, 1e-12);
}

TEST(MpiLendCost, NeverNegativeAndIgnoresBrokenSamples) {
    lend_cost c;
    c.phase_ended(false, 0.010, 0.002);  // baseline 8 ms
    c.phase_ended(true, 0.010, 0.009);   // 1 ms after a lend: cheaper than the baseline
    EXPECT_EQ(c.cost_s(), 0.0);
    lend_cost d;
    d.phase_ended(true, 0.005, 0.007);  // more CPU than wall (clock granularity): no loss
    EXPECT_EQ(d.cost_s(), 0.0);
    d.phase_ended(true, std::numeric_limits<double>::quiet_NaN(), 0.001);
    d.phase_ended(true, 0.004, -1.0);  // an unreadable CPU clock
    EXPECT_EQ(d.cost_s(), 0.0);
    d.phase_ended(true, 0.006, 0.001);
    EXPECT_NEAR(d.cost_s(), 0.25 * 0.005, 1e-12);  // 0 -> 5 ms with weight 1/4
}

TEST(MpiLendCost, EveryProbeEveryThRefusalLendsAnyway) {
    lend_cost c;
    unsigned probes = 0;
    for (unsigned i = 1; i <= 3 * lend_cost::probe_every; ++i) {
        if (c.probe_instead_of_refusing()) {
            ++probes;
            EXPECT_EQ(i % lend_cost::probe_every, 0u) << "probe " << i;
        }
    }
    EXPECT_EQ(probes, 3u);
    EXPECT_EQ(c.refused(), 3u * (lend_cost::probe_every - 1));
}

TEST(MpiLendCost, TheRuleLendsOnlyWhereTheSlackCoversTheCost) {
    lending_settings s;
    s.mode = lend_mode::predictive;
    s.least_slack_s = 1e-3;
    s.lend_cost_s = 4e-3;
    const auto after = [&](std::vector<double> recent) { return wait_before_lending(s, recent); };
    // BT-MZ's waits: worth 1 ms, not 5. Nothing pays: the guard waits out both.
    EXPECT_FALSE(after({1.2e-3, 1.2e-3}).paid);
    EXPECT_EQ(after({1.2e-3, 1.2e-3}).after_s, 5e-3);
    EXPECT_FALSE(after({4.9e-3}).paid);
    EXPECT_EQ(after({5e-3}).after_s, 0.0);
    EXPECT_TRUE(after({5e-3}).paid);
    // No wait seen yet: the reactive rule's grace, the cost unknown to it.
    EXPECT_EQ(after({}).after_s, s.grace_s);
    // The reactive rule (DLB's) does not look at the cost.
    s.mode = lend_mode::reactive;
    EXPECT_EQ(after({1.2e-3}).after_s, s.grace_s);
}

}  // namespace

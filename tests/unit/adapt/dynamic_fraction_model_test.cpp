// adapt/dynamic_fraction_model: Eq. 4.4, 4.5 and the corrected 4.11 of Kale's thesis against
// cases computed by hand (the thesis's own worked example among them), and every guard.
#include "adapt/dynamic_fraction_model.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace {
using namespace aloe::adapt;

// p = 16, N = 10^6, t1 = 1 µs, q = 0.1 µs, δ = 200 µs (the report's worked example).
loop_measures worked_example() {
    loop_measures m;
    m.threads = 16;
    m.iterations = 1'000'000;
    m.iteration_s = 1e-6;
    m.dequeue_s = 0.1e-6;
    m.noise_s = 200e-6;
    return m;
}

TEST(DynamicFractionModel, WorkedExampleWithAndWithoutDequeueCost) {
    loop_measures m = worked_example();
    // fd = 16 · 200 µs / (10^6 · 1.1 µs) = 3.2e-3 / 1.1
    const fraction_decision d = model_dynamic_fraction(m, delay_combination::pessimistic);
    EXPECT_NEAR(d.dynamic_fraction, 3.2e-3 / 1.1, 1e-12);
    EXPECT_EQ(d.reason, "model");
    EXPECT_DOUBLE_EQ(d.delay_s, 200e-6);
    m.dequeue_s = 0;  // Eq. 4.2: fd = p δ / (N t1) = 0.0032
    EXPECT_NEAR(model_dynamic_fraction(m, delay_combination::pessimistic).dynamic_fraction, 0.0032, 1e-12);
}

TEST(DynamicFractionModel, NoisyNodeDelayOfTheWorkedExample) {
    const loop_measures m = worked_example();
    const double fd = 3.2e-3 / 1.1;
    // η = 200/15 µs + fd · 10^6 · 0.1 µs / 16 = 13.333 µs + 18.182 µs = 31.515 µs
    EXPECT_NEAR(noisy_node_delay(m, fd, 200e-6), 200e-6 / 15 + fd * 1e6 * 0.1e-6 / 16, 1e-15);
    EXPECT_NEAR(noisy_node_delay(m, fd, 200e-6), 31.515e-6, 1e-9);
    loop_measures one = m;
    one.threads = 1;
    EXPECT_TRUE(std::isinf(noisy_node_delay(one, fd, 200e-6)));
}

TEST(DynamicFractionModel, PessimisticSumsOptimisticTakesTheLarger) {
    loop_measures m = worked_example();
    m.noise_s = 100e-6;
    m.app_imbalance_s = 50e-6;
    EXPECT_DOUBLE_EQ(combined_delay(m, delay_combination::pessimistic), 150e-6);
    EXPECT_DOUBLE_EQ(combined_delay(m, delay_combination::optimistic), 100e-6);
    const double pess = model_dynamic_fraction(m, delay_combination::pessimistic).dynamic_fraction;
    const double opt = model_dynamic_fraction(m, delay_combination::optimistic).dynamic_fraction;
    EXPECT_NEAR(pess / opt, 1.5, 1e-12);  // fd is linear in δ
}

TEST(DynamicFractionModel, NegativeOrNonFiniteDelaysCountAsZero) {
    loop_measures m = worked_example();
    m.app_imbalance_s = -40e-6;  // the dynamic run was faster: no imbalance to absorb
    EXPECT_DOUBLE_EQ(combined_delay(m, delay_combination::pessimistic), 200e-6);
    m.noise_s = std::numeric_limits<double>::quiet_NaN();
    EXPECT_DOUBLE_EQ(combined_delay(m, delay_combination::optimistic), 0.0);
}

TEST(DynamicFractionModel, GuardsSayWhatTheyDecided) {
    loop_measures m = worked_example();
    m.threads = 1;
    fraction_decision d = model_dynamic_fraction(m, delay_combination::pessimistic);
    EXPECT_EQ(d.dynamic_fraction, 0.0);
    EXPECT_EQ(d.reason, "one thread or no iterations: nothing to balance");

    m = worked_example();
    m.iterations = 0;
    EXPECT_EQ(model_dynamic_fraction(m, delay_combination::pessimistic).dynamic_fraction, 0.0);

    m = worked_example();
    m.noise_s = 0;
    d = model_dynamic_fraction(m, delay_combination::optimistic);
    EXPECT_EQ(d.dynamic_fraction, 0.0);
    EXPECT_EQ(d.reason, "no delay measured: static");

    m = worked_example();
    m.iteration_s = 0;
    m.dequeue_s = 0;
    d = model_dynamic_fraction(m, delay_combination::pessimistic);
    EXPECT_EQ(d.dynamic_fraction, first_invocation_fraction);
    EXPECT_EQ(d.reason, "no iteration time yet: first-invocation fraction");

    // p = 2, N = 10, t1 = 1 µs, δ = 1 ms: fd = 2e-3 / 1e-5 = 200 → clamped to 1.
    m = loop_measures{2, 10, 1e-6, 0, 1e-3, 0};
    d = model_dynamic_fraction(m, delay_combination::pessimistic);
    EXPECT_EQ(d.dynamic_fraction, 1.0);
    EXPECT_EQ(d.reason, "delay longer than the loop: all dynamic");
}

TEST(DynamicFractionModel, SlackLowersTheFractionAsEquation411Corrected) {
    // p = 4, N = 1000, t1 = 1 µs, q = 0.1 µs: (p−1) N t1 / p − N q = 750 µs − 100 µs = 650 µs.
    const loop_measures m{4, 1000, 1e-6, 0.1e-6, 0, 0};
    EXPECT_NEAR(slack_adjusted_fraction(m, 0.2, 100e-6), 0.2 - 100.0 / 650.0, 1e-12);
    EXPECT_EQ(slack_adjusted_fraction(m, 0.2, 200e-6), 0.0);   // more slack than needed: 0, not negative
    EXPECT_EQ(slack_adjusted_fraction(m, 0.2, 0.0), 0.2);      // critical path: unchanged
    EXPECT_EQ(slack_adjusted_fraction(m, 0.2, -5e-6), 0.2);    // negative slack is no slack
}

TEST(DynamicFractionModel, SlackWhenDequeueingCostsAsMuchAsTheWork) {
    // p = 2, t1 = 1 µs, q = 0.6 µs: (p−1) t1 / p = 0.5 µs ≤ q, so moving work saves nothing.
    const loop_measures m{2, 1000, 1e-6, 0.6e-6, 0, 0};
    EXPECT_EQ(slack_adjusted_fraction(m, 0.3, 10e-6), 0.0);
}

}  // namespace

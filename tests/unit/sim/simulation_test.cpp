// The engine: exact totals on quiet machines, bit-for-bit determinism, and the trends the
// model exists to show.
#include "sim/simulation.hpp"
#include "sim_test_profiles.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

namespace aloe::sim {
namespace {

using testing::quiet_profile;

machine_profile noisy_profile() {
    machine_profile p = quiet_profile(8, 800, 2e-6);
    p.dequeue_s = 2e-8;
    p.collective = machine_profile::collective_kind::recursive_doubling;
    p.alpha_s = 1e-6;
    p.noise.push_back(testing::poisson(300, 100e-6, length_distribution::kind::exponential));
    return p;
}

sim_result run(const machine_profile& p, std::int64_t nodes, const char* schedule, int steps = 50, std::uint64_t seed = 1,
               int threads = 1) {
    sim_options o;
    o.nodes = nodes;
    o.steps = steps;
    o.seed = seed;
    o.schedule = aloe::schedule(schedule);
    o.threads = threads;
    return simulate(p, o);
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

TEST(Simulation, QuietTotalsAreWorkOverCoresPlusTheCollective) {
    machine_profile p = quiet_profile(4, 1000, 1e-6);
    p.collective = machine_profile::collective_kind::recursive_doubling;
    p.alpha_s = 3e-6;
    const sim_result one = run(p, 1, "static", 10);
    EXPECT_DOUBLE_EQ(one.total_s, 10 * 250e-6);
    EXPECT_DOUBLE_EQ(one.ideal_s, 10 * 250e-6);
    const sim_result eight = run(p, 8, "static", 10);
    EXPECT_NEAR(eight.total_s, 10 * (250e-6 + 3 * 3e-6), 1e-15);
    EXPECT_NEAR(eight.network_s, 10 * 3 * 3e-6, 1e-15);
    const sim_result dynamic = run(p, 8, "dynamic,chunk=10", 10);
    EXPECT_NEAR(dynamic.total_s, eight.total_s, 1e-15);  // no claim cost set: the same
}

TEST(Simulation, HalosChainNeighboursAndALoneNodeExchangesNothing) {
    machine_profile p = quiet_profile(2, 200, 1e-6);
    p.collective = machine_profile::collective_kind::none;
    p.halo_dims = 1;
    p.alpha_s = 5e-6;
    EXPECT_NEAR(run(p, 1, "static", 10).total_s, 10 * 100e-6, 1e-15);
    EXPECT_NEAR(run(p, 4, "static", 10).total_s, 10 * 105e-6, 1e-15);
    // Every node twice as slow: twice the loop, the same exchange.
    p.noise.push_back(testing::slow(noise_source::kind::slow_node, 2, 0, 1));
    EXPECT_NEAR(run(p, 4, "static", 10).total_s, 10 * 205e-6, 1e-15);
}

TEST(Simulation, ASeedGivesTheSameBitsOnAnyNumberOfThreads) {
    const machine_profile p = noisy_profile();
    for (const char* s : {"static", "hybrid,fs=0.7,chunk=2", "staggered,fs=0.5,chunk=4", "adaptive", "hybrid,fs=0.8,slack=on"}) {
        const sim_result a = run(p, 33, s, 40, 7, 1);
        const sim_result b = run(p, 33, s, 40, 7, 2);
        const sim_result c = run(p, 33, s, 40, 7, 1);
        EXPECT_TRUE(same_bits(a.step_s, b.step_s)) << s;
        EXPECT_TRUE(same_bits(a.step_s, c.step_s)) << s;
        EXPECT_EQ(a.noise_events, b.noise_events) << s;
        const sim_result other = run(p, 33, s, 40, 8, 1);
        EXPECT_FALSE(same_bits(a.step_s, other.step_s)) << s;
    }
}

TEST(Simulation, StaticLosesMoreWithMoreNodesThanHybrid) {
    const machine_profile p = noisy_profile();
    const double static1 = run(p, 1, "static", 100).total_s, static256 = run(p, 256, "static", 100).total_s;
    const double hybrid1 = run(p, 1, "hybrid,fs=0.5", 100).total_s, hybrid256 = run(p, 256, "hybrid,fs=0.5", 100).total_s;
    EXPECT_GT(static256 / static1, hybrid256 / hybrid1);
    EXPECT_GT(static256, hybrid256);
}

TEST(Simulation, AdaptiveProbesThenRaces) {
    const machine_profile p = noisy_profile();
    const sim_result r = run(p, 4, "adaptive", 60);
    // Two static probes, then staggered and the race: the mean fs is below static's 1.
    EXPECT_LT(r.mean_fs, 1.0);
    EXPECT_GT(r.tally.claims, 0);
    EXPECT_THROW(run(p, 4, "adaptive,search=nlopt", 5), std::invalid_argument);
}

TEST(Simulation, SlackRaisesTheStaticFractionOffTheCriticalPath) {
    // One node in eight is slow every step: the others wait for it and spend that wait.
    machine_profile p = quiet_profile(8, 800, 2e-6);
    p.collective = machine_profile::collective_kind::recursive_doubling;
    p.noise.push_back(testing::slow(noise_source::kind::slow_node, 1.3, 0, 0.2));
    const sim_result plain = run(p, 16, "hybrid,fs=0.6", 30);
    const sim_result slack = run(p, 16, "hybrid,fs=0.6,slack=on", 30);
    EXPECT_GT(slack.slack_spent_fraction, 0.5);
    EXPECT_GT(slack.mean_fs, plain.mean_fs);
    EXPECT_LT(slack.tally.claims, plain.tally.claims);
    EXPECT_LE(slack.total_s, plain.total_s * 1.0001);
}

TEST(Simulation, WeightedLearnsASlowCore) {
    machine_profile p = quiet_profile(4, 4000, 1e-6);
    p.noise.push_back(testing::slow(noise_source::kind::slow_core, 2, 1));
    const sim_result w = run(p, 1, "weighted", 20);
    const sim_result s = run(p, 1, "static", 20);
    // Static waits for the slow core every step (2000 us); weights converge towards
    // shares of 2:1:2:2 (1000·7/4·... = 1143 us per step).
    EXPECT_DOUBLE_EQ(s.step_s.back(), 2000e-6);
    EXPECT_LT(w.step_s.back(), 1200e-6);
}

TEST(Simulation, PerStepInjectionHitsTheGivenFractionOfSteps) {
    machine_profile p = quiet_profile(2, 200, 1e-6);
    noise_source inj;
    inj.type = noise_source::kind::per_step;
    inj.probability = 0.25;
    inj.length.mean_s = 50e-6;
    p.noise.push_back(inj);
    const sim_result r = run(p, 1, "static", 400);
    int hit = 0;
    for (double s : r.step_s) hit += s > 120e-6;
    EXPECT_GT(hit, 400 * 0.25 * 0.7);
    EXPECT_LT(hit, 400 * 0.25 * 1.3);
    for (double s : r.step_s) EXPECT_TRUE(std::abs(s - 100e-6) < 1e-12 || std::abs(s - 150e-6) < 1e-12) << s;
}

TEST(Simulation, BadOptionsAreRefused) {
    const machine_profile p = noisy_profile();
    EXPECT_THROW(run(p, 0, "static"), std::invalid_argument);
    EXPECT_THROW(run(p, 1, "static", 0), std::invalid_argument);
    machine_profile q = p;
    q.noise.front().cores = {7};
    sim_options o;
    o.cores = 4;  // the noise names core 7
    o.schedule = aloe::schedule("static");
    EXPECT_THROW(simulate(q, o), std::invalid_argument);
}

}  // namespace
}  // namespace aloe::sim

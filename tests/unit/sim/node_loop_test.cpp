// One node's loop against cases worked by hand, and the fast paths against a claim-by-claim
// reference (greedy list scheduling written out the obvious way).
#include "sim/iteration_costs.hpp"
#include "sim/node_loop.hpp"
#include "sim/node_noise.hpp"
#include "sim_test_profiles.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

namespace aloe::sim {
namespace {

using testing::profile_with_events;
using testing::quiet_profile;

struct one_node {
    machine_profile profile;
    iteration_costs costs;
    node_loop loop;
    node_noise noise;
    node_memory memory;
    std::vector<double> speed;
    loop_tally tally;
    explicit one_node(machine_profile p, std::uint64_t seed = 1)
        : profile(std::move(p)), costs(profile.costs, profile.iterations, profile.iteration_s, seed),
          loop(profile, costs, profile.cores), noise(profile, profile.cores, seed, 0),
          speed(static_cast<std::size_t>(profile.cores), 1.0) {}
    double run(const step_plan& plan, double start = 0) { return loop.run(plan, noise, speed, start, memory, tally); }
};

step_plan plan_of(step_plan::kind k, double fs = 0, std::int64_t chunk = 1) {
    step_plan p;
    p.type = k;
    p.fs = fs;
    p.chunk = chunk;
    return p;
}

TEST(NodeLoop, StaticOnAQuietNodeTakesNTimesT1OverC) {
    one_node n(quiet_profile(4, 1000, 1e-6));
    EXPECT_DOUBLE_EQ(n.run(plan_of(step_plan::kind::blocks, 1)), 1000 * 1e-6 / 4);
    // libgomp's split when p does not divide N: the first N mod p threads get one more.
    one_node m(quiet_profile(4, 1002, 1e-6));
    EXPECT_DOUBLE_EQ(m.run(plan_of(step_plan::kind::blocks, 1)), 251 * 1e-6);
}

TEST(NodeLoop, OneEventOnOneCoreDelaysStaticByItsLength) {
    const double delta = 50e-6;
    one_node quiet(quiet_profile(4, 4000, 1e-6));
    one_node hit(profile_with_events(4, 4000, 1e-6, {{100e-6, delta}}));
    const double base = quiet.run(plan_of(step_plan::kind::blocks, 1));
    EXPECT_NEAR(hit.run(plan_of(step_plan::kind::blocks, 1)) - base, delta, 1e-15);
}

TEST(NodeLoop, DynamicSpreadsOneEventOverTheCores) {
    // δ on one of c cores: the others take its chunks, so the loop ends about δ/c later
    // (within a chunk: 1 us here).
    const double delta = 400e-6;
    const int c = 4;
    one_node quiet(quiet_profile(c, 4000, 1e-6));
    one_node hit(profile_with_events(c, 4000, 1e-6, {{100e-6, delta}}));
    const double base = quiet.run(plan_of(step_plan::kind::pool, 0));
    const double grown = hit.run(plan_of(step_plan::kind::pool, 0)) - base;
    EXPECT_NEAR(grown, delta / c, 1.01e-6);
    // Hybrid with enough dynamic work absorbs it the same way; with too little it cannot.
    one_node hybrid(profile_with_events(c, 4000, 1e-6, {{100e-6, delta}}));
    EXPECT_NEAR(hybrid.run(plan_of(step_plan::kind::pool, 0.5)) - base, delta / c, 1.01e-6);
    one_node thin(profile_with_events(c, 4000, 1e-6, {{100e-6, delta}}));
    EXPECT_GT(thin.run(plan_of(step_plan::kind::pool, 0.99)) - base, delta / 2);
}

TEST(NodeLoop, AnEventWhileTheCoreIdlesCostsNothing) {
    one_node quiet(quiet_profile(2, 100, 1e-6));
    one_node idle(profile_with_events(2, 100, 1e-6, {{1.0, 0.5}}));  // long after the loop
    EXPECT_DOUBLE_EQ(idle.run(plan_of(step_plan::kind::blocks, 1)), quiet.run(plan_of(step_plan::kind::blocks, 1)));
    // The next step starts at 2 s: the event at 1 s fell in idle time and is gone.
    EXPECT_NEAR(idle.run(plan_of(step_plan::kind::blocks, 1), 2.0) - 2.0, 50e-6, 1e-14);
}

TEST(NodeLoop, ClaimCostsAreCounted) {
    machine_profile p = quiet_profile(2, 1000, 1e-6);
    p.dequeue_s = 1e-7;
    one_node n(p);
    const double t = n.run(plan_of(step_plan::kind::pool, 0, 10));
    // 100 chunks of 10 us + q each over 2 cores, then one empty claim each.
    EXPECT_NEAR(t, 50 * (10e-6 + 1e-7) + 1e-7, 1e-12);
    EXPECT_EQ(n.tally.claims, 100);
    EXPECT_NEAR(n.tally.busy_s, 1000e-6, 1e-12);
}

// Greedy list scheduling claim by claim: the reference for the pool's fast path.
double reference_pool(const machine_profile& p, std::uint64_t seed, double fs, std::int64_t chunk, std::vector<double> speed) {
    const iteration_costs costs(p.costs, p.iterations, p.iteration_s, seed);
    node_noise noise(p, p.cores, seed, 0);
    const double q = p.dequeue_s + p.dequeue_per_thread_s * (p.cores - 1);
    const double pen = 1 + p.locality_penalty * (1 - 1.0 / p.cores);
    const auto n = costs.size();
    const auto s = static_cast<std::int64_t>(std::floor(fs * static_cast<double>(n)));
    std::vector<double> free(static_cast<std::size_t>(p.cores), p.fork_join_s);
    for (int c = 0; c < p.cores; ++c) {
        std::int64_t lo, hi;
        block_of(c, s, p.cores, lo, hi);
        free[static_cast<std::size_t>(c)] = noise.run(c, free[static_cast<std::size_t>(c)], costs.sum(lo, hi) * speed[static_cast<std::size_t>(c)]);
    }
    for (std::int64_t next = s; next < n; next += chunk) {
        const auto c = static_cast<std::size_t>(std::min_element(free.begin(), free.end()) - free.begin());
        free[c] = noise.run(static_cast<int>(c), free[c], q + costs.sum(next, std::min(n, next + chunk)) * speed[c] * pen);
    }
    return *std::max_element(free.begin(), free.end()) + q;
}

TEST(NodeLoop, PoolFastPathEqualsClaimByClaim) {
    for (std::uint64_t seed : {1u, 2u, 3u, 4u, 5u}) {
        machine_profile p = quiet_profile(16, 5000, 1e-6);
        p.dequeue_s = 3e-8;
        p.locality_penalty = 0.1;
        p.noise.push_back(testing::poisson(20000, 20e-6, length_distribution::kind::exponential));  // several per core per loop
        std::vector<double> speed(16, 1.0);
        speed[3] = 1.5;
        for (double fs : {0.0, 0.5, 0.9}) {
            for (std::int64_t chunk : {1, 7}) {
                one_node fast(p, seed);
                fast.speed = speed;
                const double got = fast.run(plan_of(step_plan::kind::pool, fs, chunk));
                const double want = reference_pool(p, seed, fs, chunk, speed);
                EXPECT_NEAR(got, want, want * 1e-9) << "seed " << seed << " fs " << fs << " chunk " << chunk;
            }
        }
    }
}

TEST(NodeLoop, EverySchedulesRunsEveryIterationOnce) {
    // Busy time = the loop's cost exactly when nothing slows an iteration down: nothing lost,
    // nothing run twice, under noise, for every kind and for uneven costs.
    for (auto shape : {iteration_costs_spec::kind::uniform, iteration_costs_spec::kind::heavy_tail}) {
        machine_profile p = quiet_profile(5, 997, 2e-6);
        p.costs.shape = shape;
        p.costs.alpha = 1.5;
        p.noise.push_back(testing::poisson(5000, 30e-6, length_distribution::kind::fixed));
        std::vector<step_plan> plans{plan_of(step_plan::kind::blocks, 1), plan_of(step_plan::kind::cyclic, 1, 3),
                                     plan_of(step_plan::kind::pool, 0.3, 4), plan_of(step_plan::kind::guided, 0, 2),
                                     plan_of(step_plan::kind::staggered, 0.5, 3), plan_of(step_plan::kind::tasklets, 0.2)};
        plans.back().tasklets = 40;
        plans.back().skew = 4;
        step_plan weighted = plan_of(step_plan::kind::pool, 0.8, 2);
        weighted.weighted = true;
        plans.push_back(weighted);
        for (const step_plan& plan : plans) {
            one_node node(p);
            const double total = node.costs.total();
            for (int step = 0; step < 3; ++step) {
                node.tally = {};
                const double end = node.run(plan, step * 1.0);
                EXPECT_NEAR(node.tally.busy_s, total, total * 1e-12) << static_cast<int>(plan.type);
                EXPECT_GE(end - step * 1.0, total / p.cores);
            }
        }
    }
}

TEST(NodeLoop, StaggeredStealsFromTheNeighbourWithMoreLeft) {
    // Core 0 is hit early and long: its neighbour 1 steals from it; nobody else needs to.
    one_node n(profile_with_events(4, 4000, 1e-6, {{10e-6, 500e-6}}));
    const double t = n.run(plan_of(step_plan::kind::staggered, 0.5, 10));
    EXPECT_GT(n.tally.steals, 0);
    one_node quiet(quiet_profile(4, 4000, 1e-6));
    const double base = quiet.run(plan_of(step_plan::kind::staggered, 0.5, 10));
    EXPECT_EQ(quiet.tally.steals, 0);
    // Spread over 4 cores, within a chunk of 10 us; static would lose the whole 500 us.
    EXPECT_LT(t - base, 500e-6 / 4 + 11e-6);
    EXPECT_GT(t - base, 500e-6 / 4 - 11e-6);
}

TEST(NodeLoop, TaskletsKeepTheirCoresWhenQuiet) {
    machine_profile p = quiet_profile(4, 4000, 1e-6);
    p.locality_penalty = 0.5;
    one_node n(p);
    step_plan plan = plan_of(step_plan::kind::tasklets, 0);
    plan.tasklets = 32;
    const double first = n.run(plan);
    const double second = n.run(plan, 1.0) - 1.0;
    EXPECT_NEAR(first, 1000e-6, 1e-14);   // tags start at each tasklet's static owner
    EXPECT_NEAR(second, 1000e-6, 1e-14);  // and stay: no tasklet changes core, no penalty
    EXPECT_EQ(n.tally.steals, 0);
}

TEST(NodeLoop, WeightedBlocksFollowTheWeights) {
    std::vector<std::int64_t> b(4);
    weighted_bounds(100, std::vector<double>{1, 2, 1}, b);
    EXPECT_EQ(b, (std::vector<std::int64_t>{0, 25, 75, 100}));
    weighted_bounds(10, std::vector<double>{1, 1, 1}, b);
    EXPECT_EQ(b[3], 10);
    EXPECT_EQ(b[1] - b[0] + b[2] - b[1] + b[3] - b[2], 10);
}

}  // namespace
}  // namespace aloe::sim

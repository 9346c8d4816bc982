// The adaptive tuner driven by a simulated loop: per-iteration costs, per-thread speeds, a
// dequeue cost and noise delays give each invocation's worker records exactly as the team
// would, so convergence, the static fallback, the slow-core weights and drift re-opening
// are checked deterministically, and the tuner's choice is compared with the best fixed
// fraction found by sweeping the same simulator.
#include "adapt/adaptive_policy.hpp"
#include "loop/partition.hpp"
#include "loop/schedules/weighted.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace aloe::adapt {
namespace {

using loop::worker_record;

// A loop as the simulator sees it.
struct sim_loop {
    int threads = 4;
    std::uint64_t iterations = 4000;
    std::function<double(std::uint64_t)> cost = [](std::uint64_t) { return 1e-6; };  // seconds
    std::vector<double> speed;  // per thread, 1 = nominal; empty: all 1
    double dequeue_s = 50e-9;   // per chunk
    std::vector<double> delay;  // per thread, seconds lost at the start of this run; empty: none
};

struct sim_run {
    std::vector<worker_record> records;
    runtime::ticks fork = 0, join = 0;
    double seconds = 0;
};

runtime::ticks to_ticks(double seconds) {
    return static_cast<runtime::ticks>(std::llround(seconds * runtime::ticks_per_second()));
}

// Runs `choice` (static or staggered, optionally weighted) on `loop`: static parts first,
// then dynamic chunks handed to whichever thread is free first, own queue before stealing
// from the nearer neighbour with more left (the staggered rule).
sim_run simulate(const sim_loop& loop, const adaptive_policy::choice& choice) {
    const auto p = static_cast<std::size_t>(loop.threads);
    const std::uint64_t n = loop.iterations;
    std::vector<double> prefix(n + 1, 0.0);
    for (std::uint64_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + loop.cost(i);
    const auto work = [&](std::uint64_t b, std::uint64_t e) { return prefix[e] - prefix[b]; };
    const auto speed = [&](std::size_t t) { return loop.speed.empty() ? 1.0 : loop.speed[t]; };

    std::vector<std::uint64_t> block_begin(p + 1, 0);
    if (choice.block_weights.size() == p) {
        std::vector<std::uint64_t> shares(p);
        loop::weighted_split::split_by_weight(n, choice.block_weights, shares);
        for (std::size_t t = 0; t < p; ++t) block_begin[t + 1] = block_begin[t] + shares[t];
    } else {
        for (std::size_t t = 0; t <= p; ++t) block_begin[t] = loop::block_start(t, n, p);
    }
    const bool is_static = choice.run.kind() == schedule_kind::static_block;
    const double fs = is_static ? 1.0 : choice.run.static_fraction();
    const auto chunk = static_cast<std::uint64_t>(std::max<std::int64_t>(choice.run.chunk(), 1));

    sim_run r;
    r.records.assign(p, worker_record{});
    const double base = 1.0;  // seconds: the fork, away from tick 0
    std::vector<double> clock(p), static_end(p);
    std::vector<std::uint64_t> next(p), end(p);
    for (std::size_t t = 0; t < p; ++t) {
        const std::uint64_t b = block_begin[t], e = block_begin[t + 1];
        const std::uint64_t s_end = b + loop::fraction_of(e - b, fs);
        const double delay = loop.delay.empty() ? 0.0 : loop.delay[t];
        clock[t] = base + delay + work(b, s_end) / speed(t);
        static_end[t] = clock[t];
        r.records[t].static_iterations = s_end - b;
        next[t] = s_end;
        end[t] = e;
    }
    std::vector<bool> done(p, false);
    for (;;) {
        std::size_t t = p;
        for (std::size_t u = 0; u < p; ++u)
            if (!done[u] && (t == p || clock[u] < clock[t])) t = u;
        if (t == p) break;
        std::size_t victim = p;
        if (next[t] < end[t]) {
            victim = t;
        } else {
            for (std::size_t d = 1; d < p && victim == p; ++d) {
                const auto left = static_cast<std::ptrdiff_t>(t) - static_cast<std::ptrdiff_t>(d);
                const std::size_t right = t + d;
                const std::uint64_t lw = left >= 0 ? end[static_cast<std::size_t>(left)] - next[static_cast<std::size_t>(left)] : 0;
                const std::uint64_t rw = right < p ? end[right] - next[right] : 0;
                if (lw == 0 && rw == 0) continue;
                victim = lw >= rw ? static_cast<std::size_t>(left) : right;
            }
        }
        if (victim == p) {
            done[t] = true;
            continue;
        }
        const std::uint64_t b = next[victim], e = std::min(end[victim], b + chunk);
        next[victim] = e;
        clock[t] += loop.dequeue_s + work(b, e) / speed(t);
        r.records[t].dynamic_iterations += e - b;
        ++r.records[t].chunks;
        if (victim != t) ++r.records[t].steals;
    }
    double join = base;
    for (std::size_t t = 0; t < p; ++t) {
        r.records[t].start = to_ticks(base);
        r.records[t].static_end = to_ticks(static_end[t]);
        r.records[t].end = to_ticks(clock[t]);
        join = std::max(join, clock[t]);
    }
    r.fork = to_ticks(base);
    r.join = to_ticks(join);
    r.seconds = join - base;
    return r;
}

// One invocation: ask, simulate, tell. Returns the simulated time.
double step(adaptive_policy& policy, const sim_loop& loop) {
    const adaptive_policy::choice choice = policy.choose(loop.iterations, loop.threads);
    const sim_run r = simulate(loop, choice);
    policy.observe(r.records, r.fork, r.join);
    return r.seconds;
}

// The best fixed static fraction of staggered on the 0.05 grid (each with `chunk`).
double best_fixed_seconds(const sim_loop& loop, std::int64_t chunk, double* best_fs = nullptr) {
    double best = std::numeric_limits<double>::infinity();
    for (int i = 0; i <= 20; ++i) {
        const double fs = std::min(1.0, i * 0.05);
        const double t = simulate(loop, {schedule::staggered(fs, chunk), {}}).seconds;
        if (t < best) {
            best = t;
            if (best_fs) *best_fs = fs;
        }
    }
    return best;
}

sim_loop ramp_loop() {
    sim_loop l;
    l.cost = [](std::uint64_t i) { return 0.2e-6 + 1.6e-6 * static_cast<double>(i) / 4000.0; };  // 0.2 → 1.8 µs
    return l;
}

const machine_probes probes{60e-9, 0.0};

TEST(AdaptivePolicy, BalancedQuietLoopFallsBackToStaticAfterTwoProbes) {
    adaptive_policy policy(schedule("adaptive"), probes);
    const sim_loop loop;  // uniform costs, equal speeds, no noise
    for (int i = 0; i < 30; ++i) step(policy, loop);
    const tuning_stats t = policy.snapshot();
    EXPECT_EQ(t.state, policy_state::converged);
    EXPECT_EQ(t.chosen, "static");
    EXPECT_EQ(t.converged_at, 2);
    EXPECT_EQ(t.trials, 2u);
    EXPECT_NE(t.reason.find("balanced"), std::string::npos) << t.reason;
    ASSERT_EQ(t.steps.size(), 30u);
    for (const tuning_step& s : t.steps) EXPECT_EQ(s.schedule, "static");
    EXPECT_FALSE(t.weighted);
}

TEST(AdaptivePolicy, ImbalancedLoopConvergesWithin20InvocationsNearTheBestFixedFraction) {
    const sim_loop loop = ramp_loop();
    adaptive_policy policy(schedule("adaptive"), probes);
    for (int i = 0; i < 40; ++i) step(policy, loop);
    const tuning_stats t = policy.snapshot();
    EXPECT_EQ(t.state, policy_state::converged) << t.reason;
    EXPECT_GE(t.converged_at, 1);
    EXPECT_LE(t.converged_at, 20);
    EXPECT_GT(t.delay_app_s, 0) << "static vs dynamic must show the ramp's imbalance";
    EXPECT_LT(t.model_fs, 1);
    const double converged = step(policy, loop);
    const double best = std::min(best_fixed_seconds(loop, 1), best_fixed_seconds(loop, policy.snapshot().steps.back().chunk));
    EXPECT_LE(converged, 1.05 * best) << "chosen " << t.chosen;
    const double static_time = simulate(loop, {schedule(), {}}).seconds;
    EXPECT_LT(converged, 0.8 * static_time);
}

TEST(AdaptivePolicy, PersistentlySlowCoreTurnsOnWeightedBlocks) {
    sim_loop loop;
    loop.speed = {1.0, 1.0, 0.5, 1.0};  // thread 2 shares its core with another program
    adaptive_policy policy(schedule("adaptive"), probes);
    for (int i = 0; i < 40; ++i) step(policy, loop);
    const tuning_stats t = policy.snapshot();
    EXPECT_TRUE(t.weighted) << t.reason;
    const double converged = step(policy, loop);
    const double best = best_fixed_seconds(loop, 1);
    EXPECT_LE(converged, 1.05 * best) << "chosen " << t.chosen;
    // Weighted blocks: the slow thread's share is about half of the others'.
    const adaptive_policy::choice c = policy.choose(loop.iterations, loop.threads);
    ASSERT_EQ(c.block_weights.size(), 4u);
    EXPECT_LT(c.block_weights[2], 0.75 * c.block_weights[0]);
}

TEST(AdaptivePolicy, NoiseArrivingOnAStaticLoopReopensTheSearch) {
    sim_loop loop;
    adaptive_policy policy(schedule("adaptive"), probes);
    for (int i = 0; i < 10; ++i) step(policy, loop);
    ASSERT_EQ(policy.snapshot().chosen, "static");
    // From now on every other run one thread loses 30% of a quiet run's time.
    const double quiet = simulate(loop, {schedule(), {}}).seconds;
    std::mt19937 rng(7);
    for (int i = 0; i < 40; ++i) {
        sim_loop noisy = loop;
        if (i % 2 == 0) {
            noisy.delay.assign(4, 0.0);
            noisy.delay[rng() % 4] = 0.3 * quiet;
        }
        step(policy, noisy);
    }
    const tuning_stats t = policy.snapshot();
    EXPECT_GE(t.searches, 2u) << t.reason;
    EXPECT_EQ(t.converged_at, 2);  // the first convergence is kept
    EXPECT_NE(t.chosen, "static") << t.reason;
    EXPECT_GT(t.delay_noise_s + t.delay_app_s, 0);
}

TEST(AdaptivePolicy, SweepTriesEveryFractionThenKeepsTheBest) {
    const sim_loop loop = ramp_loop();
    adaptive_policy policy(schedule("adaptive,search=sweep,chunk=4"), probes);
    for (int i = 0; i < 60; ++i) step(policy, loop);
    const tuning_stats t = policy.snapshot();
    EXPECT_EQ(t.state, policy_state::converged);
    EXPECT_EQ(t.converged_at, 2 + 1 + 21 * 2);  // two static probes, one dynamic, 21 fractions × 2
    // Every fraction of the grid ran twice, in order.
    for (int i = 0; i <= 20; ++i)
        for (int k = 0; k < 2; ++k) {
            const tuning_step& s = t.steps[static_cast<std::size_t>(3 + 2 * i + k)];
            EXPECT_NEAR(s.fs, std::min(1.0, i * 0.05), 1e-12) << "step " << 3 + 2 * i + k;
        }
    // The ramp's thread speeds differ for good, so blocks are weighted; the best fraction
    // with weights is at least as fast as the best without.
    EXPECT_TRUE(t.weighted);
    const double converged = step(policy, loop);
    EXPECT_LE(converged, 1.01 * best_fixed_seconds(loop, 4)) << t.reason;
}

TEST(AdaptivePolicy, NloptSearchesFractionAndChunkAndStaysWithinBudget) {
    const sim_loop loop = ramp_loop();
    adaptive_policy policy(schedule("adaptive,search=nlopt"), probes);
    for (int i = 0; i < 60; ++i) step(policy, loop);
    const tuning_stats t = policy.snapshot();
    EXPECT_EQ(t.state, policy_state::converged) << t.reason;
    EXPECT_LE(t.converged_at, 3 + 12 * 2);  // probes + the evaluation budget × samples
    EXPECT_NE(t.reason.find("NLopt"), std::string::npos) << t.reason;
    const double converged = step(policy, loop);
    EXPECT_LE(converged, 1.10 * best_fixed_seconds(loop, 1)) << t.chosen;
}

TEST(AdaptivePolicy, TheTraceIsBoundedAndRecordsWhatRan) {
    adaptive_options o;
    o.trace_limit = 5;
    adaptive_policy policy(schedule("adaptive"), probes, o);
    const sim_loop loop = ramp_loop();
    std::vector<double> times;
    for (int i = 0; i < 12; ++i) times.push_back(step(policy, loop));
    const tuning_stats t = policy.snapshot();
    ASSERT_EQ(t.steps.size(), 5u);
    EXPECT_EQ(t.steps[0].schedule, "static");
    EXPECT_EQ(t.steps[2].fs, 0.0);  // the dynamic probe
    for (std::size_t i = 0; i < 5; ++i) EXPECT_NEAR(t.steps[i].seconds, times[i], 1e-6);
}

TEST(AdaptivePolicy, LiveRunsRefineTheDequeueCostEvenWhenIterationsDiffer) {
    // The start-up probe said 60 ns; the loop's chunks really cost 400 ns (say, moved data
    // missing in cache). On a ramp, where a per-thread pace would mistake costlier
    // iterations for overhead, the busy-time estimate still finds 400 ns, and t1 = W/N.
    sim_loop loop = ramp_loop();
    loop.dequeue_s = 400e-9;
    adaptive_policy policy(schedule("adaptive"), probes);
    for (int i = 0; i < 25; ++i) step(policy, loop);
    const tuning_stats t = policy.snapshot();
    EXPECT_NEAR(t.dequeue_s, 400e-9, 20e-9);
    double work = 0;
    for (std::uint64_t i = 0; i < loop.iterations; ++i) work += loop.cost(i);
    EXPECT_NEAR(t.iteration_s, work / static_cast<double>(loop.iterations), 1e-9);
}

TEST(AdaptivePolicy, ChunkSizeKeepsTheDequeueASmallShareOfTheWork) {
    // q = 50 ns, t1 = 10 ns, at most 5%: c = ceil(50 / 0.5) = 100.
    EXPECT_EQ(adaptive_policy::chunk_for(50e-9, 10e-9, 0.05, 100000, 2), 100);
    // … but at least four chunks per thread of the dynamic part: 400 / (4 · 2) = 50.
    EXPECT_EQ(adaptive_policy::chunk_for(50e-9, 10e-9, 0.05, 400, 2), 50);
    // Coarse iterations: 1.
    EXPECT_EQ(adaptive_policy::chunk_for(50e-9, 10e-6, 0.05, 100000, 2), 1);
    // Nothing measured yet: 1.
    EXPECT_EQ(adaptive_policy::chunk_for(0, 0, 0.05, 100000, 2), 1);
    EXPECT_EQ(adaptive_policy::chunk_for(50e-9, 10e-9, 0.05, 0, 2), 1);
}

TEST(AdaptivePolicy, ATeamOfAnotherSizeDropsTheWeights) {
    sim_loop loop;
    loop.speed = {1.0, 0.4};
    loop.threads = 2;
    adaptive_policy policy(schedule("adaptive"), probes);
    for (int i = 0; i < 10; ++i) step(policy, loop);
    ASSERT_TRUE(policy.snapshot().weighted);
    const adaptive_policy::choice c = policy.choose(loop.iterations, 3);
    EXPECT_TRUE(c.block_weights.empty());
    EXPECT_FALSE(policy.snapshot().weighted);
}

}  // namespace
}  // namespace aloe::adapt

// The adaptive tuner driven by a simulated loop: per-iteration costs, per-thread speeds, a
// dequeue cost and noise delays give each invocation's worker records exactly as the team
// would, so convergence, the static fallback, the slow-core weights and drift re-opening
// are checked deterministically, and the tuner's choice is compared with the best fixed
// fraction found by sweeping the same simulator.
#include "adapt/adaptive_policy.hpp"
#include "loop/partition.hpp"
#include "loop/schedules/weighted.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <map>

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
    // guided and dynamic: one shared pool, chunks of c (guided: ceil(remaining / (k·p)), at least c).
    const bool shared = choice.run.kind() == schedule_kind::guided || choice.run.kind() == schedule_kind::dynamic;
    const double fs = is_static ? 1.0 : shared ? 0.0 : choice.run.static_fraction();
    const auto chunk = static_cast<std::uint64_t>(std::max<std::int64_t>(choice.run.chunk(), 1));
    if (shared) {
        block_begin.assign(p + 1, 0);  // all iterations in thread 0's queue; everyone takes from it
        for (std::size_t t = 1; t <= p; ++t) block_begin[t] = n;
        block_begin[1] = n;
    }

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
        std::uint64_t take = chunk;
        if (choice.run.kind() == schedule_kind::guided)
            take = std::max<std::uint64_t>(
                chunk, (end[victim] - next[victim] + p * static_cast<std::uint64_t>(choice.run.divisor()) - 1) /
                           (p * static_cast<std::uint64_t>(choice.run.divisor())));
        const std::uint64_t b = next[victim], e = std::min(end[victim], b + take);
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

TEST(AdaptivePolicy, ReplaySplitsARampIntoBlocksOfEqualCost) {
    // A ramp whose chunks are dear (a dequeue costs 20 µs: a loop across a slow interconnect,
    // or chunks that miss in cache): every dynamic candidate pays for its chunks, static for
    // the ramp; blocks of equal measured cost pay for neither, and the race must find them.
    sim_loop loop = ramp_loop();
    loop.dequeue_s = 20e-6;
    adaptive_policy policy(schedule("adaptive"), probes);
    for (int i = 0; i < 30; ++i) step(policy, loop);
    const tuning_stats t = policy.snapshot();
    EXPECT_EQ(t.state, policy_state::converged) << t.reason;
    EXPECT_NE(t.reason.find("replay"), std::string::npos) << t.reason;
    EXPECT_TRUE(t.weighted);
    double work = 0;
    for (std::uint64_t i = 0; i < loop.iterations; ++i) work += loop.cost(i);
    const double ideal = work / loop.threads;
    const adaptive_policy::choice c = policy.choose(loop.iterations, loop.threads);
    ASSERT_EQ(c.block_weights.size(), static_cast<std::size_t>(loop.threads));
    EXPECT_GT(c.block_weights.front(), c.block_weights.back()) << "cheap iterations first: the first block is longer";
    const double replayed = simulate(loop, c).seconds;
    EXPECT_LE(replayed, 1.03 * ideal);
    EXPECT_LT(replayed, 0.7 * simulate(loop, {schedule(), {}}).seconds);
}

TEST(AdaptivePolicy, PersistentlySlowCoreIsRacedAwayWithinTheBudget) {
    sim_loop loop;
    loop.speed = {1.0, 1.0, 0.5, 1.0};  // thread 2 shares its core with another program
    adaptive_policy policy(schedule("adaptive"), probes);
    for (int i = 0; i < 20; ++i) step(policy, loop);
    const tuning_stats t = policy.snapshot();
    EXPECT_EQ(t.state, policy_state::converged) << t.reason;
    const double converged = step(policy, loop);
    EXPECT_LE(converged, 1.05 * best_fixed_seconds(loop, 1)) << "chosen " << t.chosen;
    EXPECT_LT(converged, 0.8 * simulate(loop, {schedule(), {}}).seconds) << "chosen " << t.chosen;
}

TEST(AdaptivePolicy, PersistentlySlowCoreTurnsOnWeightedBlocks) {
    sim_loop loop;
    loop.speed = {1.0, 1.0, 0.5, 1.0};  // thread 2 shares its core with another program
    adaptive_policy policy(schedule("adaptive,search=local"), probes);
    for (int i = 0; i < 40; ++i) step(policy, loop);
    const tuning_stats t = policy.snapshot();
    EXPECT_TRUE(t.weighted) << t.reason;
    const double converged = step(policy, loop);
    const double best = best_fixed_seconds(loop, 1);
    EXPECT_LE(converged, 1.05 * best) << "chosen " << t.chosen;
    // Weighted blocks (the site's, or the race's replayed split): the slow thread's share is
    // about half of the others'.
    const site_memory m = policy.remember();
    ASSERT_EQ(m.weights.size(), 4u) << t.chosen;
    EXPECT_LT(m.weights[2], 0.75 * m.weights[0]);
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
    // The dynamic probe follows one static probe (this ramp is too uneven for a second) or two.
    const auto probe = std::find_if(t.steps.begin(), t.steps.end(), [](const tuning_step& s) { return s.schedule != "static"; });
    ASSERT_NE(probe, t.steps.end());
    EXPECT_LE(probe - t.steps.begin(), 2);
    EXPECT_EQ(probe->fs, 0.0);
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
    adaptive_policy policy(schedule("adaptive,search=local"), probes);
    for (int i = 0; i < 10; ++i) step(policy, loop);
    ASSERT_TRUE(policy.snapshot().weighted);
    const adaptive_policy::choice c = policy.choose(loop.iterations, 3);
    EXPECT_TRUE(c.block_weights.empty());
    EXPECT_FALSE(policy.snapshot().weighted);
}

// ---- The race (search=race, the default) on loops with wide spreads (issue 14) ----

// Seeded noise: in a share `probability` of the runs one thread, drawn at random, starts
// `fraction` of the quiet static time late (a daemon, another job's burst).
struct noise_regime {
    double probability = 0;
    double fraction = 0;
};

sim_loop with_noise(const sim_loop& loop, const noise_regime& noise, double quiet, std::mt19937& rng) {
    sim_loop l = loop;
    std::uniform_real_distribution<double> u(0, 1);
    if (u(rng) < noise.probability) {
        l.delay.assign(static_cast<std::size_t>(l.threads), 0.0);
        l.delay[rng() % static_cast<unsigned>(l.threads)] = noise.fraction * quiet;
    }
    return l;
}

// The expected time of one choice under the regime: the mean of `draws` seeded runs.
double expected_seconds(const sim_loop& loop, const noise_regime& noise, const adaptive_policy::choice& c, int draws = 60) {
    const double quiet = simulate(loop, {schedule(), {}}).seconds;
    std::mt19937 rng(12345);
    double sum = 0;
    for (int i = 0; i < draws; ++i) sum += simulate(with_noise(loop, noise, quiet, rng), c).seconds;
    return sum / draws;
}

struct race_scenario {
    const char* name;
    sim_loop loop;
    noise_regime noise;
};

std::vector<race_scenario> race_scenarios() {
    std::vector<race_scenario> v;
    sim_loop uniform;
    uniform.iterations = 2000;
    v.push_back({"uniform, heavy noise", uniform, {0.5, 0.5}});
    v.push_back({"uniform, light noise", uniform, {0.2, 0.2}});
    sim_loop ramp = ramp_loop();
    ramp.iterations = 2000;
    ramp.cost = [](std::uint64_t i) { return 0.2e-6 + 1.6e-6 * static_cast<double>(i) / 2000.0; };
    v.push_back({"ramp, heavy noise", ramp, {0.5, 0.5}});
    sim_loop slow = uniform;
    slow.speed = {1.0, 1.0, 0.6, 1.0};
    v.push_back({"slow core, light noise", slow, {0.2, 0.2}});
    sim_loop heavy = uniform;
    heavy.cost = [](std::uint64_t i) {  // a few iterations dominate (deterministic Pareto-like)
        const double u = static_cast<double>((i * 2654435761u) % 1000 + 1) / 1001.0;
        return 0.5e-6 * std::pow(u, -1.0 / 1.3);
    };
    v.push_back({"heavy-tailed, heavy noise", heavy, {0.5, 0.5}});
    sim_loop costly_chunks = uniform;  // fine iterations, chunks that cost a lot to move
    costly_chunks.iterations = 4000;
    costly_chunks.cost = [](std::uint64_t i) { return 40e-9 * (1.0 + 0.5 * static_cast<double>(i % 7 == 0)); };
    costly_chunks.dequeue_s = 1e-6;
    v.push_back({"memory-bound chunks, light noise", costly_chunks, {0.2, 0.3}});
    return v;
}

// What the policy runs once converged (its winner, with the weights it runs it with), and
// the candidates it raced, each as it would run.
std::vector<std::pair<std::string, adaptive_policy::choice>> raced(const adaptive_policy& policy, int threads,
                                                                   std::vector<std::vector<double>>& keep) {
    const site_memory m = policy.remember();
    std::vector<std::pair<std::string, adaptive_policy::choice>> out;
    keep.reserve(m.candidates.size());
    for (const candidate_memory& c : m.candidates) {
        adaptive_policy::choice ch{c.schedule == "replay" ? schedule() : schedule(c.schedule), {}};
        if (c.weighted && m.weights.size() == static_cast<std::size_t>(threads)) {
            keep.push_back(m.weights);
            ch.block_weights = keep.back();
        }
        out.emplace_back(c.schedule, ch);
    }
    return out;
}

TEST(AdaptiveRace, LandsWithin5PercentOfTheBestCandidateOrOnTheBestSeen) {
    // 6 loops × 20 seeds, wide spreads (noise delays of 20–50% of a step in 20–50% of the
    // steps). Each converged choice is judged by its expected time over 60 seeded draws,
    // against the best expected time of the candidates it raced.
    int within5 = 0, total = 0;
    double worst = 0;
    std::string worst_case;
    for (const race_scenario& sc : race_scenarios()) {
        for (unsigned seed = 1; seed <= 20; ++seed) {
            adaptive_policy policy(schedule("adaptive"), probes);
            const double quiet = simulate(sc.loop, {schedule(), {}}).seconds;
            std::mt19937 rng(seed);
            // 50 invocations, then on to the end of a search under way: a balanced loop may
            // settle on static at the second and re-open when the noise shows (at the 18th
            // at the soonest); that race takes its own 20.
            for (int i = 0; i < 50; ++i) step(policy, with_noise(sc.loop, sc.noise, quiet, rng));
            for (int i = 0; i < 40 && policy.snapshot().state != policy_state::converged; ++i)
                step(policy, with_noise(sc.loop, sc.noise, quiet, rng));
            const tuning_stats t = policy.snapshot();
            ASSERT_EQ(t.state, policy_state::converged) << sc.name << " seed " << seed << ": " << t.reason;
            ASSERT_LE(t.converged_at, 20) << sc.name;
            const site_memory m = policy.remember();
            std::vector<std::vector<double>> weights;
            const auto cands = raced(policy, sc.loop.threads, weights);
            double best = std::numeric_limits<double>::infinity(), chosen = 0;
            double chosen_mean = 0, least_mean = std::numeric_limits<double>::infinity();
            for (std::size_t i = 0; i < cands.size(); ++i) {
                const double e = expected_seconds(sc.loop, sc.noise, cands[i].second);
                best = std::min(best, e);
                if (cands[i].first == m.chosen) chosen = e, chosen_mean = m.candidates[i].mean_s;
                if (m.candidates[i].samples >= 3 && !m.candidates[i].out) least_mean = std::min(least_mean, m.candidates[i].mean_s);
            }
            ASSERT_GT(chosen, 0) << m.chosen;
            // Falling back: the choice is the best the race saw (the lowest observed mean).
            EXPECT_LE(chosen_mean, least_mean * (1 + 1e-12)) << sc.name << " seed " << seed;
            ++total;
            if (chosen <= 1.05 * best) ++within5;
            else if (std::getenv("RACE_DEBUG"))
                for (std::size_t i = 0; i < cands.size(); ++i)
                    std::cout << "  " << cands[i].first << " n=" << m.candidates[i].samples << " mean=" << m.candidates[i].mean_s
                              << " sd=" << std::sqrt(m.candidates[i].m2 / std::max(1.0, static_cast<double>(m.candidates[i].samples) - 1.0))
                              << " out=" << m.candidates[i].out << " expected=" << expected_seconds(sc.loop, sc.noise, cands[i].second) << "\n";
            if (chosen / best > worst) worst = chosen / best, worst_case = std::string(sc.name) + ": " + t.reason;
        }
    }
    std::cout << "within 5%: " << within5 << " of " << total << ", worst " << worst << " (" << worst_case << ")\n";
    // Each choice is within 5% of the best candidate, or it is the best the race saw (checked
    // above: where the noise did not let the race separate them). When written: 116 of 120
    // within 5%, the worst 1.07 (guided against coarse chunks on a loop whose chunks cost 25
    // times an iteration, under light noise).
    EXPECT_GE(within5, total * 9 / 10) << worst_case;
    EXPECT_LE(worst, 1.10) << worst_case;
}

// ---- Tuning that persists (site_memory.hpp): a fake store, the policy's side ----

class fake_memory final : public tuning_memory {
public:
    std::optional<site_memory> recall(std::string_view site, int threads) override {
        for (const auto& [key, m] : kept)
            if (key.first == site && key.second == threads) return m;
        return std::nullopt;
    }
    void keep(std::string_view site, int threads, const site_memory& m) override {
        kept[{std::string(site), threads}] = m;
        ++keeps;
    }
    std::map<std::pair<std::string, int>, site_memory> kept;
    int keeps = 0;
};

TEST(AdaptiveMemory, ARaceCutShortByTheProgramsEndGoesOnInTheNextRun) {
    // barnes-hut's loop runs 11 times a run: too few for a race. The second run goes on
    // from the samples of the first and converges within 20 invocations in all.
    const sim_loop loop = ramp_loop();
    fake_memory store;
    {
        adaptive_policy run1(schedule("adaptive"), probes, {}, &store, "prog+0x40");
        for (int i = 0; i < 11; ++i) step(run1, loop);
        ASSERT_NE(run1.snapshot().state, policy_state::converged);
    }
    ASSERT_EQ(store.kept.size(), 1u);
    const site_memory& m1 = store.kept.begin()->second;
    EXPECT_FALSE(m1.converged);
    EXPECT_EQ(m1.invocations, 11u);
    std::uint64_t samples1 = 0;
    for (const candidate_memory& c : m1.candidates) samples1 += c.samples;
    EXPECT_EQ(samples1, 10u) << "every invocation but the cold first";

    adaptive_policy run2(schedule("adaptive"), probes, {}, &store, "prog+0x40");
    step(run2, loop);
    EXPECT_NE(run2.snapshot().reason.find("recalled: 11 invocations"), std::string::npos) << run2.snapshot().reason;
    int needed = 1;
    while (run2.snapshot().state != policy_state::converged && needed < 40) {
        step(run2, loop);
        ++needed;
    }
    const tuning_stats t = run2.snapshot();
    EXPECT_EQ(t.state, policy_state::converged) << t.reason;
    // 18 race samples in all: 10 from the first run, 8 here after this run's cold first.
    EXPECT_LE(needed, 9) << t.reason;
    const double converged = step(run2, loop);
    const double best = std::min(best_fixed_seconds(loop, 1), best_fixed_seconds(loop, 2));
    EXPECT_LE(converged, 1.10 * best) << t.chosen;
}

TEST(AdaptiveMemory, AConvergedChoiceRunsFromTheFirstInvocation) {
    const sim_loop loop = ramp_loop();
    fake_memory store;
    std::string chosen;
    {
        adaptive_policy run1(schedule("adaptive"), probes, {}, &store, "prog+0x80");
        for (int i = 0; i < 30; ++i) step(run1, loop);
        ASSERT_EQ(run1.snapshot().state, policy_state::converged);
        chosen = run1.remember().chosen;
    }
    const site_memory m = store.kept.at({"prog+0x80", 4});
    EXPECT_TRUE(m.converged);
    EXPECT_EQ(m.chosen, chosen);
    adaptive_policy run2(schedule("adaptive"), probes, {}, &store, "prog+0x80");
    for (int i = 0; i < 5; ++i) step(run2, loop);
    const tuning_stats t = run2.snapshot();
    EXPECT_EQ(t.state, policy_state::converged);
    EXPECT_EQ(t.converged_at, 0) << "converged before its first invocation: recalled";
    EXPECT_EQ(t.trials, 0u);
    const std::string first = chosen == "replay" ? "static" : chosen;
    EXPECT_EQ(t.steps.front().schedule, first);
}

TEST(AdaptiveMemory, AnotherTeamSizeOrSiteStartsFromScratch) {
    const sim_loop loop = ramp_loop();
    fake_memory store;
    {
        adaptive_policy run1(schedule("adaptive"), probes, {}, &store, "prog+0x80");
        for (int i = 0; i < 30; ++i) step(run1, loop);
    }
    sim_loop three = loop;
    three.threads = 3;
    adaptive_policy other_team(schedule("adaptive"), probes, {}, &store, "prog+0x80");
    step(other_team, three);
    EXPECT_EQ(other_team.snapshot().steps.front().schedule, "static");
    EXPECT_EQ(other_team.snapshot().trials, 1u) << "probing";
    adaptive_policy other_site(schedule("adaptive"), probes, {}, &store, "prog+0x90");
    step(other_site, loop);
    EXPECT_EQ(other_site.snapshot().trials, 1u);
    adaptive_policy no_store(schedule("adaptive"), probes);
    step(no_store, loop);
    EXPECT_EQ(no_store.remember().candidates.size(), 0u) << "nothing to keep after one probe";
}

TEST(AdaptiveMemory, AMemoryOfUnknownSchedulesIsIgnored) {
    fake_memory store;
    site_memory bad;
    bad.converged = true;
    bad.chosen = "warp-drive,chunk=9";
    bad.candidates = {{"warp-drive,chunk=9", false, 4, 1e-6, 0, false}, {"adaptive", false, 4, 1e-6, 0, false}};
    store.kept[{"prog+0x10", 4}] = bad;
    adaptive_policy p(schedule("adaptive"), probes, {}, &store, "prog+0x10");
    step(p, ramp_loop());
    EXPECT_EQ(p.snapshot().steps.front().schedule, "static");
    EXPECT_EQ(p.snapshot().trials, 1u);
}

}  // namespace
}  // namespace aloe::adapt

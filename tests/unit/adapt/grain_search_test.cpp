// adapt/grain_model and adapt/grain_search: the cost model's fit and the convex bound on
// hand-made points; each search on synthetic cost curves shaped like the reference's (seed
// 002 §3.1: U-shaped in log grain, flat at the bottom, steep on both sides; plus a plateau,
// an asymmetric U, a stencil cost model with and without wave quantisation, and monotone
// curves whose optimum is an edge), exact and with seeded multiplicative noise, from starts
// 100× too fine and 100× too coarse. No timing: costs are functions of the value.
//
// Noise: each observation is cost × (1 + ε·u), u uniform in [−1, 1) from std::mt19937_64
// seeded per run (converted here, not by std::uniform_real_distribution, whose output the
// standard leaves to the library: the same seeds give the same runs everywhere), ε = 1%,
// 2%, 3%, 5%: the spread of epochs on a quiet to a busy machine. ±ε hides gaps up to 2ε in
// one epoch, so with noise the assertions are rates over 40 seeds per curve and start; over
// 400 seeds golden missed 3% in 6 of 26,400 runs at ε <= 3% (worst +3.7%) and in 47 of
// 8,800 at ε = 5% (worst +4.5%).
#include "adapt/grain_model.hpp"
#include "adapt/grain_search.hpp"

#include <aloe/knob.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {
using namespace aloe::adapt;

// ---- the model ----

TEST(GrainModel, FitRecoversAnExactModel) {
    const grain_model truth{2.0, 3000.0, 0.002};  // minimum at sqrt(3000/0.002) ≈ 1224.7
    std::vector<grain_point> points;
    for (const double g : {10.0, 300.0, 2000.0, 90000.0}) points.push_back({g, truth(g), 1});
    const auto fit = fit_grain_model(points);
    ASSERT_TRUE(fit.has_value());
    EXPECT_NEAR(fit->model.a, truth.a, 1e-9);
    EXPECT_NEAR(fit->model.b, truth.b, 1e-6);
    EXPECT_NEAR(fit->model.c, truth.c, 1e-12);
    EXPECT_NEAR(fit->model.argmin(), std::sqrt(3000.0 / 0.002), 1e-6);
    EXPECT_LT(fit->relative_residual, 1e-12);
}

TEST(GrainModel, FitKeepsTheTermsNonNegative) {
    // Falling cost, flattening: the unconstrained fit would want a negative c; the model
    // keeps c at 0 and its minimum at +inf (the coarse edge).
    std::vector<grain_point> points;
    for (const double g : {10.0, 100.0, 1000.0, 10000.0}) points.push_back({g, 1 + 50 / g - 1e-7 * g, 1});
    const auto fit = fit_grain_model(points);
    ASSERT_TRUE(fit.has_value());
    EXPECT_GE(fit->model.b, 0);
    EXPECT_EQ(fit->model.c, 0);
    EXPECT_TRUE(std::isinf(fit->model.argmin()));
    // And rising cost: b at 0, minimum at 0 (the fine edge).
    points.clear();
    for (const double g : {10.0, 100.0, 1000.0}) points.push_back({g, 1 + 1e-3 * g, 1});
    const auto rising = fit_grain_model(points);
    ASSERT_TRUE(rising.has_value());
    EXPECT_EQ(rising->model.b, 0);
    EXPECT_EQ(rising->model.argmin(), 0);
}

TEST(GrainModel, FitNeedsThreeUsablePoints) {
    std::vector<grain_point> points{{10, 2, 1}, {100, 1, 1}};
    EXPECT_FALSE(fit_grain_model(points).has_value());
    points.push_back({1000, -1, 1});  // a cost below 0 is not a point
    EXPECT_FALSE(fit_grain_model(points).has_value());
    points.back().cost = 3;
    EXPECT_TRUE(fit_grain_model(points).has_value());
}

TEST(GrainModel, ConvexLowerBoundIsBelowTheMinimumAndTightensAroundIt) {
    const auto f = [](double x) { return 1 + 0.3 * (x - 2.2) * (x - 2.2); };  // minimum 1 at 2.2
    std::vector<double> x{0, 1, 3, 6}, y;
    for (const double v : x) y.push_back(f(v));
    const double loose = convex_lower_bound(x, y, 0, 8);
    EXPECT_LE(loose, 1.0);
    x = {0, 2.0, 2.4, 6};  // close around the minimum, but the chords beside come from afar
    y.clear();
    for (const double v : x) y.push_back(f(v));
    const double bracketed = convex_lower_bound(x, y, 0, 8);
    EXPECT_LE(bracketed, 1.0);
    EXPECT_NEAR(bracketed, 0.832, 1e-9);  // the V of the chords (0, 2) and (2.4, 6), at 2.25
    x = {1.8, 2.0, 2.4, 2.6};  // close on both sides, chords too
    y.clear();
    for (const double v : x) y.push_back(f(v));
    const double tight = convex_lower_bound(x, y, 0, 8);
    EXPECT_LE(tight, 1.0);
    EXPECT_GT(tight, loose);
    EXPECT_NEAR(tight, 0.976, 1e-9);  // within 3%: 1.012 − 0.18·0.2
    // Beyond the outermost point the outer chord's extension bounds it: a falling curve
    // measured only up to x = 3 of a domain reaching 8 is not certified.
    x = {0, 1, 3};
    y = {3, 2, 1.5};
    EXPECT_LT(convex_lower_bound(x, y, 0, 8), 1.5 - 0.5);
}

TEST(GrainModel, ConvexLowerBoundNeedsThreePoints) {
    const std::vector<double> x{0, 1}, y{2, 1};
    EXPECT_TRUE(std::isinf(convex_lower_bound(x, y, 0, 2)));
}

// ---- synthetic cost curves ----

struct curve {
    std::string name;
    std::vector<std::int64_t> values;
    std::function<double(double)> cost;
};

std::vector<std::int64_t> geometric(std::int64_t lo, std::int64_t hi) {
    return aloe::knob_range::geometric(lo, hi).admissible();
}

// The stencil of seed 002 §3.1 as a cost model: 10^8 points on 20 cores, 1.2 ns per point
// (Table 9's calibration), 1 µs per task, the last wave's imbalance half a task; `waves`
// counts whole waves of tasks instead (a staircase, not convex).
double stencil_cost(double g, double inflation, bool waves) {
    constexpr double n = 1e8, cores = 20, per_point = 1.2e-9, per_task = 1e-6;
    double wall;
    if (waves) {
        wall = std::ceil(n / g / cores) * (g * per_point + per_task);
    } else {
        wall = std::max(n * per_point / cores * (1 + per_task / (g * per_point)), g * per_point + per_task) +
               0.5 * g * per_point;
    }
    return wall * (1 + inflation * std::log(g));
}

std::vector<curve> reference_curves() {
    const auto wide = geometric(10, 10'000'000);
    const auto stencil_values = aloe::knob_range::divisors_of(100'000'000, 100, 5'000'000).admissible();
    const auto narrow = geometric(10, 1'000'000);
    const auto cosh_u = [](double b) {
        return [b](double g) { return 1 + b * (std::cosh(std::log(g / 1.7e4)) - 1); };
    };
    return {
        {"cosh steep (b=0.3)", wide, cosh_u(0.3)},
        {"cosh (b=0.1)", wide, cosh_u(0.1)},
        {"cosh flat (b=0.03)", wide, cosh_u(0.03)},
        {"cosh flatter (b=0.01)", wide, cosh_u(0.01)},
        {"plateau x20", wide,
         [](double g) { return 1 + 0.05 * std::pow(std::max(0.0, std::abs(std::log(g / 3e4)) - 1.5), 2); }},
        {"asymmetric", wide, [](double g) { return 1 + 0.05 * (2e4 / g) + 0.05 * std::sqrt(g / 2e4); }},
        {"stencil", stencil_values, [](double g) { return stencil_cost(g, 0, false); }},
        {"stencil+inflation", stencil_values, [](double g) { return stencil_cost(g, 0.05, false); }},
        {"stencil waves", stencil_values, [](double g) { return stencil_cost(g, 0, true); }},
        {"falling (edge)", narrow, [](double g) { return 1 + 1000 / g; }},
        {"rising (edge)", narrow, [](double g) { return 1 + 1e-4 * g; }},
    };
}

struct true_best {
    std::int64_t value;
    double cost;
};

true_best best_of(const curve& c) {
    true_best b{c.values.front(), std::numeric_limits<double>::infinity()};
    for (const std::int64_t v : c.values)
        if (c.cost(static_cast<double>(v)) < b.cost) b = {v, c.cost(static_cast<double>(v))};
    return b;
}

struct outcome {
    int epochs = 0;       // evaluations until convergence (or the epochs run, if it never did)
    bool converged = false;
    double error = 0;     // cost at the chosen value over the true best's, minus 1
};

// Runs the search for at most `max_epochs` epochs against `c` with noise ±noise.
outcome drive(const curve& c, grain_search_options o, std::int64_t start, double noise, std::uint64_t seed,
              int max_epochs) {
    grain_search s(c.values, start, o);
    std::mt19937_64 rng(seed);
    const auto u = [&rng] { return static_cast<double>(rng() >> 11) * 0x1p-52 - 1; };  // [−1, 1)
    int epochs = 0;
    while (epochs < max_epochs && s.state() == grain_search_state::searching) {
        const double factor = noise > 0 ? 1 + noise * u() : 1;
        s.observe(c.cost(static_cast<double>(s.value_to_run())) * factor);
        ++epochs;
    }
    outcome r;
    r.converged = s.state() == grain_search_state::converged;
    r.epochs = r.converged ? s.evaluations() : epochs;
    r.error = c.cost(static_cast<double>(s.best_value())) / best_of(c).cost - 1;
    return r;
}

struct summary {
    int runs = 0, converged = 0, within = 0;
    int max_epochs = 0;
    double mean_epochs = 0, worst = 0;
};

// Every curve × {100× too fine, 100× too coarse} × seeds; prints one row per curve and start.
summary sweep_curves(grain_search_kind kind, double noise, int seeds, double within, bool print) {
    summary total;
    for (const curve& c : reference_curves()) {
        const true_best b = best_of(c);
        for (const bool fine : {true, false}) {
            const std::int64_t start = fine ? b.value / 100 : b.value * 100;
            summary row;
            for (int seed = 0; seed < (noise > 0 ? seeds : 1); ++seed) {
                grain_search_options o;
                o.kind = kind;
                const outcome r = drive(c, o, start, noise, static_cast<std::uint64_t>(seed) + 1, 10);
                ++row.runs;
                row.converged += r.converged ? 1 : 0;
                row.within += r.error <= within ? 1 : 0;
                row.max_epochs = std::max(row.max_epochs, r.epochs);
                row.mean_epochs += r.epochs;
                row.worst = std::max(row.worst, r.error);
            }
            if (print)
                std::printf("  %-11s %-22s %-6s noise %2.0f%%: epochs max %2d mean %4.1f | converged %3d/%d | "
                            "within %.0f%% %3d/%d | worst %+5.2f%%\n",
                            std::string(grain_search_names[static_cast<std::size_t>(kind)]).c_str(), c.name.c_str(),
                            fine ? "fine" : "coarse", noise * 100, row.max_epochs, row.mean_epochs / row.runs,
                            row.converged, row.runs, within * 100, row.within, row.runs, row.worst * 100);
            total.runs += row.runs;
            total.converged += row.converged;
            total.within += row.within;
            total.max_epochs = std::max(total.max_epochs, row.max_epochs);
            total.mean_epochs += row.mean_epochs;
            total.worst = std::max(total.worst, row.worst);
        }
    }
    total.mean_epochs /= total.runs;
    return total;
}

constexpr double target = 0.03;  // the issue's: within 3% of the sweep's best
constexpr int seeds = 40;

// ---- golden ----

TEST(GrainSearch, GoldenConvergesWithin3PercentIn10EpochsOnExactCurves) {
    const summary s = sweep_curves(grain_search_kind::golden, 0, 1, target, true);
    EXPECT_EQ(s.converged, s.runs);
    EXPECT_EQ(s.within, s.runs);
    EXPECT_LE(s.max_epochs, 10);
    EXPECT_LE(s.worst, 0.01);  // exact costs: within 1% in fact
}

TEST(GrainSearch, GoldenConvergesWithin3PercentIn10EpochsUnderNoiseUpTo2Percent) {
    for (const double noise : {0.01, 0.02}) {
        const summary s = sweep_curves(grain_search_kind::golden, noise, seeds, target, true);
        EXPECT_EQ(s.within, s.runs) << "noise " << noise;
        EXPECT_LE(s.max_epochs, 10) << "noise " << noise;
    }
}

TEST(GrainSearch, GoldenUnder3And5PercentNoiseMissesRarelyAndNarrowly) {
    const summary three = sweep_curves(grain_search_kind::golden, 0.03, seeds, target, true);
    EXPECT_GE(three.within, three.runs * 99 / 100);
    EXPECT_LE(three.worst, 0.04);
    EXPECT_LE(three.max_epochs, 10);
    const summary five = sweep_curves(grain_search_kind::golden, 0.05, seeds, target, true);
    EXPECT_GE(five.within, five.runs * 98 / 100);
    EXPECT_LE(five.worst, 0.05);
    EXPECT_LE(five.max_epochs, 10);
    std::printf("  golden: noise 3%% %d/%d within 3%% (worst %+.1f%%), noise 5%% %d/%d (worst %+.1f%%)\n",
                three.within, three.runs, three.worst * 100, five.within, five.runs, five.worst * 100);
}

// ---- NLopt's searches: what they achieve, in-run, with the same budget ----

// Runs `kind` on exact costs and at ±3% noise, prints the totals, and checks what it
// achieves: every exact run within 3% in at most 10 epochs; under noise at least
// `noisy_percent`% of the runs within 3% and none beyond `noisy_worst`.
void expect_nlopt(grain_search_kind kind, int noisy_percent, double noisy_worst) {
    const summary exact = sweep_curves(kind, 0, 1, target, true);
    const summary noisy = sweep_curves(kind, 0.03, seeds, target, true);
    std::printf("  %s: exact %d/%d within 3%% (worst %+.1f%%), noise 3%% %d/%d (worst %+.1f%%)\n",
                std::string(grain_search_names[static_cast<std::size_t>(kind)]).c_str(), exact.within, exact.runs,
                exact.worst * 100, noisy.within, noisy.runs, noisy.worst * 100);
    EXPECT_LE(exact.max_epochs, 10);
    EXPECT_LE(noisy.max_epochs, 10);
    EXPECT_EQ(exact.converged, exact.runs);  // converged or budget spent: never still searching
    EXPECT_EQ(exact.within, exact.runs);
    EXPECT_GE(noisy.within, noisy.runs * noisy_percent / 100);
    EXPECT_LE(noisy.worst, noisy_worst);
}

TEST(GrainSearch, NelderMeadWithinTheBudget) {
    // In-run, with repeats answered from the means, NLopt's simplex does well on exact costs;
    // under noise one unlucky comparison sends it astray (up to +14.7% here; over 400 seeds
    // 8466/8800 within 3%).
    expect_nlopt(grain_search_kind::nelder_mead, 95, 0.15);
}

TEST(GrainSearch, BobyqaWithinTheBudget) {
    // Its quadratic model in ln(value) absorbs noise better than the simplex (over 400 seeds
    // 8708/8800 within 3%, worst +4.0%), not as well as golden's re-measuring.
    expect_nlopt(grain_search_kind::bobyqa, 98, 0.05);
}

// ---- sweep ----

TEST(GrainSearch, SweepMeasuresEveryValueAndFindsTheBest) {
    for (const curve& c : reference_curves()) {
        grain_search_options o;
        o.kind = grain_search_kind::sweep;
        grain_search s(c.values, c.values[c.values.size() / 2], o);
        EXPECT_EQ(s.value_to_run(), c.values[c.values.size() / 2]);  // the start first
        int epochs = 0;
        while (s.state() == grain_search_state::searching) {
            s.observe(c.cost(static_cast<double>(s.value_to_run())));
            ++epochs;
        }
        EXPECT_EQ(epochs, static_cast<int>(c.values.size())) << c.name;
        EXPECT_EQ(s.stop_reason(), grain_stop::swept);
        EXPECT_EQ(s.best_value(), best_of(c).value) << c.name;
    }
}

// ---- behaviour ----

TEST(GrainSearch, RejectsBadArguments) {
    EXPECT_THROW(grain_search({}, 1), std::invalid_argument);
    EXPECT_THROW(grain_search({0, 5}, 1), std::invalid_argument);
    EXPECT_THROW(grain_search({5, 5}, 1), std::invalid_argument);
    EXPECT_THROW(grain_search({6, 5}, 1), std::invalid_argument);
    grain_search_options o;
    o.tolerance = 0;
    EXPECT_THROW(grain_search({1, 2}, 1, o), std::invalid_argument);
    o = {};
    o.max_evaluations = -1;
    EXPECT_THROW(grain_search({1, 2}, 1, o), std::invalid_argument);
    o = {};
    o.recheck_every = -1;
    EXPECT_THROW(grain_search({1, 2}, 1, o), std::invalid_argument);
}

TEST(GrainSearch, StartsAtTheNearestValueInLog) {
    EXPECT_EQ(grain_search({10, 100, 1000}, 31).value_to_run(), 10);   // ln 31 is nearer ln 10
    EXPECT_EQ(grain_search({10, 100, 1000}, 32).value_to_run(), 100);  // and ln 32 nearer ln 100
    EXPECT_EQ(grain_search({10, 100, 1000}, -5).value_to_run(), 10);
    EXPECT_EQ(grain_search({10, 100, 1000}, 1 << 30).value_to_run(), 1000);
}

TEST(GrainSearch, OneValueIsConvergedAtOnce) {
    grain_search s({64}, 1000);
    EXPECT_EQ(s.state(), grain_search_state::converged);
    EXPECT_EQ(s.stop_reason(), grain_stop::single_value);
    EXPECT_EQ(s.value_to_run(), 64);
    s.observe(1.0);
    EXPECT_EQ(s.value_to_run(), 64);
}

TEST(GrainSearch, ABrokenObjectiveIsNoEvidence) {
    grain_search s(geometric(10, 100000), 100);
    const std::int64_t start = s.value_to_run();
    s.observe(std::numeric_limits<double>::quiet_NaN());
    s.observe(-1);
    s.observe(std::numeric_limits<double>::infinity());
    EXPECT_EQ(s.evaluations(), 0);
    EXPECT_EQ(s.value_to_run(), start);
    s.observe(2.0);
    EXPECT_EQ(s.evaluations(), 1);
    EXPECT_NE(s.value_to_run(), start);
}

TEST(GrainSearch, AFlatCostConvergesAtOnce) {
    // Nothing to gain anywhere: the convex bound certifies the start's neighbourhood.
    grain_search s(geometric(10, 10'000'000), 1000);
    int epochs = 0;
    while (s.state() == grain_search_state::searching && epochs < 20) {
        s.observe(1.0);
        ++epochs;
    }
    EXPECT_EQ(s.state(), grain_search_state::converged);
    EXPECT_LE(epochs, 5);
}

TEST(GrainSearch, MonotoneCostsEndAtTheirEdge) {
    const auto values = geometric(10, 1'000'000);
    for (const bool falling : {true, false}) {
        grain_search s(values, 3000);
        for (int e = 0; e < 10 && s.state() == grain_search_state::searching; ++e) {
            const double g = static_cast<double>(s.value_to_run());
            s.observe(falling ? 1 + 1000 / g : 1 + 1e-4 * g);
        }
        EXPECT_EQ(s.state(), grain_search_state::converged);
        const double g = static_cast<double>(s.best_value());
        const double cost = falling ? 1 + 1000 / g : 1 + 1e-4 * g;
        const double edge = falling ? 1 + 1000 / 1e6 : 1 + 1e-4 * 10;
        EXPECT_LE(cost / edge - 1, 0.01) << (falling ? "falling" : "rising") << " chose " << g;
    }
}

TEST(GrainSearch, KeepsProposingTheBestOnceConverged) {
    const curve c = reference_curves()[1];
    grain_search_options o;
    o.recheck_every = 0;
    grain_search s(c.values, 170, o);
    while (s.state() == grain_search_state::searching) s.observe(c.cost(static_cast<double>(s.value_to_run())));
    const std::int64_t best = s.best_value();
    for (int e = 0; e < 200; ++e) {
        ASSERT_EQ(s.value_to_run(), best);
        s.observe(c.cost(static_cast<double>(best)));
    }
    EXPECT_EQ(s.rechecks(), 0);
    EXPECT_EQ(s.epochs_since_convergence(), 200);
}

TEST(GrainSearch, RechecksFollowAnOptimumThatDrifts) {
    // Converge on a U with its minimum at 1.7e4; then the minimum moves to 5e4 (×3): the
    // re-checks walk the best towards it.
    const auto values = geometric(10, 10'000'000);
    double center = 1.7e4;
    const auto cost = [&](std::int64_t v) {
        return 1 + 0.3 * (std::cosh(std::log(static_cast<double>(v) / center)) - 1);
    };
    grain_search_options o;
    o.recheck_every = 4;
    grain_search s(values, 170, o);
    while (s.state() == grain_search_state::searching) s.observe(cost(s.value_to_run()));
    const std::int64_t first = s.best_value();
    EXPECT_NEAR(std::log(static_cast<double>(first) / center), 0, 0.2);
    center = 5e4;
    int rechecks_seen = 0;
    for (int e = 0; e < 400; ++e) {
        if (s.value_to_run() != s.best_value()) ++rechecks_seen;
        s.observe(cost(s.value_to_run()));
    }
    EXPECT_GT(rechecks_seen, 0);
    EXPECT_EQ(s.rechecks(), rechecks_seen);
    EXPECT_GT(s.best_value(), first);
    EXPECT_LE(cost(s.best_value()) - 1, 0.03);  // back within 3% of the new optimum
}

TEST(GrainSearch, NloptRepeatsCostNoEpoch) {
    // Every epoch measures a value not measured before: NLopt's repeated points (and points
    // snapping to a measured value) are answered from the means.
    for (const auto kind : {grain_search_kind::nelder_mead, grain_search_kind::bobyqa}) {
        const curve c = reference_curves()[0];
        grain_search_options o;
        o.kind = kind;
        o.max_evaluations = 30;
        grain_search s(c.values, 170, o);
        std::vector<std::int64_t> seen;
        while (s.state() == grain_search_state::searching) {
            seen.push_back(s.value_to_run());
            s.observe(c.cost(static_cast<double>(s.value_to_run())));
        }
        std::vector<std::int64_t> distinct = seen;
        std::sort(distinct.begin(), distinct.end());
        distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
        EXPECT_EQ(distinct.size(), seen.size()) << grain_search_names[static_cast<std::size_t>(kind)];
        EXPECT_GE(seen.size(), 3u);  // it did search (BOBYQA in one dimension included)
    }
}

TEST(GrainSearch, TheBudgetEndsASearch) {
    const curve c = reference_curves()[3];
    grain_search_options o;
    o.max_evaluations = 3;
    grain_search s(c.values, 170, o);
    for (int e = 0; e < 3; ++e) s.observe(c.cost(static_cast<double>(s.value_to_run())));
    EXPECT_EQ(s.state(), grain_search_state::converged);
    EXPECT_EQ(s.stop_reason(), grain_stop::budget);
    EXPECT_EQ(s.evaluations(), 3);
}

TEST(GrainSearch, NoiseEstimateComesFromRepeatedValues) {
    const curve c = reference_curves()[1];
    grain_search s(c.values, 170);
    EXPECT_NEAR(s.noise_estimate(), 0.02, 1e-12);  // the prior, before any repeat
    while (s.state() == grain_search_state::searching) s.observe(c.cost(static_cast<double>(s.value_to_run())));
    EXPECT_GE(s.stats(s.best_index()).n, 2u);  // the best was measured twice before stopping
    EXPECT_LT(s.noise_estimate(), 0.01);       // and exactly alike: the prior all but gone
}

}  // namespace

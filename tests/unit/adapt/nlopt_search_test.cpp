// adapt/nlopt_search: the ask/tell inversion of NLopt on synthetic costs (exact and noisy),
// medians of samples_per_point invocations, the evaluation budget, argument checks, and
// shutting the optimiser thread down in the middle of a search.
#include "adapt/nlopt_search.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace {
using namespace aloe::adapt;

using cost_fn = std::function<double(std::span<const double>)>;

std::vector<knob_range> xy() { return {{"x", 0, 1}, {"y", 0, 6}}; }

// The convex test cost: minimum 1 at (0.7, 3).
double bowl(std::span<const double> p) { return (p[0] - 0.7) * (p[0] - 0.7) + (p[1] - 3) * (p[1] - 3) + 1; }

std::vector<double> copy(std::span<const double> p) { return {p.begin(), p.end()}; }

// Runs the search against `cost` for at most `invocations` loop runs, checking the budget
// after every one; returns how many it took to finish (or -1).
int drive(nlopt_search& s, const cost_fn& cost, int invocations, int max_evaluations) {
    for (int i = 0; i < invocations; ++i) {
        if (s.done()) return i;
        s.observe(cost(s.point_to_run()));
        EXPECT_LE(s.evaluations(), max_evaluations);
    }
    return s.done() ? invocations : -1;
}

TEST(NloptSearch, FindsTheMinimumOfAConvexCost) {
    nlopt_search_options o;
    o.max_evaluations = 60;
    o.relative_tolerance = 1e-4;
    nlopt_search s(xy(), {0.2, 1.0}, o);
    ASSERT_GE(drive(s, bowl, 3 * 60 + 3, 60), 0);
    EXPECT_LE(s.evaluations(), 60);
    // Within 0.05 of the minimum in x and 0.15 in y (a 2.5% slice of each range).
    EXPECT_NEAR(s.best_point()[0], 0.7, 0.05);
    EXPECT_NEAR(s.best_point()[1], 3.0, 0.15);
    EXPECT_EQ(s.best_seconds(), bowl(s.best_point()));  // exact cost: the median is the cost
    EXPECT_EQ(copy(s.point_to_run()), copy(s.best_point()));
    EXPECT_EQ(s.reason(), "converged: tolerance reached");
}

class NloptSearchAlgorithm : public testing::TestWithParam<nlopt_algorithm> {};

TEST_P(NloptSearchAlgorithm, EachLocalDerivativeFreeOneFindsTheMinimum) {
    nlopt_search_options o;
    o.algorithm = GetParam();
    o.max_evaluations = 80;
    o.relative_tolerance = 1e-4;
    o.samples_per_point = 1;
    nlopt_search s(xy(), {0.2, 1.0}, o);
    ASSERT_GE(drive(s, bowl, 81, 80), 0) << nlopt_algorithm_to_string(GetParam());
    EXPECT_NEAR(s.best_point()[0], 0.7, 0.05) << nlopt_algorithm_to_string(GetParam());
    EXPECT_NEAR(s.best_point()[1], 3.0, 0.15) << nlopt_algorithm_to_string(GetParam());
}

INSTANTIATE_TEST_SUITE_P(All, NloptSearchAlgorithm,
                         testing::Values(NLOPT_LN_SBPLX, NLOPT_LN_NELDERMEAD, NLOPT_LN_BOBYQA, NLOPT_LN_COBYLA,
                                         NLOPT_LN_NEWUOA_BOUND, NLOPT_LN_PRAXIS),
                         [](const testing::TestParamInfo<nlopt_algorithm>& param) {
                             return std::string(nlopt_algorithm_to_string(param.param)).substr(3);  // "SBPLX"
                         });

TEST(NloptSearch, MovesOnlyAfterSamplesPerPointInvocationsJudgedByTheirMedian) {
    nlopt_search_options o;
    o.samples_per_point = 4;
    nlopt_search s(xy(), {0.2, 1.0}, o);
    const std::vector<double> first = copy(s.point_to_run());
    EXPECT_EQ(first, (std::vector<double>{0.2, 1.0}));
    // Three invocations at the start: still there, nothing judged.
    for (const double t : {9.0, 2.0, 7.0}) {
        s.observe(t);
        EXPECT_EQ(copy(s.point_to_run()), first);
        EXPECT_EQ(s.evaluations(), 0);
        EXPECT_EQ(s.best_seconds(), std::numeric_limits<double>::infinity());
    }
    s.observe(3.0);  // the fourth: judged by the median of {9, 2, 7, 3} = 5, then it moves
    EXPECT_EQ(s.evaluations(), 1);
    EXPECT_EQ(s.best_seconds(), 5.0);
    EXPECT_EQ(copy(s.best_point()), first);
    EXPECT_NE(copy(s.point_to_run()), first);
    // And so on for every later point: evaluations advance once per four invocations.
    for (int point = 2; point <= 6 && !s.done(); ++point) {
        for (int i = 0; i < 4; ++i) {
            EXPECT_EQ(s.evaluations(), point - 1);
            s.observe(bowl(s.point_to_run()));
        }
        EXPECT_EQ(s.evaluations(), point);
    }
}

class NloptSearchNoisy : public testing::TestWithParam<nlopt_algorithm> {};

TEST_P(NloptSearchNoisy, NoisyCostEndsNearTheMinimum) {
    // 2% multiplicative noise, medians of 3 invocations, 30 points, seeds 1..50. Every seed
    // ends within 30% of the minimum cost (it starts 425% above it), and at least 45 of 50
    // within 5% of it and within (±0.25, ±0.5) of the minimum point. Not every seed: where x
    // barely shows at the start (its gain is 4% of the time there), an unlucky median can
    // shrink the step in x early. Measured over 500 seeds: Subplex misses 5% 3.4% of the
    // time (worst 27% above), Nelder-Mead 0.2%, BOBYQA 4.4%; COBYLA misses 33% (not listed).
    const nlopt_algorithm algorithm = GetParam();
    int near = 0;
    for (unsigned seed = 1; seed <= 50; ++seed) {
        std::mt19937_64 rng(seed);
        std::normal_distribution<double> noise(0.0, 0.02);
        nlopt_search_options o;
        o.algorithm = algorithm;
        o.max_evaluations = 30;
        nlopt_search s(xy(), {0.2, 1.0}, o);
        ASSERT_GE(drive(s, [&](std::span<const double> p) { return bowl(p) * (1 + noise(rng)); }, 3 * 30 + 3, 30), 0)
            << "seed " << seed;
        const double cost = bowl(s.best_point());
        EXPECT_LE(cost, 1.3) << "seed " << seed;
        if (cost <= 1.05 && std::abs(s.best_point()[0] - 0.7) <= 0.25 && std::abs(s.best_point()[1] - 3) <= 0.5)
            ++near;
    }
    EXPECT_GE(near, 45);
}

INSTANTIATE_TEST_SUITE_P(All, NloptSearchNoisy, testing::Values(NLOPT_LN_SBPLX, NLOPT_LN_NELDERMEAD, NLOPT_LN_BOBYQA),
                         [](const testing::TestParamInfo<nlopt_algorithm>& param) {
                             return std::string(nlopt_algorithm_to_string(param.param)).substr(3);
                         });

TEST(NloptSearch, SameTimesSameSearch) {
    // The handshake makes the search a function of the observed times: two searches fed the
    // same noisy sequence ask for the same points in the same order. Also for PRAXIS, which
    // may draw random numbers (from NLopt's generator, seeded on the optimiser thread); this
    // cost does not make it draw any, so that seed is not what this checks.
    const auto run = [](unsigned seed, nlopt_algorithm algorithm) {
        std::mt19937_64 rng(seed);
        std::normal_distribution<double> noise(0.0, 0.05);
        nlopt_search_options o;
        o.algorithm = algorithm;
        nlopt_search s(xy(), {0.9, 5.0}, o);
        std::vector<double> trace;
        while (!s.done()) {
            trace.insert(trace.end(), s.point_to_run().begin(), s.point_to_run().end());
            s.observe(bowl(s.point_to_run()) * (1 + noise(rng)));
        }
        return trace;
    };
    for (const nlopt_algorithm algorithm : {NLOPT_LN_SBPLX, NLOPT_LN_PRAXIS}) {
        const std::vector<double> a = run(7, algorithm);
        EXPECT_EQ(a, run(7, algorithm)) << nlopt_algorithm_to_string(algorithm);
        EXPECT_GT(a.size(), 6u) << nlopt_algorithm_to_string(algorithm);  // it did move
    }
}

TEST(NloptSearch, EvaluationBudgetBoundsTheSearch) {
    // A cost that keeps improving towards a corner: only the budget stops it.
    nlopt_search_options o;
    o.max_evaluations = 5;
    o.samples_per_point = 2;
    o.relative_tolerance = 0;
    nlopt_search s(xy(), {0.5, 3.0}, o);
    const cost_fn slope = [](std::span<const double> p) { return 100 - 10 * p[0] - p[1]; };
    ASSERT_GE(drive(s, slope, 100, 5), 0);
    EXPECT_TRUE(s.done());
    EXPECT_EQ(s.evaluations(), 5);
    EXPECT_EQ(s.reason(), "evaluation budget spent");
    EXPECT_EQ(copy(s.point_to_run()), copy(s.best_point()));
    EXPECT_EQ(s.best_seconds(), slope(s.best_point()));
    EXPECT_LT(s.best_seconds(), slope(std::vector<double>{0.5, 3.0}));  // it did improve
    // Once done, observations change nothing.
    for (int i = 0; i < 10; ++i) s.observe(0.001);
    EXPECT_EQ(s.evaluations(), 5);
    EXPECT_EQ(copy(s.point_to_run()), copy(s.best_point()));
    EXPECT_NE(s.best_seconds(), 0.001);
}

TEST(NloptSearch, OneEvaluationBudget) {
    nlopt_search_options o;
    o.max_evaluations = 1;
    o.samples_per_point = 1;
    nlopt_search s(xy(), {0.2, 1.0}, o);
    EXPECT_FALSE(s.done());
    s.observe(2.5);
    EXPECT_TRUE(s.done());
    EXPECT_EQ(s.evaluations(), 1);
    EXPECT_EQ(s.best_seconds(), 2.5);
    EXPECT_EQ(copy(s.point_to_run()), (std::vector<double>{0.2, 1.0}));
}

TEST(NloptSearch, NonFiniteOrNegativeTimesAreIgnored) {
    nlopt_search_options o;
    o.samples_per_point = 1;
    nlopt_search s(xy(), {0.2, 1.0}, o);
    for (const double t : {std::nan(""), std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity(), -1.0}) {
        s.observe(t);
        EXPECT_EQ(s.evaluations(), 0);
        EXPECT_EQ(copy(s.point_to_run()), (std::vector<double>{0.2, 1.0}));
    }
    s.observe(4.0);  // a real time moves it on
    EXPECT_EQ(s.evaluations(), 1);
    EXPECT_EQ(s.best_seconds(), 4.0);
    EXPECT_NE(copy(s.point_to_run()), (std::vector<double>{0.2, 1.0}));
}

TEST(NloptSearch, StartIsClampedIntoRange) {
    nlopt_search s(xy(), {5.0, -3.0});
    EXPECT_EQ(copy(s.point_to_run()), (std::vector<double>{1.0, 0.0}));
    EXPECT_EQ(s.reason(), "searching");
    EXPECT_FALSE(s.done());
}

TEST(NloptSearch, EveryAskedPointIsInRange) {
    // From a corner, with steps half the range, towards a minimum outside the box at (-3, -10):
    // no algorithm may ask for a point outside it, and each improves on the start.
    for (const nlopt_algorithm a : {NLOPT_LN_SBPLX, NLOPT_LN_NELDERMEAD, NLOPT_LN_BOBYQA, NLOPT_LN_COBYLA,
                                    NLOPT_LN_NEWUOA_BOUND, NLOPT_LN_PRAXIS}) {
        nlopt_search_options o;
        o.algorithm = a;
        o.samples_per_point = 1;
        o.max_evaluations = 40;
        o.initial_step = 0.5;
        nlopt_search s(xy(), {1.0, 6.0}, o);
        const cost_fn far = [&](std::span<const double> p) {
            EXPECT_TRUE(p[0] >= 0 && p[0] <= 1 && p[1] >= 0 && p[1] <= 6)
                << nlopt_algorithm_to_string(a) << " asked for (" << p[0] << ", " << p[1] << ")";
            return 1 + (p[0] + 3) * (p[0] + 3) + (p[1] + 10) * (p[1] + 10);
        };
        ASSERT_GE(drive(s, far, 41, 40), 0) << nlopt_algorithm_to_string(a);
        EXPECT_LT(s.best_seconds(), far(std::vector<double>{1.0, 6.0})) << nlopt_algorithm_to_string(a);
    }
}

TEST(NloptSearch, NloptFailureSettlesOnTheStartNamingIt) {
    // BOBYQA needs twice its first step to fit between the bounds; NLopt refuses at once.
    nlopt_search_options o;
    o.algorithm = NLOPT_LN_BOBYQA;
    o.initial_step = 1;
    nlopt_search s(xy(), {0.2, 7.0}, o);
    EXPECT_TRUE(s.done());
    EXPECT_EQ(s.reason().rfind("NLopt failed: INVALID_ARGS", 0), 0u) << s.reason();
    EXPECT_EQ(s.evaluations(), 0);
    EXPECT_EQ(s.best_seconds(), std::numeric_limits<double>::infinity());
    EXPECT_EQ(copy(s.point_to_run()), (std::vector<double>{0.2, 6.0}));
    s.observe(1.0);  // ignored once done
    EXPECT_EQ(s.evaluations(), 0);
}

void expect_rejected(const std::vector<knob_range>& knobs, const std::vector<double>& start,
                     const nlopt_search_options& o, const std::string& fragment) {
    try {
        nlopt_search s(knobs, start, o);
        ADD_FAILURE() << "accepted; expected an error naming '" << fragment << "'";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
}

TEST(NloptSearch, BadArgumentsThrowNamingTheProblem) {
    const nlopt_search_options ok;
    expect_rejected({}, {}, ok, "no knobs");
    expect_rejected({{"chunk", 4, 4}}, {4}, ok, "knob 'chunk': low must be below high");
    expect_rejected({{"fs", 1, 0}}, {0.5}, ok, "knob 'fs'");
    expect_rejected({{"fs", 0, std::numeric_limits<double>::infinity()}}, {0.5}, ok, "knob 'fs'");
    expect_rejected(xy(), {0.5}, ok, "start has 1 values for 2 knobs");
    expect_rejected(xy(), {0.5, std::nan("")}, ok, "start for knob 'y' is not finite");
    auto o = ok;
    o.samples_per_point = 0;
    expect_rejected(xy(), {0.5, 1}, o, "samples_per_point");
    o = ok;
    o.max_evaluations = 0;
    expect_rejected(xy(), {0.5, 1}, o, "max_evaluations");
    o = ok;
    o.relative_tolerance = -0.1;
    expect_rejected(xy(), {0.5, 1}, o, "relative_tolerance");
    o = ok;
    o.initial_step = 0;
    expect_rejected(xy(), {0.5, 1}, o, "initial_step");
    o = ok;
    o.algorithm = NLOPT_GN_DIRECT;
    expect_rejected(xy(), {0.5, 1}, o, "algorithm GN_DIRECT is not a local derivative-free one");
    o.algorithm = NLOPT_LD_LBFGS;
    expect_rejected(xy(), {0.5, 1}, o, "algorithm LD_LBFGS");
    o.algorithm = NLOPT_LN_AUGLAG;
    expect_rejected(xy(), {0.5, 1}, o, "algorithm LN_AUGLAG");
    o.algorithm = NLOPT_LN_NEWUOA;
    expect_rejected(xy(), {0.5, 1}, o, "LN_NEWUOA ignores bounds");
    o.algorithm = static_cast<nlopt_algorithm>(NLOPT_NUM_ALGORITHMS);
    expect_rejected(xy(), {0.5, 1}, o, "not an NLopt algorithm");
}

TEST(NloptSearch, DestroyingMidSearchReturns) {
    // The optimiser thread waits inside NLopt's objective; the destructor must wake it, stop
    // NLopt and join, wherever the search stands. (A hang fails by the test's timeout.)
    int destroyed = 0;
    for (int i = 0; i < 20; ++i) {
        {
            nlopt_search s(xy(), {0.2, 1.0});  // right after the first request
        }
        {
            nlopt_search s(xy(), {0.2, 1.0});
            s.observe(1.0);  // in the middle of a point
            EXPECT_EQ(s.evaluations(), 0);
        }
        {
            nlopt_search s(xy(), {0.2, 1.0});
            for (int k = 0; k < 3 * (i % 5 + 1); ++k) s.observe(bowl(s.point_to_run()));
            EXPECT_EQ(s.evaluations(), i % 5 + 1);  // between points
            EXPECT_FALSE(s.done());
        }
        ++destroyed;
    }
    EXPECT_EQ(destroyed, 20);
}

TEST(NloptSearch, OneKnob) {
    nlopt_search_options o;
    o.samples_per_point = 1;
    o.max_evaluations = 30;
    o.relative_tolerance = 1e-6;
    nlopt_search s({{"fs", 0, 1}}, {0.1}, o);
    ASSERT_GE(drive(s, [](std::span<const double> p) { return 1 + std::abs(p[0] - 0.35); }, 31, 30), 0);
    EXPECT_NEAR(s.best_point()[0], 0.35, 0.03);
    EXPECT_EQ(s.knobs()[0].name, "fs");
}

}  // namespace

// coord/speedup_model, coord/integer_partition, coord/efficiency_filter, coord/token_bucket:
// the arithmetic of aloed's allocations against the thesis's worked examples (notes §2.3),
// hand-computed cases, properties over seeded random share vectors, an exhaustive search
// for the greedy optimum, and exact sequences for the filter and the bucket. No timing:
// every time is an argument.
//
// Random numbers: std::mt19937_64 seeded per case, its raw output turned into doubles here
// (not by std::uniform_real_distribution, whose output the standard leaves to the library),
// so the same seeds give the same cases everywhere.
#include "coord/efficiency_filter.hpp"
#include "coord/integer_partition.hpp"
#include "coord/speedup_model.hpp"
#include "coord/token_bucket.hpp"

#include "unit/coord/allocation_test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

namespace {
using namespace aloe::coord;

constexpr double nan_value = std::numeric_limits<double>::quiet_NaN();
constexpr double inf_value = std::numeric_limits<double>::infinity();

using namespace aloe::coord::testing;

// ---- the model ----

TEST(CoordSpeedupModel, WorkedExampleOfFigure4_2) {
    // N = 16; foo: E = 2/3 on 12 threads, C = 7/ln 12; baz: E = 3/8 on 4, C = 0.5/ln 4.
    const double foo = log_speedup_slope(2.0 / 3.0, 12, 0);
    const double baz = log_speedup_slope(3.0 / 8.0, 4, 0);
    EXPECT_NEAR(foo, 7 / std::log(12.0), 1e-12);
    EXPECT_NEAR(foo, 2.817, 5e-4);
    EXPECT_NEAR(baz, 0.5 / std::log(4.0), 1e-12);
    EXPECT_NEAR(baz, 0.361, 5e-4);

    const std::vector<double> slopes{foo, baz};
    const auto shares = proportional_shares(slopes);
    ASSERT_EQ(shares.size(), 2u);
    EXPECT_NEAR(16 * shares[0], 14.184, 1e-3);  // the thesis's 14.18 / 1.82
    EXPECT_NEAR(16 * shares[1], 1.816, 1e-3);

    const auto split = partition_by_shares(16, 1, shares);
    EXPECT_EQ(split.threads, (std::vector<unsigned>{14, 2}));
    EXPECT_FALSE(split.oversubscribed);
    EXPECT_NEAR(modelled_speedup(foo, 14), 8.43, 0.01);

    const auto curves = log_curves(slopes);
    const auto best = greedy_optimum(16, 1, curves);
    EXPECT_EQ(best, (std::vector<unsigned>{14, 2}));
    EXPECT_EQ(total_speedup(slopes, split.threads), total_speedup(slopes, best));
}

TEST(CoordSpeedupModel, ThirtySixCoreIllustration) {
    // CG and LU at 18/18 on 36 cores with IPC ratios 17.4 and 13.7 (Table 4.2):
    // C = 16.4/ln 18 = 5.674 and 12.7/ln 18 = 4.394. Exact split 36·16.4/29.1 = 20.289 and
    // 15.711: floors 20 + 15 leave one core, which goes to the larger remainder (LU's 0.711
    // over CG's 0.289): {20, 16}. The greedy optimum agrees: LU's 16th thread gains
    // 4.394·ln(16/15) = 0.2836, CG's 21st only 5.674·ln(21/20) = 0.2768.
    const double cg = log_speedup_slope(17.4 / 18, 18, 0);
    const double lu = log_speedup_slope(13.7 / 18, 18, 0);
    EXPECT_NEAR(cg, 5.674, 5e-4);
    EXPECT_NEAR(lu, 4.394, 5e-4);
    const std::vector<double> slopes{cg, lu};
    const auto shares = proportional_shares(slopes);
    EXPECT_NEAR(36 * shares[0], 20.289, 1e-3);
    EXPECT_NEAR(36 * shares[1], 15.711, 1e-3);
    EXPECT_EQ(partition_by_shares(36, 1, shares).threads, (std::vector<unsigned>{20, 16}));
    EXPECT_EQ(greedy_optimum(36, 1, log_curves(slopes)), (std::vector<unsigned>{20, 16}));
}

TEST(CoordSpeedupModel, OneThreadSaysNothingAboutScaling) {
    EXPECT_EQ(log_speedup_slope(0.9, 1, 2.5), 2.5);  // keeps what it learnt
    EXPECT_EQ(log_speedup_slope(0.1, 1, 0.02), 0.02);
    EXPECT_EQ(log_speedup_slope(0.9, 0, 2.5), 2.5);
    EXPECT_EQ(log_speedup_slope(0.9, 1, 0), unknown_slope);  // no history: the prior
    EXPECT_EQ(log_speedup_slope(0.9, 1, -3), unknown_slope);
    EXPECT_EQ(log_speedup_slope(0.9, 1, nan_value), unknown_slope);
    EXPECT_EQ(log_speedup_slope(0.9, 1, inf_value), unknown_slope);
    EXPECT_EQ(unknown_slope, 1.0);
}

TEST(CoordSpeedupModel, NoGainIsCreditedWithTheLeastGain) {
    const double floor4 = least_gain / std::log(4.0);
    EXPECT_DOUBLE_EQ(log_speedup_slope(0.2, 4, 3), floor4);    // E·p = 0.8: a slowdown
    EXPECT_DOUBLE_EQ(log_speedup_slope(0.255, 4, 3), floor4);  // E·p = 1.02 < 1 + least_gain
    EXPECT_DOUBLE_EQ(log_speedup_slope(0, 4, 3), floor4);
    EXPECT_DOUBLE_EQ(log_speedup_slope(-0.5, 4, 3), floor4);
    EXPECT_DOUBLE_EQ(log_speedup_slope(nan_value, 4, 3), floor4);
    EXPECT_DOUBLE_EQ(log_speedup_slope(inf_value, 4, 3), floor4);
    EXPECT_DOUBLE_EQ(log_speedup_slope(-inf_value, 4, 3), floor4);
    EXPECT_DOUBLE_EQ(log_speedup_slope(0.375, 4, 3), 0.5 / std::log(4.0));  // above the floor: the fit
    // SCAF's code would credit the slowdown with gain 1 (speedup 2 on 4 threads); here it
    // models barely any speedup.
    EXPECT_LT(modelled_speedup(log_speedup_slope(0.2, 4, 3), 4), 1 + 2 * least_gain);
    // All clients slow down: equal floors, equal shares.
    const std::vector<double> slopes{log_speedup_slope(0.1, 8, 0), log_speedup_slope(0, 8, 0)};
    EXPECT_EQ(proportional_shares(slopes), (std::vector<double>{0.5, 0.5}));
}

TEST(CoordSpeedupModel, EfficiencyIsCappedAtTwo) {
    EXPECT_DOUBLE_EQ(log_speedup_slope(3.0, 4, 0), (efficiency_cap * 4 - 1) / std::log(4.0));
    EXPECT_DOUBLE_EQ(log_speedup_slope(2.0, 4, 0), 7 / std::log(4.0));
    EXPECT_EQ(log_speedup_slope(1e300, 4, 0), log_speedup_slope(2.0, 4, 0));
}

TEST(CoordSpeedupModel, SlopeIsFiniteAndPositiveForAnyReport) {
    std::mt19937_64 rng(7);
    const double odd[] = {nan_value, inf_value, -inf_value, -1.0, 0.0, 1e-300, 1.0, 2.0, 1e300};
    const unsigned threads[] = {0u, 1u, 2u, 3u, 64u, 4096u, 0xffffffffu};
    for (const double e : odd)
        for (const unsigned p : threads)
            for (const double previous : odd) {
                const double c = log_speedup_slope(e, p, previous);
                EXPECT_TRUE(std::isfinite(c) && c > 0) << e << " " << p << " " << previous;
            }
    for (int i = 0; i < 1000; ++i) {
        const double c = log_speedup_slope(3 * unit(rng) - 0.5, 1 + static_cast<unsigned>(rng() % 256), 0);
        EXPECT_TRUE(std::isfinite(c) && c > 0);
    }
}

TEST(CoordSpeedupModel, ProportionalSharesAndModelledSpeedup) {
    EXPECT_TRUE(proportional_shares({}).empty());
    const std::vector<double> zeros{0, 0, 0, 0};
    EXPECT_EQ(proportional_shares(zeros), (std::vector<double>(4, 0.25)));
    const std::vector<double> mixed{3, nan_value, -2, 1, inf_value};
    const auto mixed_shares = proportional_shares(mixed);
    ASSERT_EQ(mixed_shares.size(), 5u);
    EXPECT_DOUBLE_EQ(mixed_shares[0], 0.75);
    EXPECT_DOUBLE_EQ(mixed_shares[3], 0.25);
    EXPECT_EQ(mixed_shares[1] + mixed_shares[2] + mixed_shares[4], 0.0);
    const std::vector<double> huge{1e308, 1e308};  // the sum would overflow
    EXPECT_EQ(proportional_shares(huge), (std::vector<double>{0.5, 0.5}));

    EXPECT_EQ(modelled_speedup(2.5, 1), 1.0);
    EXPECT_DOUBLE_EQ(modelled_speedup(2.0, std::exp(1.0)), 3.0);
    EXPECT_EQ(modelled_speedup(2.0, 0), 0.0);
    EXPECT_EQ(modelled_speedup(2.0, -1), 0.0);
}

// ---- the greedy optimum ----

TEST(CoordGreedyOptimum, TiesGoToTheLowerIndexAndChunksAreWhole) {
    const auto same = log_curves({1.0, 1.0, 1.0});
    EXPECT_EQ(greedy_optimum(4, 1, same), (std::vector<unsigned>{2, 1, 1}));
    EXPECT_EQ(greedy_optimum(5, 1, same), (std::vector<unsigned>{2, 2, 1}));
    EXPECT_EQ(greedy_optimum(15, 2, same), (std::vector<unsigned>{6, 4, 4}));  // 7 chunks, 1 core unused
    EXPECT_EQ(greedy_optimum(15, 0, same), greedy_optimum(15, 1, same));       // chunk 0 is 1
    EXPECT_EQ(greedy_optimum(5, 2, same), (std::vector<unsigned>{1, 1, 1}));   // 2 chunks, 3 clients
    EXPECT_TRUE(greedy_optimum(8, 1, {}).empty());
    // A curve that returns NaN never wins a chunk over a finite gain.
    std::vector<std::function<double(unsigned)>> broken{[](unsigned) { return nan_value; },
                                                        [](unsigned p) { return modelled_speedup(0.1, p); }};
    EXPECT_EQ(greedy_optimum(8, 1, broken), (std::vector<unsigned>{1, 7}));
}

TEST(CoordGreedyOptimum, MatchesExhaustiveSearchOnConcaveCurves) {
    std::mt19937_64 rng(11);
    for (int run = 0; run < 300; ++run) {
        const unsigned chunk = 1 + static_cast<unsigned>(rng() % 2);
        const unsigned cores = 6 + static_cast<unsigned>(rng() % 20);  // at least 3 chunks
        const unsigned chunks = cores / chunk;
        std::vector<double> slopes(3);
        for (double& c : slopes) c = 0.01 + 6 * unit(rng);
        // Every split of the chunks into three parts of at least one.
        double best = -inf_value;
        for (unsigned a = 1; a + 2 <= chunks; ++a)
            for (unsigned b = 1; a + b + 1 <= chunks; ++b)
                best = std::max(best, total_speedup(slopes, {a * chunk, b * chunk, (chunks - a - b) * chunk}));
        const auto greedy = greedy_optimum(cores, chunk, log_curves(slopes));
        EXPECT_EQ(sum_of(greedy), chunks * chunk);
        EXPECT_NEAR(total_speedup(slopes, greedy), best, 1e-9) << "run " << run;
    }
}

TEST(CoordGreedyOptimum, ProportionalSplitIsNearTheOptimumOnLogCurves) {
    // Slopes log-uniform over [0.01, 30] (a client at the least gain on 64 threads has
    // 0.012; one at the efficiency cap 30.3), 1–8 clients, 1–64 cores, chunks 1, 2, 4; the
    // sum of modelled speedups of the proportional split over the greedy optimum's.
    // Measured over these seeds (3401 cases with no oversubscription):
    // - no proportional share below one chunk (880 cases): worst 0.99906;
    // - all cases: worst 0.9514, mean 0.99917, optimal in 78%. The loss comes from the
    //   one-chunk floor: a client whose share is below a chunk gets a whole one, taken from
    //   a donor, and the rest is not re-shared in proportion (run 1664: 8 cores, slopes
    //   8.67 and 16.05 with three tiny ones get {1, 4} where the optimum is {2, 3});
    // - SCAF's donor rule on the same cases: worst 0.8412, mean 0.99662.
    std::mt19937_64 rng(2024);
    const unsigned chunk_sizes[] = {1, 2, 4};
    double worst = 1, worst_code = 1, sum = 0, sum_code = 0;
    int compared = 0, unconstrained = 0;
    for (int run = 0; run < 4000; ++run) {
        const std::size_t clients = 1 + rng() % 8;
        const unsigned cores = 1 + static_cast<unsigned>(rng() % 64);
        const unsigned chunk = chunk_sizes[rng() % 3];
        std::vector<double> slopes(clients);
        for (double& c : slopes) c = 0.01 * std::exp(unit(rng) * std::log(3000.0));
        const unsigned chunks = cores / chunk;
        if (clients > chunks) continue;
        const auto shares = proportional_shares(slopes);
        const auto best = greedy_optimum(cores, chunk, log_curves(slopes));
        const double optimum = total_speedup(slopes, best);
        const double ratio = total_speedup(slopes, partition_by_shares(cores, chunk, shares).threads) / optimum;
        const double ratio_code =
            total_speedup(slopes, partition_by_shares(cores, chunk, shares, donor_rule::most_under_served).threads) /
            optimum;
        EXPECT_LE(ratio, 1 + 1e-12) << "run " << run;  // the greedy optimum is optimal
        EXPECT_LE(ratio_code, 1 + 1e-12) << "run " << run;
        EXPECT_GE(ratio, 0.94) << "run " << run;
        if (std::all_of(shares.begin(), shares.end(), [&](double s) { return s * chunks >= 1; })) {
            EXPECT_GE(ratio, 0.995) << "run " << run;
            ++unconstrained;
        }
        worst = std::min(worst, ratio);
        worst_code = std::min(worst_code, ratio_code);
        sum += ratio;
        sum_code += ratio_code;
        ++compared;
    }
    ASSERT_GT(compared, 3000);
    EXPECT_GT(unconstrained, 500);
    EXPECT_LT(worst, 0.99);  // not vacuous: the floor does cost something
    EXPECT_GE(sum / compared, 0.998);
    // The donor fix pays on this measure too.
    EXPECT_LT(worst_code, worst);
    EXPECT_LT(sum_code, sum);
}

// ---- integer partitions ----

TEST(CoordIntegerPartition, HandCases) {
    const std::vector<double> halves{0.5, 0.5};
    EXPECT_EQ(partition_by_shares(5, 1, halves).threads, (std::vector<unsigned>{3, 2}));  // tie: lower index
    EXPECT_EQ(partition_by_shares(9, 4, halves).threads, (std::vector<unsigned>{4, 4}));  // 1 core unused
    EXPECT_EQ(partition_by_shares(9, 0, halves).threads, (std::vector<unsigned>{5, 4}));  // chunk 0 is 1
    // 3.6, 0.2, 0.2 chunks: floors 3, 0, 0; the leftover to the first empty; the second
    // empty gets one from the only donor.
    const std::vector<double> skewed{0.9, 0.05, 0.05};
    EXPECT_EQ(partition_by_shares(4, 1, skewed).threads, (std::vector<unsigned>{2, 1, 1}));
    EXPECT_EQ(partition_by_shares(8, 2, skewed).threads, (std::vector<unsigned>{4, 2, 2}));
    const auto none = partition_by_shares(8, 1, {});
    EXPECT_TRUE(none.threads.empty());
    EXPECT_FALSE(none.oversubscribed);
}

TEST(CoordIntegerPartition, SharesAreNormalisedAndBadOnesCountZero) {
    // NaN and −1 count as 0: exact 4, 0, 0, 4 of 8. Two empties, no leftover: the first
    // donation ties (both d = 0) and comes from the lower index, which is then under-served
    // (d = 1), so the second comes from the other.
    const std::vector<double> shares{2, nan_value, -1, 2};
    EXPECT_EQ(partition_by_shares(8, 1, shares).threads, (std::vector<unsigned>{3, 1, 1, 3}));
    const std::vector<double> zeros{0, 0, 0};
    EXPECT_EQ(partition_by_shares(7, 1, zeros).threads, (std::vector<unsigned>{3, 2, 2}));
    EXPECT_EQ(partition_by_shares(7, 1, zeros).threads, equipartition(7, 1, 3).threads);
    const std::vector<double> unnormalised{30, 10};
    EXPECT_EQ(partition_by_shares(8, 1, unnormalised).threads, (std::vector<unsigned>{6, 2}));
}

TEST(CoordIntegerPartition, MoreClientsThanChunksIsOversubscribed) {
    const std::vector<double> three{0.5, 0.3, 0.2};
    const auto two_cores = partition_by_shares(2, 1, three);
    EXPECT_TRUE(two_cores.oversubscribed);
    EXPECT_EQ(two_cores.threads, (std::vector<unsigned>{1, 1, 1}));
    const auto two_chunks = partition_by_shares(5, 2, three);  // 2 chunks of 2
    EXPECT_TRUE(two_chunks.oversubscribed);
    EXPECT_EQ(two_chunks.threads, (std::vector<unsigned>{1, 1, 1}));
    const auto no_cores = partition_by_shares(0, 1, three);
    EXPECT_TRUE(no_cores.oversubscribed);
    EXPECT_EQ(no_cores.threads, (std::vector<unsigned>{1, 1, 1}));
    const auto exactly = partition_by_shares(3, 1, three);
    EXPECT_FALSE(exactly.oversubscribed);
    EXPECT_EQ(exactly.threads, (std::vector<unsigned>{1, 1, 1}));
}

TEST(CoordIntegerPartition, EquipartitionByHand) {
    EXPECT_EQ(equipartition(16, 1, 3).threads, (std::vector<unsigned>{6, 5, 5}));
    EXPECT_EQ(equipartition(16, 2, 3).threads, (std::vector<unsigned>{6, 6, 4}));
    EXPECT_EQ(equipartition(17, 4, 2).threads, (std::vector<unsigned>{8, 8}));
    EXPECT_EQ(equipartition(16, 0, 3).threads, equipartition(16, 1, 3).threads);
    EXPECT_FALSE(equipartition(16, 1, 3).oversubscribed);
    const auto crowded = equipartition(2, 1, 3);
    EXPECT_TRUE(crowded.oversubscribed);
    EXPECT_EQ(crowded.threads, (std::vector<unsigned>{1, 1, 1}));
    EXPECT_TRUE(equipartition(0, 1, 1).oversubscribed);
    EXPECT_TRUE(equipartition(8, 1, 0).threads.empty());
}

TEST(CoordIntegerPartition, PropertiesOverRandomShares) {
    // For each case the test works out the exact shares t_i (in chunks), the floors, the
    // leftover L = chunks − Σ floor and the empty floors E; donations = max(0, E − L) are
    // needed, and each can leave at most one partition (its donor) more than a chunk from
    // its share: every other one ends within one chunk (exactly one for a share of 0).
    std::mt19937_64 rng(1);
    const unsigned chunk_sizes[] = {1, 2, 4};
    int oversubscribed = 0, with_donations = 0;
    for (int run = 0; run < 20000; ++run) {
        const std::size_t clients = 1 + rng() % 8;
        const unsigned cores = 1 + static_cast<unsigned>(rng() % 64);
        const unsigned chunk = chunk_sizes[rng() % 3];
        // Skewed shares, some 0, so small shares and empty floors are common.
        std::vector<double> shares(clients);
        for (double& s : shares) s = rng() % 8 == 0 ? 0.0 : std::pow(unit(rng), 3);
        const unsigned chunks = cores / chunk;
        const double total = std::accumulate(shares.begin(), shares.end(), 0.0);

        for (const donor_rule rule : {donor_rule::most_over_served, donor_rule::most_under_served}) {
            const auto result = partition_by_shares(cores, chunk, shares, rule);
            ASSERT_EQ(result.threads.size(), clients);
            ASSERT_EQ(result.oversubscribed, clients > chunks) << "run " << run;
            if (result.oversubscribed) {
                EXPECT_EQ(result.threads, std::vector<unsigned>(clients, 1u));
                ++oversubscribed;
                continue;
            }
            EXPECT_LE(sum_of(result.threads), cores);
            EXPECT_LT(cores - sum_of(result.threads), chunk) << "run " << run;  // only the remainder unused
            unsigned floors = 0, empty = 0;
            std::vector<double> exact(clients);
            for (std::size_t i = 0; i < clients; ++i) {
                exact[i] = total > 0 ? shares[i] / total * chunks : static_cast<double>(chunks) / static_cast<double>(clients);
                floors += static_cast<unsigned>(exact[i]);
                empty += static_cast<unsigned>(exact[i]) == 0 ? 1 : 0;
            }
            const unsigned donations = empty > chunks - floors ? empty - (chunks - floors) : 0;
            unsigned far_off = 0;
            for (std::size_t i = 0; i < clients; ++i) {
                const unsigned p = result.threads[i];
                EXPECT_EQ(p % chunk, 0u);
                EXPECT_GE(p, chunk);
                far_off += std::abs(p / chunk - exact[i]) > 1 + 1e-9 ? 1 : 0;
            }
            EXPECT_LE(far_off, donations) << "run " << run;
            with_donations += donations > 0 ? 1 : 0;
        }

        const auto equal = equipartition(cores, chunk, clients);
        ASSERT_EQ(equal.oversubscribed, clients > chunks);
        if (!equal.oversubscribed) {
            EXPECT_EQ(sum_of(equal.threads), chunks * chunk);
            EXPECT_TRUE(std::is_sorted(equal.threads.rbegin(), equal.threads.rend()));
            EXPECT_LE(equal.threads.front() - equal.threads.back(), chunk);
        }
    }
    // The sweep reaches both special paths often.
    EXPECT_GT(oversubscribed, 1000);
    EXPECT_GT(with_donations, 1000);
}

TEST(CoordIntegerPartition, OverServedDonorKeepsTheRatios) {
    // 26:22:1:1 over 5 cores: exact 2.6, 2.2, 0.1, 0.1. Floors 2, 2, 0, 0; the leftover goes
    // to the first empty; the last empty needs a donor. The fix takes from the second
    // (d = 0.2, closest to its share): {2, 1, 1, 1}. SCAF's code takes from the first
    // (d = 0.6, already the most under-served): {1, 2, 1, 1}, inverting the two large
    // clients' order. The summed error Σ|p_i/cores − share_i| cannot tell them apart:
    // every donor here is at or below its share, so any donation adds exactly one chunk to
    // it (0.72 both); the largest error and the sum of squares can, and so can the sum of
    // speedups the log model predicts with slopes in these ratios.
    const std::vector<double> shares{26, 22, 1, 1};
    const auto fixed = partition_by_shares(5, 1, shares);
    const auto code = partition_by_shares(5, 1, shares, donor_rule::most_under_served);
    ASSERT_EQ(fixed.threads, (std::vector<unsigned>{2, 1, 1, 1}));
    ASSERT_EQ(code.threads, (std::vector<unsigned>{1, 2, 1, 1}));

    const auto normalised = proportional_shares(shares);
    struct errors { double sum = 0, squares = 0, largest = 0; };
    const auto errors_of = [&](const partition& p) {
        errors e;
        for (std::size_t i = 0; i < shares.size(); ++i) {
            const double error = std::abs(p.threads[i] / 5.0 - normalised[i]);
            e.sum += error;
            e.squares += error * error;
            e.largest = std::max(e.largest, error);
        }
        return e;
    };
    const errors f = errors_of(fixed), c = errors_of(code);
    EXPECT_NEAR(f.sum, 0.72, 1e-12);
    EXPECT_NEAR(c.sum, 0.72, 1e-12);
    EXPECT_NEAR(f.largest, 0.24, 1e-12);  // |1/5 − 22/50|
    EXPECT_NEAR(c.largest, 0.32, 1e-12);  // |1/5 − 26/50|
    EXPECT_LT(f.squares, c.squares);
    EXPECT_GT(total_speedup(normalised, fixed.threads), total_speedup(normalised, code.threads));
}

// ---- efficiency ----

TEST(CoordEfficiencyFilter, AlphaArithmeticIsExact) {
    efficiency_filter filter;  // RC = 4 s
    EXPECT_EQ(filter.value(), 0.5);
    EXPECT_EQ(filter.update(1.0, 4.0), 0.75);   // α = 4/8: 0.5·1 + 0.5·0.5
    EXPECT_EQ(filter.update(0.25, 12.0), 0.375);  // α = 12/16: 0.75·0.25 + 0.25·0.75
    const double alpha = 1.0 / 5.0;             // Δt = 1 s
    EXPECT_DOUBLE_EQ(filter.update(0.9, 1.0), alpha * 0.9 + (1 - alpha) * 0.375);

    efficiency_filter converging;  // Δt = RC halves the distance each time
    for (const double expected : {0.75, 0.875, 0.9375}) EXPECT_EQ(converging.update(1.0, 4.0), expected);

    efficiency_filter unsmoothed(0.0);  // α = 1
    EXPECT_EQ(unsmoothed.update(0.9, 1.0), 0.9);
    EXPECT_EQ(efficiency_filter(-3.0).time_constant_seconds(), 0.0);
    EXPECT_EQ(efficiency_filter(nan_value).time_constant_seconds(), 0.0);
}

TEST(CoordEfficiencyFilter, IgnoresEmptyIntervalsAndNonFiniteSamplesAndResets) {
    efficiency_filter filter;
    filter.update(1.0, 4.0);
    EXPECT_EQ(filter.update(0.1, 0.0), 0.75);
    EXPECT_EQ(filter.update(0.1, -1.0), 0.75);
    EXPECT_EQ(filter.update(0.1, nan_value), 0.75);
    EXPECT_EQ(filter.update(0.1, inf_value), 0.75);
    EXPECT_EQ(filter.update(nan_value, 1.0), 0.75);
    EXPECT_EQ(filter.update(inf_value, 1.0), 0.75);
    EXPECT_EQ(filter.update(-inf_value, 1.0), 0.75);
    EXPECT_EQ(filter.value(), 0.75);
    filter.reset();
    EXPECT_EQ(filter.value(), efficiency_filter::initial_efficiency);
    EXPECT_EQ(filter.value(), 0.5);
    filter.restart(0.25);
    EXPECT_EQ(filter.value(), 0.25);
    filter.restart(nan_value);
    EXPECT_EQ(filter.value(), 0.25);
    EXPECT_EQ(filter.update(1.0, 4.0), 0.625);  // smoothing goes on from the restart
}

TEST(CoordEfficiencyFilter, BlendedEfficiencyByHand) {
    EXPECT_EQ(blended_efficiency(0.75, 3, 1, 4), 0.625);  // (0.75·3 + 1/4·1) / 4
    EXPECT_EQ(blended_efficiency(0.9, 0, 0, 4), 0.9);     // no time: the parallel figure
    EXPECT_EQ(blended_efficiency(0.9, 0, 2, 8), 0.125);   // only serial time: 1/N
    EXPECT_EQ(blended_efficiency(nan_value, 0, 2, 8), 0.125);
    EXPECT_EQ(blended_efficiency(0.9, 2, 0, 8), 0.9);
    EXPECT_EQ(blended_efficiency(0.5, 1, 1, 0), 0.75);   // threads 0 taken as 1
    EXPECT_EQ(blended_efficiency(0.6, -1, 2, 4), 0.25);  // a negative time counts 0
}

// ---- rate limiting ----

TEST(CoordTokenBucket, FiveHertzBurstOneByHand) {
    // 5 tokens a second; times in 1/16 s so every sum is exact.
    token_bucket bucket(5.0);
    EXPECT_TRUE(bucket.take(0.0));      // starts full
    EXPECT_FALSE(bucket.take(0.125));   // 0.625
    EXPECT_FALSE(bucket.take(0.1875));  // 0.9375
    EXPECT_TRUE(bucket.take(0.25));     // 1.25, capped at 1
    EXPECT_FALSE(bucket.take(0.4375));  // 0.9375
    EXPECT_TRUE(bucket.take(0.5));      // 1.25 → 1
    EXPECT_TRUE(bucket.take(2.0));      // a quiet 1.5 s is worth one take, not 7
    EXPECT_FALSE(bucket.take(2.0));     // no time passed
    EXPECT_TRUE(bucket.take(2.25));
    EXPECT_FALSE(bucket.take(1.0));     // back in time: nothing added
    EXPECT_FALSE(bucket.take(2.4375));  // counted from 2.25, not from 1.0
    EXPECT_TRUE(bucket.take(2.5));
    EXPECT_FALSE(bucket.take(nan_value));
    EXPECT_FALSE(bucket.take(2.6875));  // 0.9375 since 2.5: the NaN changed nothing
    EXPECT_TRUE(bucket.take(2.75));

    token_bucket late(5.0);  // any time origin
    EXPECT_TRUE(late.take(100.0));
    EXPECT_FALSE(late.take(100.125));
    EXPECT_TRUE(late.take(100.25));
}

TEST(CoordTokenBucket, ARegularCallerGetsItsPeriodQuantised) {
    // Asked every 1/64 s at 5 Hz: 5/64 a call, so one take per 13 calls (the cap drops the
    // overshoot): calls 0, 13, …, 507 of 0..512 over 8 s: 40 takes, not 41.
    token_bucket bucket(5.0);
    int taken = 0;
    for (int call = 0; call <= 512; ++call) taken += bucket.take(call / 64.0) ? 1 : 0;
    EXPECT_EQ(taken, 40);
}

TEST(CoordTokenBucket, BurstUnlimitedAndZeroRate) {
    token_bucket burst(5.0, 3.0);
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(burst.take(0.0));
    EXPECT_FALSE(burst.take(0.0));
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(burst.take(10.0));  // refilled to 3, not 50
    EXPECT_FALSE(burst.take(10.0));

    for (const double rate : {-1.0, nan_value, inf_value}) {
        token_bucket unlimited(rate);
        EXPECT_TRUE(unlimited.unlimited());
        for (int i = 0; i < 1000; ++i) EXPECT_TRUE(unlimited.take(0.0));
    }

    token_bucket never(0.0);
    EXPECT_FALSE(never.unlimited());
    EXPECT_TRUE(never.take(0.0));  // the initial burst
    EXPECT_FALSE(never.take(0.0));
    EXPECT_FALSE(never.take(1.0));
    EXPECT_FALSE(never.take(1e6));

    token_bucket tiny(5.0, 0.25);  // a burst below 1 is 1
    EXPECT_TRUE(tiny.take(0.0));
    EXPECT_FALSE(tiny.take(0.0));
}

}  // namespace

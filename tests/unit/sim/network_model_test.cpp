// The collective's rounds and latency by hand: P = 1, 2, 2^k and non-powers of two.
#include "sim/network_model.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace aloe::sim {
namespace {

using k = machine_profile::collective_kind;

TEST(NetworkModel, RecursiveDoublingRounds) {
    EXPECT_EQ(collective_rounds(k::recursive_doubling, 1), 0);
    EXPECT_EQ(collective_rounds(k::recursive_doubling, 2), 1);
    EXPECT_EQ(collective_rounds(k::recursive_doubling, 4), 2);
    EXPECT_EQ(collective_rounds(k::recursive_doubling, 1024), 10);
    EXPECT_EQ(collective_rounds(k::recursive_doubling, 65536), 16);
    // Not a power of two: fold into the largest power of two below, then unfold.
    EXPECT_EQ(collective_rounds(k::recursive_doubling, 3), 3);
    EXPECT_EQ(collective_rounds(k::recursive_doubling, 10000), 15);  // 2^13 = 8192 < 10000
}

TEST(NetworkModel, BinomialRounds) {
    EXPECT_EQ(collective_rounds(k::binomial, 1), 0);
    EXPECT_EQ(collective_rounds(k::binomial, 2), 2);
    EXPECT_EQ(collective_rounds(k::binomial, 8), 6);
    EXPECT_EQ(collective_rounds(k::binomial, 9), 8);  // ceil(log2 9) = 4, reduce + broadcast
    EXPECT_EQ(collective_rounds(k::none, 1000), 0);
}

TEST(NetworkModel, LatencyIsRoundsTimesAlphaPlusBetaBytes) {
    machine_profile p;
    p.collective = k::recursive_doubling;
    p.alpha_s = 2e-6;
    p.beta_s_per_byte = 1e-9;
    p.collective_bytes = 1000;
    EXPECT_DOUBLE_EQ(collective_seconds(p, 1), 0);
    EXPECT_DOUBLE_EQ(collective_seconds(p, 16), 4 * (2e-6 + 1e-6));
    EXPECT_DOUBLE_EQ(collective_seconds(p, 17), 6 * (2e-6 + 1e-6));
    p.halo_dims = 3;
    p.halo_bytes = 8000;
    EXPECT_DOUBLE_EQ(halo_seconds(p), 2e-6 + 8e-6);
}

TEST(NetworkModel, GridNeighboursAreSymmetricAndInRange) {
    for (int dims : {1, 2, 3})
        for (std::int64_t nodes : {1, 2, 7, 12, 64, 1000}) {
            for (std::int64_t i = 0; i < nodes; ++i) {
                std::int64_t nb[6];
                const int n = grid_neighbours(i, nodes, dims, nb);
                EXPECT_LE(n, 2 * dims);
                for (int j = 0; j < n; ++j) {
                    ASSERT_GE(nb[j], 0);
                    ASSERT_LT(nb[j], nodes);
                    EXPECT_NE(nb[j], i);
                    std::int64_t back[6];
                    const int m = grid_neighbours(nb[j], nodes, dims, back);
                    EXPECT_TRUE(std::find(back, back + m, i) != back + m) << dims << "D " << nodes << ": " << i << " <-> " << nb[j];
                }
            }
        }
    std::int64_t nb[6];
    EXPECT_EQ(grid_neighbours(0, 64, 3, nb), 3);   // a corner of 4x4x4
    EXPECT_EQ(grid_neighbours(21, 64, 3, nb), 6);  // (1,1,1): inside
}

}  // namespace
}  // namespace aloe::sim

// Phase-start sizing's arithmetic by hand: ranks of known work get whole cores so that the
// slowest finishes as early as whole cores allow, and together when the work divides.
#include "sim/rank_sizing.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace aloe::sim {
namespace {

std::vector<int> sized(std::vector<double> work, int cores) {
    std::vector<int> out(work.size(), 0);
    size_ranks(work, cores, out);
    return out;
}

TEST(RankSizing, WorkThatDividesFinishesTogether) {
    // 4 ranks of work 1, 3, 1, 3 on 16 cores: 8 units of work, 2 cores per unit.
    const std::vector<double> work{1, 3, 1, 3};
    const std::vector<int> cores = sized(work, 16);
    EXPECT_EQ(cores, (std::vector<int>{2, 6, 2, 6}));
    for (std::size_t r = 0; r < work.size(); ++r) EXPECT_DOUBLE_EQ(work[r] / cores[r], 0.5) << r;
    EXPECT_DOUBLE_EQ(sized_phase(work, cores), 0.5);  // = total work 8 / 16 cores: the ideal
    // 2 ranks of 1 and 3 on 4 cores: 1 and 3, both 1 unit of time.
    EXPECT_EQ(sized(std::vector<double>{1, 3}, 4), (std::vector<int>{1, 3}));
}

TEST(RankSizing, WholeCoresLeaveTheSmallestMaximum) {
    // 1, 2, 1, 2 on 16: exact shares 2.67 and 5.33. Greedy by hand: every rank 1 (quotients
    // 1, 2, 1, 2), then ranks 1, 3 (1, 1, 1, 1), then 0, 1, 2, 3 in order (.5, .67, .5, .67),
    // ranks 1, 3 (.5 each), then 0, 1, 2, 3 again: 3, 5, 3, 5, the slowest at 2/5.
    const std::vector<double> work{1, 2, 1, 2};
    const std::vector<int> cores = sized(work, 16);
    EXPECT_EQ(cores, (std::vector<int>{3, 5, 3, 5}));
    EXPECT_DOUBLE_EQ(sized_phase(work, cores), 0.4);
    // The other splits that keep a rank at 1 core or more are no better: 2, 6, 2, 6 gives 0.5,
    // 4, 4, 4, 4 gives 0.5.
    EXPECT_DOUBLE_EQ(sized_phase(work, std::vector<int>{2, 6, 2, 6}), 0.5);
    EXPECT_DOUBLE_EQ(sized_phase(work, std::vector<int>{4, 4, 4, 4}), 0.5);
}

TEST(RankSizing, EveryRankKeepsACoreAndTiesGoToTheLowerRank) {
    EXPECT_EQ(sized(std::vector<double>{1, 1}, 2), (std::vector<int>{1, 1}));      // one core each: nothing to move
    EXPECT_EQ(sized(std::vector<double>{0, 5}, 4), (std::vector<int>{1, 3}));      // no work still keeps its core
    EXPECT_EQ(sized(std::vector<double>{1, 1, 1}, 4), (std::vector<int>{2, 1, 1}));
    EXPECT_EQ(sized(std::vector<double>{2, 2, 2, 2}, 16), (std::vector<int>{4, 4, 4, 4}));  // balanced: the plain split
}

}  // namespace
}  // namespace aloe::sim

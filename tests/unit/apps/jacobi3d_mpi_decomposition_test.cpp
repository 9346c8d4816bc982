// apps/jacobi3d-mpi's cut of the global grid (block_decomposition.hpp): every point owned by
// exactly one rank, interior points split evenly or with a heavier part, and the flags'
// errors naming the flag. No MPI: the cut is plain arithmetic every rank repeats.
#include "jacobi3d-mpi/block_decomposition.hpp"

#include "common/args.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {
using namespace jacobi3d_mpi;

std::string message_of(const auto& call) {
    try {
        call();
    } catch (const aloe_apps::usage_error& e) {
        return e.what();
    }
    return "accepted";
}

TEST(Jacobi3dMpiDecomposition, SplitsInteriorPointsEvenly) {
    // 16 points, 14 interior, over 3 parts: 5, 5, 4; the ends also hold the boundary.
    EXPECT_EQ(split_axis(16, 3, "--nz"), (std::vector<std::int64_t>{0, 6, 11, 16}));
    EXPECT_EQ(split_axis(5, 1, "--nz"), (std::vector<std::int64_t>{0, 5}));
    EXPECT_EQ(split_axis(4, 2, "--nz"), (std::vector<std::int64_t>{0, 2, 4}));  // one interior point each
}

TEST(Jacobi3dMpiDecomposition, HeavyPartGetsItsFactor) {
    // 18 interior points, 3 parts, part 1 twice the others: 4.5 → 9, the rest 5 and 4.
    EXPECT_EQ(split_axis(20, 3, "--nz", 1, 2.0), (std::vector<std::int64_t>{0, 6, 15, 20}));
    // A factor too large still leaves one point to every other part.
    EXPECT_EQ(split_axis(6, 3, "--nz", 0, 100.0), (std::vector<std::int64_t>{0, 3, 4, 6}));
    // One part: the factor has nothing to weigh against.
    EXPECT_EQ(split_axis(6, 1, "--nz", 0, 3.0), (std::vector<std::int64_t>{0, 6}));
}

TEST(Jacobi3dMpiDecomposition, EveryPointHasOneOwner) {
    const extent3 g{9, 7, 11};
    for (const process_grid pg : {process_grid{1, 1, 4}, process_grid{2, 2, 2}, process_grid{3, 1, 2}, process_grid{1, 5, 1}}) {
        const decomposition d(g, pg, pg.size() - 1, 1.5);
        std::vector<int> owners(static_cast<std::size_t>(g.volume()), 0);
        for (int r = 0; r < d.ranks(); ++r) {
            const block b = d.of(r);
            EXPECT_EQ(d.rank_at(b.coords[0], b.coords[1], b.coords[2]), r);
            for (std::int64_t k = 0; k < b.size.z; ++k)
                for (std::int64_t j = 0; j < b.size.y; ++j)
                    for (std::int64_t i = 0; i < b.size.x; ++i)
                        ++owners[static_cast<std::size_t>(((b.offset.z + k) * g.y + b.offset.y + j) * g.x + b.offset.x + i)];
        }
        for (const int n : owners) ASSERT_EQ(n, 1);
        EXPECT_EQ(d.rank_at(-1, 0, 0), -1);
        EXPECT_EQ(d.rank_at(0, 0, pg.pz), -1);
    }
}

TEST(Jacobi3dMpiDecomposition, ProcessGrids) {
    EXPECT_EQ(grid_for("z", 6, {3, 2, 1}).pz, 6);
    const process_grid g = grid_for("3d", 12, {3, 2, 2});  // MPI_Dims_create's order: largest first
    EXPECT_EQ(g.px, 2);
    EXPECT_EQ(g.py, 2);
    EXPECT_EQ(g.pz, 3);
    const process_grid e = grid_for("2x1x3", 6, {3, 2, 1});
    EXPECT_EQ(e.px, 2);
    EXPECT_EQ(e.pz, 3);
    EXPECT_NE(message_of([] { grid_for("2x2x2", 4, {2, 2, 1}); }).find("--decomp 2x2x2: a process grid of 8 ranks"),
              std::string::npos);
    for (const char* bad : {"cube", "2x2", "2x0x1", "2x2x2x2", "x1x1", ""})
        EXPECT_NE(message_of([&] { parse_process_grid(bad); }).find("--decomp"), std::string::npos) << bad;
}

TEST(Jacobi3dMpiDecomposition, ErrorsNameTheFlag) {
    EXPECT_NE(message_of([] { split_axis(4, 3, "--nz"); }).find("--nz 4: 3 ranks along this axis but only 2"),
              std::string::npos);
    EXPECT_NE(message_of([] { decomposition({8, 8, 8}, {1, 1, 2}, 2, 1.5); }).find("--heavy-rank 2: the job has only 2"),
              std::string::npos);
    EXPECT_EQ(parse_heavy_rank("none").rank, -1);
    EXPECT_EQ(parse_heavy_rank("3").rank, 3);
    EXPECT_DOUBLE_EQ(parse_heavy_rank("3").factor, 1.5);
    EXPECT_DOUBLE_EQ(parse_heavy_rank("1:2.5").factor, 2.5);
    for (const char* bad : {"x", "-1", "1:", "1:0", "1:101", "1:abc", "1:2:3"})
        EXPECT_NE(message_of([&] { parse_heavy_rank(bad); }).find("--heavy-rank"), std::string::npos) << bad;
}

TEST(Jacobi3dMpiDecomposition, RankLists) {
    EXPECT_EQ(parse_rank_list("--noise-ranks", "all", 3), (std::vector<bool>{true, true, true}));
    EXPECT_EQ(parse_rank_list("--noise-ranks", "0,2-3", 5), (std::vector<bool>{true, false, true, true, false}));
    for (const char* bad : {"", "5", "1-", "2-1", "a", "0,,1"})
        EXPECT_NE(message_of([&] { parse_rank_list("--noise-ranks", bad, 4); }).find("--noise-ranks"), std::string::npos) << bad;
}

}  // namespace

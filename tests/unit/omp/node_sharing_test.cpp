// When `aloe run` makes libgomp's waiting passive: ranks of one node, unbound, with more
// threads among them than CPUs; and the node's rank count from each launcher's variables.
#include "omp/node_sharing.hpp"
#include "runtime/local_ranks.hpp"

#include <gtest/gtest.h>

#include <map>

namespace {

using aloe::omp::node_share;
using aloe::omp::ranks_share_cpus_unbound;

int ranks_with(const std::map<std::string, std::string>& vars) {
    return aloe::runtime::local_ranks_from([&](std::string_view name) -> std::optional<std::string> {
        const auto it = vars.find(std::string(name));
        if (it == vars.end()) return std::nullopt;
        return it->second;
    });
}

TEST(OmpNodeSharing, UnboundRanksWithMoreThreadsThanCpusShareThem) {
    EXPECT_TRUE(ranks_share_cpus_unbound({2, 2, 2, 2}));    // BT-MZ's 2 × 2 on 2 CPUs, --bind-to none
    EXPECT_FALSE(ranks_share_cpus_unbound({2, 1, 2, 2}));   // one CPU each: nothing shared
    EXPECT_FALSE(ranks_share_cpus_unbound({2, 2, 1, 2}));   // bound to a CPU each: libgomp sees it
    EXPECT_FALSE(ranks_share_cpus_unbound({2, 2, 2, 4}));   // bound to half the node each
    EXPECT_FALSE(ranks_share_cpus_unbound({1, 8, 2, 2}));   // one rank: libgomp counts its own team
    EXPECT_TRUE(ranks_share_cpus_unbound({16, 8, 64, 64}));
    EXPECT_FALSE(ranks_share_cpus_unbound({16, 4, 64, 64}));  // exactly one thread per CPU
    EXPECT_FALSE(ranks_share_cpus_unbound({16, 4, 64, 0}));  // unknown node: leave it alone
}

TEST(OmpNodeSharing, TheNodesRanksComeFromTheLauncher) {
    EXPECT_EQ(ranks_with({}), 1);
    EXPECT_EQ(ranks_with({{"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}}), 4);
    EXPECT_EQ(ranks_with({{"MPI_LOCALNRANKS", "3"}}), 3);
    EXPECT_EQ(ranks_with({{"SLURM_NTASKS_PER_NODE", "8(x2)"}}), 8);
    EXPECT_EQ(ranks_with({{"SLURM_NTASKS_PER_NODE", "two"}, {"MPI_LOCALNRANKS", "2"}}), 2);
    EXPECT_EQ(ranks_with({{"OMPI_COMM_WORLD_LOCAL_SIZE", "0"}}), 1);
    EXPECT_EQ(ranks_with({{"OMPI_COMM_WORLD_LOCAL_SIZE", "4x"}}), 1);
}

}  // namespace

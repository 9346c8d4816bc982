// coord/affinity_plan: where the daemon confines non-malleable clients, on a recorded
// topology (2 packages × 4 cores × 2 hardware threads, tests/data/topology), and the
// confinement itself applied to a real child process.
#include "coord/affinity_plan.hpp"
#include "runtime/topology.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

using namespace aloe::coord;

std::string xml(const char* name) { return std::string(ALOE_TEST_DATA_DIR) + "/topology/" + name; }

TEST(CoordAffinityPlan, RunsFollowTheCoresInTopologyOrder) {
    const aloe::runtime::topology t(xml("2pkg-4core-2pu.xml"));
    const core_list cores = cores_of(t);
    ASSERT_EQ(cores.size(), 8u);
    EXPECT_EQ(cores[0], (std::vector<int>{0, 1}));
    // Allocations in multiples of the 2 threads per core (--chunk 2): whole cores each.
    const auto runs = plan_confinement(cores, {4, 6, 2});
    ASSERT_EQ(runs.size(), 3u);
    EXPECT_EQ(runs[0], (std::vector<int>{0, 1, 2, 3}));
    EXPECT_EQ(runs[1], (std::vector<int>{4, 5, 6, 7, 8, 9}));  // across the package boundary: cores 2, 3, 4
    EXPECT_EQ(runs[2], (std::vector<int>{10, 11}));
    // Limited to 3 cores (the daemon's --cores).
    EXPECT_EQ(cores_of(t, 3).size(), 3u);
}

TEST(CoordAffinityPlan, WhenCpusRunOutTheRestShareTheLastCoreNeverNothing) {
    const core_list cores{{0, 1}, {2, 3}};
    const auto runs = plan_confinement(cores, {3, 2, 0});
    ASSERT_EQ(runs.size(), 3u);
    EXPECT_EQ(runs[0], (std::vector<int>{0, 1, 2}));
    EXPECT_EQ(runs[1], (std::vector<int>{3}));        // what is left
    EXPECT_EQ(runs[2], (std::vector<int>{2, 3}));     // nothing left: the last core, shared
    EXPECT_TRUE(plan_confinement({}, {2}).front().empty());
}

TEST(CoordAffinityPlan, ConfinesEveryThreadOfARealProcess) {
    int ready[2];
    ASSERT_EQ(::pipe(ready), 0);
    const pid_t child = ::fork();
    if (child == 0) {
        (void)!::write(ready[1], "r", 1);
        ::pause();
        ::_exit(0);
    }
    char c = 0;
    ASSERT_EQ(::read(ready[0], &c, 1), 1);
    cpu_set_t mine;
    ASSERT_EQ(::sched_getaffinity(0, sizeof mine, &mine), 0);
    int first = -1;
    for (int i = 0; i < CPU_SETSIZE && first < 0; ++i)
        if (CPU_ISSET(i, &mine)) first = i;
    EXPECT_EQ(confine_process(child, {first}), "");
    cpu_set_t theirs;
    ASSERT_EQ(::sched_getaffinity(child, sizeof theirs, &theirs), 0);
    EXPECT_EQ(CPU_COUNT(&theirs), 1);
    EXPECT_TRUE(CPU_ISSET(first, &theirs));
    ::kill(child, SIGKILL);
    int st = 0;
    ::waitpid(child, &st, 0);
    // Gone, or never there: said, not crashed.
    EXPECT_NE(confine_process(child, {first}), "");
    EXPECT_NE(confine_process(1234, {0}, "/nonexistent"), "");
    EXPECT_EQ(confine_process(::getpid(), {}), "no CPUs to confine to");
    for (const int fd : ready) ::close(fd);
}

}  // namespace

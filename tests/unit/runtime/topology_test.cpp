// Runtime.Topology: counts and worker placement on synthetic hwloc XML machines from
// tests/data/topology/, the fallback when hwloc fails, and the live machine.
#include "runtime/topology.hpp"

#include "runtime/config.hpp"
#include "unit/runtime/report_capture.hpp"

#include <gtest/gtest.h>

#include <sched.h>

#include <algorithm>
#include <thread>

namespace aloe::runtime {
namespace {

using testing::report_capture;

std::string xml(std::string_view name) {
    return std::string(ALOE_TEST_DATA_DIR) + "/topology/" + std::string(name);
}

std::vector<int> placements(const topology& t, int team, proc_bind_kind bind) {
    std::vector<int> cores;
    for (int w = 0; w < team; ++w) cores.push_back(t.core_for_worker(w, team, bind));
    return cores;
}

TEST(RuntimeTopology, TwoPackagesOfFourCoresWithTwoThreadsEach) {
    report_capture capture;
    const topology t(xml("2pkg-4core-2pu.xml"));
    EXPECT_TRUE(t.from_hwloc());
    EXPECT_EQ(t.cores(), 8);
    EXPECT_EQ(t.processing_units(), 16);
    EXPECT_EQ(t.packages(), 2);
    EXPECT_EQ(t.numa_nodes(), 1);
    EXPECT_EQ(t.cpus_of_core(0), (std::vector<int>{0, 1}));
    EXPECT_EQ(t.cpus_of_core(7), (std::vector<int>{14, 15}));
    EXPECT_TRUE(t.cpus_of_core(8).empty());
    EXPECT_TRUE(t.cpus_of_core(-1).empty());
    const std::string d = t.describe();
    EXPECT_NE(d.find("2 packages, 1 NUMA node, 8 cores, 16 hardware threads"), std::string::npos) << d;
    EXPECT_NE(d.find("XML file"), std::string::npos) << d;
    EXPECT_TRUE(capture.lines().empty());
}

TEST(RuntimeTopology, NumaNodesAreCounted) {
    const topology t(xml("2pkg-2numa-3core.xml"));
    EXPECT_EQ(t.cores(), 6);
    EXPECT_EQ(t.processing_units(), 6);
    EXPECT_EQ(t.packages(), 2);
    EXPECT_EQ(t.numa_nodes(), 2);
}

TEST(RuntimeTopology, MachineWithoutCoresCountsEachThreadAsACore) {
    const topology t(xml("1pkg-3pu-nocores.xml"));
    EXPECT_TRUE(t.from_hwloc());
    EXPECT_EQ(t.cores(), 3);
    EXPECT_EQ(t.processing_units(), 3);
    EXPECT_EQ(t.cpus_of_core(2), (std::vector<int>{2}));
    EXPECT_NE(t.describe().find("no cores reported"), std::string::npos);
}

TEST(RuntimeTopology, OnlyTheAllowedCpusetCounts) {
    // Four cores, of which the process may use PUs 0 and 2 (as under taskset or a cgroup).
    const topology t(xml("1pkg-4core-2allowed.xml"));
    EXPECT_EQ(t.cores(), 2);
    EXPECT_EQ(t.processing_units(), 2);
    EXPECT_EQ(t.cpus_of_core(0), (std::vector<int>{0}));
    EXPECT_EQ(t.cpus_of_core(1), (std::vector<int>{2}));
}

TEST(RuntimeTopology, CloseBindingPutsWorkerIOnCoreIModuloCores) {
    const topology t(xml("2pkg-4core-2pu.xml"));
    EXPECT_EQ(placements(t, 4, proc_bind_kind::close), (std::vector<int>{0, 1, 2, 3}));
    EXPECT_EQ(placements(t, 8, proc_bind_kind::close), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
    EXPECT_EQ(placements(t, 10, proc_bind_kind::close),
              (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 0, 1}));
    EXPECT_EQ(placements(t, 1, proc_bind_kind::close), (std::vector<int>{0}));
}

TEST(RuntimeTopology, SpreadBindingSpacesWorkersEvenly) {
    const topology t(xml("2pkg-4core-2pu.xml"));
    // Two workers: one per package.
    EXPECT_EQ(placements(t, 2, proc_bind_kind::spread), (std::vector<int>{0, 4}));
    EXPECT_EQ(placements(t, 4, proc_bind_kind::spread), (std::vector<int>{0, 2, 4, 6}));
    EXPECT_EQ(placements(t, 3, proc_bind_kind::spread), (std::vector<int>{0, 2, 5}));
    EXPECT_EQ(placements(t, 8, proc_bind_kind::spread), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
    // More workers than cores: consecutive workers share a core, every core used.
    EXPECT_EQ(placements(t, 16, proc_bind_kind::spread),
              (std::vector<int>{0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7}));
    const topology three(xml("1pkg-3pu-nocores.xml"));
    EXPECT_EQ(placements(three, 5, proc_bind_kind::spread), (std::vector<int>{0, 0, 1, 1, 2}));
}

TEST(RuntimeTopology, NoBindingAndBadWorkersGiveMinusOne) {
    const topology t(xml("2pkg-4core-2pu.xml"));
    EXPECT_EQ(placements(t, 4, proc_bind_kind::none), (std::vector<int>{-1, -1, -1, -1}));
    EXPECT_EQ(t.core_for_worker(4, 4, proc_bind_kind::close), -1);
    EXPECT_EQ(t.core_for_worker(-1, 4, proc_bind_kind::spread), -1);
    EXPECT_EQ(t.core_for_worker(0, 0, proc_bind_kind::close), -1);
}

TEST(RuntimeTopology, UnreadableXmlFallsBackToOnlineCpusAndReportsOnce) {
    report_capture capture;
    const std::string missing = xml("no-such-file.xml");
    const topology t(missing);
    const int online = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    EXPECT_FALSE(t.from_hwloc());
    EXPECT_EQ(t.cores(), online);
    EXPECT_EQ(t.processing_units(), online);
    EXPECT_EQ(t.packages(), 1);
    EXPECT_EQ(t.numa_nodes(), 1);
    EXPECT_NE(t.describe().find("fallback"), std::string::npos);
    const topology again(missing);  // the same cause is not reported twice
    const std::vector<std::string> lines = capture.containing("W201");
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_NE(lines[0].find("[topology]"), std::string::npos) << lines[0];
    EXPECT_NE(lines[0].find("no-such-file.xml"), std::string::npos) << lines[0];
    EXPECT_NE(lines[0].find("; using " + std::to_string(online)), std::string::npos) << lines[0];
    // Placement still works on the fallback; binding does not.
    EXPECT_EQ(t.core_for_worker(0, 1, proc_bind_kind::close), 0);
    EXPECT_FALSE(t.bind_current_thread(0));
    EXPECT_EQ(capture.containing("W204").size(), 1u);
}

TEST(RuntimeTopology, LiveMachineHasCores) {
    const topology& m = topology::machine();
    EXPECT_GE(m.cores(), 1);
    EXPECT_GE(m.processing_units(), m.cores());
    EXPECT_GE(m.packages(), 1);
    EXPECT_GE(m.numa_nodes(), 1);
    EXPECT_FALSE(m.cpus_of_core(0).empty());
    EXPECT_FALSE(m.describe().empty());
    EXPECT_EQ(&m, &topology::machine());
}

TEST(RuntimeTopology, MachineIsOneObjectAcrossThreads) {
    std::vector<const topology*> seen(4, nullptr);
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < seen.size(); ++i) {
        threads.emplace_back([&seen, i] { seen[i] = &topology::machine(); });
    }
    for (std::thread& t : threads) t.join();
    for (const topology* p : seen) EXPECT_EQ(p, &topology::machine());
}

TEST(RuntimeTopology, BindingPinsTheThreadToTheCoresCpus) {
    const topology& m = topology::machine();
    if (!m.from_hwloc()) GTEST_SKIP() << "hwloc unavailable: " << m.describe();
    const int core = m.cores() - 1;
    bool bound = false;
    std::vector<int> allowed;
    std::thread worker([&] {
        bound = m.bind_current_thread(core);
        cpu_set_t set;
        CPU_ZERO(&set);
        if (sched_getaffinity(0, sizeof set, &set) == 0) {
            for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
                if (CPU_ISSET(cpu, &set)) allowed.push_back(cpu);
            }
        }
    });
    worker.join();
    EXPECT_TRUE(bound);
    EXPECT_EQ(allowed, m.cpus_of_core(core));
}

TEST(RuntimeTopology, BindingToACoreOutOfRangeFailsAndReportsOnce) {
    report_capture capture;
    const topology& m = topology::machine();
    if (!m.from_hwloc()) GTEST_SKIP() << "hwloc unavailable";
    EXPECT_FALSE(m.bind_current_thread(m.cores()));
    EXPECT_FALSE(m.bind_current_thread(m.cores()));
    EXPECT_FALSE(m.bind_current_thread(-1));
    EXPECT_EQ(capture.containing("W203").size(), 2u);  // one per core number
}

}  // namespace
}  // namespace aloe::runtime

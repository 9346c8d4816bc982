// Runtime.Topology: counts and worker placement on synthetic hwloc XML machines from
// tests/data/topology/, restricted by given limits (affinity mask, cgroup cpuset and CPU
// quota, as cpu_allowance.hpp gathers them for the live process), the fallback when hwloc
// fails, and the live machine.
#include "runtime/topology.hpp"

#include "runtime/config.hpp"
#include "runtime/cpu_allowance.hpp"
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

TEST(RuntimeTopology, TheWholeMachineIsCountedToo) {
    const topology t(xml("1pkg-4core-2allowed.xml"));
    const hardware_counts machine = t.whole_machine();
    EXPECT_EQ(machine.cores, 4);
    EXPECT_EQ(machine.processing_units, 4);
    EXPECT_EQ(machine.packages, 1);
    EXPECT_EQ(t.allowed_cpus(), (std::vector<int>{0, 2}));
    EXPECT_EQ(t.limited_by(), std::vector<std::string>{"allowed cpuset of the XML file"});
    EXPECT_EQ(t.default_threads(), 2);
    EXPECT_EQ(t.default_threads_source(), "allowed cores (allowed cpuset of the XML file)");
    const std::string d = t.describe();
    EXPECT_NE(d.find("machine: 1 package, 1 NUMA node, 4 cores, 4 hardware threads"), std::string::npos) << d;
    EXPECT_NE(d.find("allowed: 2 cores, 2 hardware threads, CPUs 0,2 (limited by allowed cpuset of the XML file)"),
              std::string::npos) << d;
}

cpu_allowance with_mask(std::vector<int> mask) {
    cpu_allowance a;
    a.mask = std::move(mask);
    return a;
}

TEST(RuntimeTopology, AffinityMaskRestrictsCoresAndBinding) {
    // PUs 1, 3 and 9: one hardware thread of cores 0 and 1 (package 0) and of core 4
    // (package 1). Worker i bound close goes to allowed core i, on its allowed thread only.
    const topology t(xml("2pkg-4core-2pu.xml"), with_mask({1, 3, 9}));
    EXPECT_EQ(t.cores(), 3);
    EXPECT_EQ(t.processing_units(), 3);
    EXPECT_EQ(t.packages(), 2);
    EXPECT_EQ(t.whole_machine().cores, 8);
    EXPECT_EQ(t.whole_machine().processing_units, 16);
    EXPECT_EQ(t.allowed_cpus(), (std::vector<int>{1, 3, 9}));
    EXPECT_EQ(t.cpus_of_core(0), std::vector<int>{1});
    EXPECT_EQ(t.cpus_of_core(1), std::vector<int>{3});
    EXPECT_EQ(t.cpus_of_core(2), std::vector<int>{9});
    EXPECT_TRUE(t.cpus_of_core(3).empty());
    EXPECT_EQ(t.limited_by(), std::vector<std::string>{"affinity mask"});
    EXPECT_EQ(t.default_threads(), 3);
    EXPECT_EQ(t.default_threads_source(), "allowed cores (affinity mask)");
    EXPECT_EQ(placements(t, 3, proc_bind_kind::close), (std::vector<int>{0, 1, 2}));
    EXPECT_EQ(placements(t, 5, proc_bind_kind::close), (std::vector<int>{0, 1, 2, 0, 1}));
    for (const proc_bind_kind bind : {proc_bind_kind::close, proc_bind_kind::spread}) {
        for (const int team : {1, 2, 3, 7}) {
            for (const int core : placements(t, team, bind)) {
                for (const int cpu : t.cpus_of_core(core)) EXPECT_TRUE(cpu == 1 || cpu == 3 || cpu == 9) << cpu;
            }
        }
    }
}

TEST(RuntimeTopology, EveryLimitIntersectsAndEachNarrowingOneIsNamed) {
    // XML allows 0 and 2; the cgroup cpuset 0-3 removes nothing; the mask 2-3 removes 0.
    cpu_allowance a = with_mask({2, 3});
    a.cgroup.cpuset = std::vector<int>{0, 1, 2, 3};
    const topology t(xml("1pkg-4core-2allowed.xml"), a);
    EXPECT_EQ(t.allowed_cpus(), std::vector<int>{2});
    EXPECT_EQ(t.cores(), 1);
    EXPECT_EQ(t.limited_by(), (std::vector<std::string>{"allowed cpuset of the XML file", "affinity mask"}));
    cpu_allowance cpuset_only;
    cpuset_only.cgroup.cpuset = std::vector<int>{8, 9, 10, 11, 12, 13, 14, 15};
    const topology second_package(xml("2pkg-4core-2pu.xml"), cpuset_only);
    EXPECT_EQ(second_package.cores(), 4);
    EXPECT_EQ(second_package.packages(), 1);
    EXPECT_EQ(second_package.cpus_of_core(0), (std::vector<int>{8, 9}));
    EXPECT_EQ(second_package.default_threads_source(), "allowed cores (cgroup cpuset)");
}

TEST(RuntimeTopology, CgroupQuotaLimitsTheDefaultTeamToItsCeiling) {
    cpu_allowance a;
    a.cgroup.quota = cpu_quota{150000, 100000, "/sys/fs/cgroup/job/cpu.max"};
    const topology t(xml("2pkg-4core-2pu.xml"), a);
    EXPECT_EQ(t.cores(), 8);  // the quota limits time, not which cores
    EXPECT_EQ(t.default_threads(), 2);
    EXPECT_EQ(t.default_threads_source(), "cgroup CPU quota 1.5 CPUs");
    EXPECT_NE(t.describe().find("CPU quota 1.5 CPUs (/sys/fs/cgroup/job/cpu.max)"), std::string::npos) << t.describe();
    a.cgroup.quota = cpu_quota{50000, 100000, "q"};
    EXPECT_EQ(topology(xml("2pkg-4core-2pu.xml"), a).default_threads(), 1);  // never 0
    a.cgroup.quota = cpu_quota{1600000, 100000, "q"};
    const topology loose(xml("2pkg-4core-2pu.xml"), a);
    EXPECT_EQ(loose.default_threads(), 8);  // 16 CPUs of quota, 8 cores
    EXPECT_EQ(loose.default_threads_source(), "hwloc cores");
}

TEST(RuntimeTopology, LimitsThatLeaveNothingFallBackToHwlocsAllowedSet) {
    report_capture capture;
    const topology t(xml("1pkg-4core-2allowed.xml"), with_mask({1, 3}));
    EXPECT_EQ(t.allowed_cpus(), (std::vector<int>{0, 2}));
    EXPECT_EQ(t.limited_by(), std::vector<std::string>{"allowed cpuset of the XML file"});
    const std::vector<std::string> lines = capture.containing("W207");
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_NE(lines[0].find("(affinity mask 1,3) leave none of the CPUs hwloc allows (0,2); using the CPUs hwloc "
                            "allows"),
              std::string::npos) << lines[0];
}

TEST(RuntimeTopology, FallbackCountsOneCorePerAllowedCpu) {
    report_capture capture;
    const topology t(xml("no-such-file-either.xml"), with_mask({1}));
    EXPECT_FALSE(t.from_hwloc());
    EXPECT_EQ(t.cores(), 1);
    EXPECT_EQ(t.cpus_of_core(0), std::vector<int>{1});
    const std::vector<std::string> lines = capture.containing("W201");
    ASSERT_EQ(lines.size(), 1u);
    if (std::thread::hardware_concurrency() > 1) {
        EXPECT_NE(lines[0].find("; using 1 core, one per allowed CPU"), std::string::npos) << lines[0];
        EXPECT_EQ(t.default_threads_source(), "allowed CPUs (affinity mask)");
    }
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

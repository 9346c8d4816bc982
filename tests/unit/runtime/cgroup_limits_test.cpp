// Runtime.CgroupLimits: the cpuset and CPU quota read from recorded cgroup trees
// (tests/data/cgroup/, one root folder each: v2, nested v2, "max", a container's mount,
// v1, hybrid, missing and garbage files), through the same code that reads "/" in
// production. Also the CPU list syntax those files use.
#include "runtime/cgroup_limits.hpp"
#include "runtime/cpu_list.hpp"

#include "unit/runtime/report_capture.hpp"

#include <gtest/gtest.h>

namespace aloe::runtime {
namespace {

using testing::report_capture;

std::string tree(std::string_view name) { return std::string(ALOE_TEST_DATA_DIR) + "/cgroup/" + std::string(name); }

TEST(RuntimeCpuList, ParsesRangesAndSingles) {
    EXPECT_EQ(parse_cpu_list("0-3,8"), (std::vector<int>{0, 1, 2, 3, 8}));
    EXPECT_EQ(parse_cpu_list("5\n"), (std::vector<int>{5}));
    EXPECT_EQ(parse_cpu_list(" 8,0-1,1 "), (std::vector<int>{0, 1, 8}));
    EXPECT_EQ(parse_cpu_list(""), (std::vector<int>{}));
    EXPECT_EQ(parse_cpu_list("\n"), (std::vector<int>{}));
}

TEST(RuntimeCpuList, RejectsWhatIsNotAList) {
    for (std::string_view bad : {"0-3x", "3-1", "-1", "0,", ",0", "0--3", "a", "0 1", "99999999999", "0-65536"})
        EXPECT_FALSE(parse_cpu_list(bad).has_value()) << bad;
}

TEST(RuntimeCpuList, FormatsWithRanges) {
    EXPECT_EQ(format_cpu_list({0, 1, 2, 3, 8}), "0-3,8");
    EXPECT_EQ(format_cpu_list({1}), "1");
    EXPECT_EQ(format_cpu_list({0, 2, 4, 5}), "0,2,4-5");
    EXPECT_EQ(format_cpu_list({}), "");
    EXPECT_EQ(intersect_cpus({0, 1, 2, 3, 8}, {1, 3, 5, 8}), (std::vector<int>{1, 3, 8}));
}

TEST(RuntimeCpuQuota, CeilOfQuotaOverPeriodAndDecimalText) {
    EXPECT_EQ((cpu_quota{150000, 100000, {}}.whole_cpus()), 2);
    EXPECT_EQ((cpu_quota{150000, 100000, {}}.cpus_text()), "1.5");
    EXPECT_EQ((cpu_quota{200000, 100000, {}}.whole_cpus()), 2);
    EXPECT_EQ((cpu_quota{200000, 100000, {}}.cpus_text()), "2");
    EXPECT_EQ((cpu_quota{1000, 100000, {}}.whole_cpus()), 1);  // never 0 threads
    EXPECT_EQ((cpu_quota{1000, 100000, {}}.cpus_text()), "0.01");
    EXPECT_EQ((cpu_quota{200001, 100000, {}}.whole_cpus()), 3);
    EXPECT_DOUBLE_EQ((cpu_quota{250000, 100000, {}}.cpus()), 2.5);
}

TEST(RuntimeCgroupLimits, V2QuotaAndEffectiveCpusetOfTheProcessCgroup) {
    report_capture capture;
    const cgroup_cpu_limits l = read_cgroup_cpu_limits(tree("v2-quota"));
    EXPECT_EQ(l.layout, cgroup_layout::v2);
    ASSERT_TRUE(l.cpuset.has_value());
    EXPECT_EQ(*l.cpuset, (std::vector<int>{0, 1, 2, 3, 8}));
    EXPECT_EQ(l.cpuset_file, "/sys/fs/cgroup/job.slice/step_0/cpuset.cpus.effective");
    ASSERT_TRUE(l.quota.has_value());
    EXPECT_EQ(l.quota->quota_us, 150000);
    EXPECT_EQ(l.quota->period_us, 100000);
    EXPECT_EQ(l.quota->whole_cpus(), 2);
    EXPECT_EQ(l.quota->file, "/sys/fs/cgroup/job.slice/step_0/cpu.max");
    EXPECT_TRUE(capture.lines().empty());
}

TEST(RuntimeCgroupLimits, NestedV2TakesTheTightestQuotaOnThePathToTheRoot) {
    // task_1: 2.5 CPUs; its parent job_7: 100000/50000 = 2 CPUs (another period); batch: max.
    report_capture capture;
    const cgroup_cpu_limits l = read_cgroup_cpu_limits(tree("v2-nested"));
    ASSERT_TRUE(l.quota.has_value());
    EXPECT_EQ(l.quota->file, "/sys/fs/cgroup/batch/job_7/cpu.max");
    EXPECT_EQ(l.quota->cpus_text(), "2");
    EXPECT_EQ(l.quota->whole_cpus(), 2);
    // The leaf has no cpuset file (controller not enabled there): the nearest ancestor's.
    ASSERT_TRUE(l.cpuset.has_value());
    EXPECT_EQ(*l.cpuset, (std::vector<int>{2, 3, 4, 5}));
    EXPECT_EQ(l.cpuset_file, "/sys/fs/cgroup/batch/job_7/cpuset.cpus.effective");
    EXPECT_TRUE(capture.lines().empty());
}

TEST(RuntimeCgroupLimits, MaxEverywhereIsNoQuota) {
    report_capture capture;
    const cgroup_cpu_limits l = read_cgroup_cpu_limits(tree("v2-max"));
    EXPECT_EQ(l.layout, cgroup_layout::v2);
    EXPECT_FALSE(l.quota.has_value());
    ASSERT_TRUE(l.cpuset.has_value());  // from the root cgroup, the only one with the file
    EXPECT_EQ(*l.cpuset, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
    EXPECT_TRUE(capture.lines().empty());
}

TEST(RuntimeCgroupLimits, ContainerMountRootAndEscapedMountPoint) {
    // mountinfo mounts /kubepods/pod1/ctr at "/run/my\040cgroup"; the process is in that group.
    report_capture capture;
    const cgroup_cpu_limits l = read_cgroup_cpu_limits(tree("v2-container"));
    ASSERT_TRUE(l.quota.has_value());
    EXPECT_EQ(l.quota->file, "/run/my cgroup/cpu.max");
    EXPECT_EQ(l.quota->whole_cpus(), 1);
    ASSERT_TRUE(l.cpuset.has_value());
    EXPECT_EQ(*l.cpuset, (std::vector<int>{6, 7}));
    EXPECT_TRUE(capture.lines().empty());
}

TEST(RuntimeCgroupLimits, CgroupOutsideTheMountIsReportedNotGuessed) {
    report_capture capture;
    const cgroup_cpu_limits l = read_cgroup_cpu_limits(tree("v2-outside"));
    EXPECT_FALSE(l.quota.has_value());  // the mounted cpu.max belongs to another group
    EXPECT_FALSE(l.cpuset.has_value());
    set_report_verbosity(all_categories);
    const cgroup_cpu_limits again = read_cgroup_cpu_limits(tree("v2-outside"));
    EXPECT_FALSE(again.quota.has_value());
    const std::vector<std::string> lines = capture.containing("I202");
    ASSERT_EQ(lines.size(), 1u);  // cpuset and cpu: the same cause, reported once
    EXPECT_NE(lines[0].find("/system.slice/other.service is outside the mounted cgroup v2 hierarchy; using no "
                            "cgroup cpuset or CPU quota"),
              std::string::npos) << lines[0];
    EXPECT_NE(lines[0].find("[topology]"), std::string::npos) << lines[0];
}

TEST(RuntimeCgroupLimits, V1QuotaOnAnAncestorAndEffectiveCpus) {
    report_capture capture;
    const cgroup_cpu_limits l = read_cgroup_cpu_limits(tree("v1"));
    EXPECT_EQ(l.layout, cgroup_layout::v1);
    ASSERT_TRUE(l.quota.has_value());
    EXPECT_EQ(l.quota->file, "/sys/fs/cgroup/cpu,cpuacct/slurm/uid_1000/job_42/cpu.cfs_quota_us");
    EXPECT_EQ(l.quota->cpus_text(), "2.5");
    EXPECT_EQ(l.quota->whole_cpus(), 3);
    ASSERT_TRUE(l.cpuset.has_value());
    EXPECT_EQ(*l.cpuset, (std::vector<int>{4, 5, 6, 7}));
    EXPECT_EQ(l.cpuset_file, "/sys/fs/cgroup/cpuset/slurm/uid_1000/job_42/step_0/cpuset.effective_cpus");
    EXPECT_TRUE(capture.lines().empty());
}

TEST(RuntimeCgroupLimits, HybridReadsTheV1ControllersNotTheUnifiedTree) {
    // The unified tree has a decoy cpu.max of 0.5 CPUs; the cpu controller is bound to v1
    // (no quota there), and v1's cpuset has only cpuset.cpus.
    report_capture capture;
    const cgroup_cpu_limits l = read_cgroup_cpu_limits(tree("hybrid"));
    EXPECT_EQ(l.layout, cgroup_layout::hybrid);
    EXPECT_FALSE(l.quota.has_value());
    ASSERT_TRUE(l.cpuset.has_value());
    EXPECT_EQ(*l.cpuset, (std::vector<int>{0, 1}));
    EXPECT_EQ(l.cpuset_file, "/sys/fs/cgroup/cpuset/cpuset.cpus");
    EXPECT_TRUE(capture.lines().empty());
}

TEST(RuntimeCgroupLimits, UnmountedV1ControllerIsReported) {
    report_capture capture;
    set_report_verbosity(all_categories);
    const cgroup_cpu_limits l = read_cgroup_cpu_limits(tree("v1-unmounted"));
    EXPECT_FALSE(l.quota.has_value());
    ASSERT_TRUE(l.cpuset.has_value());
    EXPECT_EQ(*l.cpuset, (std::vector<int>{1, 3}));
    const std::vector<std::string> lines = capture.containing("I202");
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_NE(lines[0].find("the cgroup v1 cpu hierarchy is not mounted; using no cgroup CPU quota"),
              std::string::npos) << lines[0];
}

TEST(RuntimeCgroupLimits, MissingProcFilesGiveNoLimitsAndOneInfoLine) {
    report_capture capture;
    set_report_verbosity(all_categories);
    const cgroup_cpu_limits l = read_cgroup_cpu_limits(tree("missing"));
    EXPECT_EQ(l.layout, cgroup_layout::none);
    EXPECT_FALSE(l.quota.has_value());
    EXPECT_FALSE(l.cpuset.has_value());
    (void)read_cgroup_cpu_limits(tree("missing"));
    const std::vector<std::string> lines = capture.containing("I202");
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_NE(lines[0].find("cannot read /proc/self/cgroup: No such file or directory; using the affinity "
                            "mask alone"),
              std::string::npos) << lines[0];
}

TEST(RuntimeCgroupLimits, InfoLinesCanBeHeldForTheCaller) {
    // The live process's allowance is built inside a static initialiser: it holds them.
    report_capture capture;
    set_report_verbosity(all_categories);
    std::vector<report_message> held;
    (void)read_cgroup_cpu_limits(tree("missing"), &held);
    EXPECT_TRUE(capture.lines().empty());
    ASSERT_EQ(held.size(), 1u);
    EXPECT_EQ(held[0].id, "I202");
    EXPECT_EQ(held[0].level, report_level::info);
}

TEST(RuntimeCgroupLimits, GarbageV2FilesAreWarnedAboutAndIgnored) {
    report_capture capture;
    const cgroup_cpu_limits l = read_cgroup_cpu_limits(tree("garbage-v2"));
    EXPECT_FALSE(l.quota.has_value());
    EXPECT_FALSE(l.cpuset.has_value());
    const std::vector<std::string> lines = capture.containing("W205");
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_NE(capture.containing("/sys/fs/cgroup/job/cpu.max: 'lots 100000' is not").size(), 0u);
    EXPECT_NE(capture.containing("/sys/fs/cgroup/job/cpuset.cpus.effective: '0-3x' is not").size(), 0u);
    for (const std::string& line : lines) {
        EXPECT_EQ(line.rfind("aloe: warning W205 [topology]: cannot use the cgroup file ", 0), 0u) << line;
        EXPECT_NE(line.find("; using no limit from it"), std::string::npos) << line;
    }
}

TEST(RuntimeCgroupLimits, GarbageV1FilesAreWarnedAboutAndIgnored) {
    // Root: quota -5 (neither -1 nor positive); job: period 0.
    report_capture capture;
    const cgroup_cpu_limits l = read_cgroup_cpu_limits(tree("garbage-v1"));
    EXPECT_FALSE(l.quota.has_value());
    EXPECT_EQ(capture.containing("W205").size(), 2u);
    EXPECT_EQ(capture.containing("cpu,cpuacct/cpu.cfs_quota_us: '-5' is not -1").size(), 1u);
    EXPECT_EQ(capture.containing("cpu,cpuacct/job/cpu.cfs_period_us: '0' is not a positive integer").size(), 1u);
}

TEST(RuntimeCgroupLimits, LiveSystemGivesAnAnswerWithoutWarnings) {
    // Whatever this machine has, its own files must parse: no W205 here.
    report_capture capture;
    const cgroup_cpu_limits l = read_cgroup_cpu_limits("/");
    if (l.cpuset) {
        EXPECT_FALSE(l.cpuset->empty());
    }
    if (l.quota) {
        EXPECT_GE(l.quota->whole_cpus(), 1);
    }
    EXPECT_TRUE(capture.containing("W205").empty());
}

}  // namespace
}  // namespace aloe::runtime

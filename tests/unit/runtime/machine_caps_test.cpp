// Runtime.MachineCaps: each capability probed on fake sysfs trees (tests/data/sysfs/), with
// perf_event_open turned off and MPI library names chosen by the test, then on this machine.
#include "runtime/machine_caps.hpp"

#include "unit/runtime/report_capture.hpp"

#include <gtest/gtest.h>

namespace aloe::runtime {
namespace {

using testing::report_capture;

constexpr std::string_view missing_mpi = "libaloe-test-no-such-mpi.so.0";

probe_options fake_tree(std::string_view tree) {
    probe_options opts;
    opts.sysfs_root = std::string(ALOE_TEST_DATA_DIR) + "/sysfs/" + std::string(tree);
    opts.try_perf_event_open = false;
    opts.mpi_libraries = {std::string(missing_mpi)};
    return opts;
}

const capability& find(const std::vector<capability>& caps, std::string_view name) {
    for (const capability& c : caps) {
        if (c.name == name) return c;
    }
    throw std::runtime_error("no capability " + std::string(name));
}

TEST(RuntimeMachineCaps, ProbesEveryCapabilityInOrder) {
    const std::vector<capability> caps = probe_machine(fake_tree("bare"));
    ASSERT_EQ(caps.size(), 4u);
    EXPECT_EQ(caps[0].name, "hardware counters");
    EXPECT_EQ(caps[1].name, "cpufreq");
    EXPECT_EQ(caps[2].name, "rapl");
    EXPECT_EQ(caps[3].name, "mpi");
}

TEST(RuntimeMachineCaps, TreeWithCpufreqRaplAndPmu) {
    const std::vector<capability> caps = probe_machine(fake_tree("with-cpufreq-rapl"));

    const capability& counters = find(caps, "hardware counters");
    EXPECT_TRUE(counters.available);
    EXPECT_EQ(counters.detail, "core PMU 'cpu' (perf_event_open not tried)");
    EXPECT_TRUE(counters.fallback.empty());

    const capability& cpufreq = find(caps, "cpufreq");
    EXPECT_TRUE(cpufreq.available);
    EXPECT_EQ(cpufreq.detail, "driver intel_pstate, governor powersave, 3 frequencies 1200000-3400000 kHz");
    EXPECT_TRUE(cpufreq.fallback.empty());

    const capability& rapl = find(caps, "rapl");
    EXPECT_TRUE(rapl.available);
    // intel-rapl:1 has no energy_uj and is not counted.
    EXPECT_EQ(rapl.detail, "2 domains: package-0, dram");
    EXPECT_TRUE(rapl.fallback.empty());

    const capability& mpi = find(caps, "mpi");
    EXPECT_FALSE(mpi.available);
    EXPECT_NE(mpi.detail.find(missing_mpi), std::string::npos) << mpi.detail;
    EXPECT_EQ(mpi.fallback, "single process: slack-conscious scheduling off");
}

TEST(RuntimeMachineCaps, CpufreqWithoutFrequencyList) {
    const std::vector<capability> caps = probe_machine(fake_tree("cpufreq-only"));
    const capability& cpufreq = find(caps, "cpufreq");
    EXPECT_TRUE(cpufreq.available);
    EXPECT_EQ(cpufreq.detail, "driver acpi-cpufreq, governor ondemand, frequencies not listed");
    EXPECT_FALSE(find(caps, "rapl").available);
    EXPECT_FALSE(find(caps, "hardware counters").available);
}

TEST(RuntimeMachineCaps, BareTreeHasNothingAndEachFallbackIsNamed) {
    const std::vector<capability> caps = probe_machine(fake_tree("bare"));
    for (const capability& c : caps) {
        EXPECT_FALSE(c.available) << c.name;
        EXPECT_FALSE(c.detail.empty()) << c.name;
    }
    EXPECT_EQ(find(caps, "hardware counters").fallback, "clock-based timing (software events only)");
    EXPECT_EQ(find(caps, "hardware counters").detail, "no core PMU in sysfs (perf_event_open not tried)");
    EXPECT_EQ(find(caps, "cpufreq").fallback, "no DVFS: frequency policies report and stay off");
    EXPECT_EQ(find(caps, "cpufreq").detail, "no sys/devices/system/cpu/cpu0/cpufreq/scaling_driver");
    EXPECT_EQ(find(caps, "rapl").fallback, "no energy readings: power models use time only");
    EXPECT_EQ(find(caps, "mpi").fallback, "single process: slack-conscious scheduling off");
}

TEST(RuntimeMachineCaps, RootWithTrailingSlashIsJoinedTheSameWay) {
    probe_options opts = fake_tree("with-cpufreq-rapl");
    opts.sysfs_root += "/";
    EXPECT_TRUE(find(probe_machine(opts), "cpufreq").available);
    EXPECT_TRUE(find(probe_machine(opts), "rapl").available);
}

TEST(RuntimeMachineCaps, MpiPrefersALibraryAlreadyLoaded) {
    probe_options opts = fake_tree("bare");
    // libc is in every process: found by the RTLD_NOLOAD pass, after the missing name.
    opts.mpi_libraries = {std::string(missing_mpi), "libc.so.6"};
    const std::vector<capability> caps = probe_machine(opts);
    const capability& mpi = find(caps, "mpi");
    EXPECT_TRUE(mpi.available);
    EXPECT_EQ(mpi.detail, "libc.so.6 (already loaded)");
    EXPECT_TRUE(mpi.fallback.empty());
}

TEST(RuntimeMachineCaps, MissingCapabilitiesAreReportedOnceAtInfoLevel) {
    report_capture capture;
    set_report_verbosity(category_bit(report_category::caps));
    (void)probe_machine(fake_tree("bare"));
    (void)probe_machine(fake_tree("bare"));
    set_report_verbosity(no_categories);
    const std::vector<std::string> lines = capture.lines();
    EXPECT_EQ(lines.size(), 4u);
    const std::vector<std::string> cpufreq = capture.containing("I402");
    ASSERT_EQ(cpufreq.size(), 1u);
    EXPECT_NE(cpufreq[0].find("aloe: info I402 [caps]: cpufreq unavailable"), std::string::npos) << cpufreq[0];
    EXPECT_NE(cpufreq[0].find("; using no DVFS"), std::string::npos) << cpufreq[0];
}

TEST(RuntimeMachineCaps, LiveMachineGivesADetailOrAFallbackForEach) {
    const std::vector<capability> caps = probe_machine();
    ASSERT_EQ(caps.size(), 4u);
    for (const capability& c : caps) {
        EXPECT_FALSE(c.detail.empty()) << c.name;
        EXPECT_EQ(c.available, c.fallback.empty()) << c.name;
    }
    // The syscall was tried: the detail says what perf_event_open answered.
    EXPECT_NE(find(caps, "hardware counters").detail.find("perf_event_open"), std::string::npos);
}

}  // namespace
}  // namespace aloe::runtime

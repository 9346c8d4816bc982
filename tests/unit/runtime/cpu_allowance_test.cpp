// Runtime.CpuAllowance: the affinity mask, read on a test thread whose mask the test
// narrows with sched_setaffinity; the mask captured at load, which later narrowing does not
// change; the live topology built under a narrowed mask (team size, worker CPUs, binding);
// and the OpenMP places that stand in for a mask an OpenMP runtime narrowed first.
#include "runtime/cpu_allowance.hpp"
#include "runtime/cpu_mask.hpp"
#include "runtime/config.hpp"
#include "runtime/topology.hpp"
#include "runtime/wait_policy.hpp"

#include "unit/runtime/report_capture.hpp"

#include <gtest/gtest.h>

#include <sched.h>

#include <functional>
#include <thread>

namespace aloe::runtime {
namespace {

using testing::report_capture;

// Runs `body` on a new thread whose affinity mask is only `cpu`; false when the kernel
// refuses that mask (the test then fails: every CPU of the process mask must be settable).
bool run_on_cpu(int cpu, const std::function<void()>& body) {
    bool narrowed = false;
    std::thread t([&] {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        narrowed = sched_setaffinity(0, sizeof one, &one) == 0;
        if (narrowed) body();
    });
    t.join();
    return narrowed;
}

std::vector<int> process_mask() {
    const std::optional<std::vector<int>> m = read_affinity_mask();
    return m ? *m : std::vector<int>{};
}

TEST(RuntimeCpuAllowance, MaskOfTheCallingThreadFollowsSetaffinity) {
    const std::vector<int> all = process_mask();
    ASSERT_FALSE(all.empty());
    const int last = all.back();
    std::optional<std::vector<int>> seen;
    ASSERT_TRUE(run_on_cpu(last, [&] { seen = read_affinity_mask(); }));
    ASSERT_TRUE(seen.has_value());
    EXPECT_EQ(*seen, std::vector<int>{last});
    EXPECT_EQ(cpus_in_affinity_mask().size(), all.size());  // this thread kept its mask
}

TEST(RuntimeCpuAllowance, MaskAtLoadIsNotTheCallersMaskNow) {
    // Captured when the test binary loaded; a thread narrowed since still sees that one.
    int error = -1;
    const std::optional<std::vector<int>> at_load = affinity_mask_at_load(&error);
    ASSERT_TRUE(at_load.has_value()) << error;
    EXPECT_EQ(error, 0);
    const std::vector<int> all = process_mask();
    EXPECT_EQ(*at_load, all);  // nothing in this binary binds its main thread
    std::optional<std::vector<int>> from_narrowed;
    ASSERT_TRUE(run_on_cpu(all.back(), [&] { from_narrowed = affinity_mask_at_load(); }));
    EXPECT_EQ(from_narrowed, at_load);
    // The process allowance goes by the captured mask (or by the OpenMP places that stand in
    // for it), within the cgroup cpuset when there is one.
    const cpu_allowance& a = process_cpu_allowance();
    ASSERT_TRUE(a.mask.has_value());
    EXPECT_EQ(a.mask_source, "affinity mask");
    EXPECT_EQ(*a.mask, all);
}

TEST(RuntimeCpuAllowance, TopologyUnderANarrowedMaskUsesOnlyThatCpu) {
    // What `taskset -c <cpu>` gives a process: one allowed core, worker CPUs within it.
    const std::vector<int> all = process_mask();
    ASSERT_FALSE(all.empty());
    const int cpu = all.back();
    ASSERT_TRUE(run_on_cpu(cpu, [&] {
        report_capture capture;
        cpu_allowance limits;
        limits.mask = read_affinity_mask();
        const topology t("", limits);
        if (!t.from_hwloc()) GTEST_FAIL() << t.describe();
        EXPECT_EQ(t.cores(), 1);
        EXPECT_EQ(t.processing_units(), 1);
        EXPECT_EQ(t.allowed_cpus(), std::vector<int>{cpu});
        EXPECT_EQ(t.cpus_of_core(0), std::vector<int>{cpu});
        EXPECT_TRUE(t.cpus_of_core(1).empty());
        EXPECT_EQ(t.default_threads(), 1);
        EXPECT_GE(t.whole_machine().processing_units, static_cast<int>(all.size()));
        if (all.size() > 1) {
            EXPECT_EQ(t.limited_by(), std::vector<std::string>{"affinity mask"});
            EXPECT_EQ(t.default_threads_source(), "allowed cores (affinity mask)");
        }
        // A team of 3 bound close: every worker on the one allowed core.
        for (int w = 0; w < 3; ++w) EXPECT_EQ(t.core_for_worker(w, 3, proc_bind_kind::close), 0);
        EXPECT_TRUE(t.bind_current_thread(0));
        EXPECT_EQ(read_affinity_mask(), std::vector<int>{cpu});
        EXPECT_FALSE(t.bind_current_thread(1));  // core 1 is outside the mask
        EXPECT_EQ(capture.containing("W203").size(), 1u);
    }));
}

TEST(RuntimeCpuAllowance, ExplicitTeamLargerThanTheMaskIsOversubscribed) {
    // resolved_num_threads lets an explicit count win; the wait policy compares it with the
    // allowed cores, not the machine's.
    config cfg;
    cfg.num_threads = 4;
    cfg.num_threads_source = setting_source::aloe_environment;
    EXPECT_EQ(resolved_num_threads(cfg, 1), 4);
    report_capture capture;
    set_report_verbosity(category_bit(report_category::topology));
    EXPECT_TRUE(wait_settings::from_config(cfg, 4, 1).oversubscribed);
    EXPECT_FALSE(wait_settings::from_config(cfg, 1, 1).oversubscribed);
    const std::vector<std::string> lines = capture.containing("I204");
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_NE(lines[0].find("a team of 4 threads (ALOE_NUM_THREADS) on 1 allowed core is oversubscribed"),
              std::string::npos) << lines[0];
}

// A fake OpenMP runtime: binding on, places {0,1} and {2,3}.
int fake_proc_bind_on() { return 1; }
int fake_proc_bind_off() { return 0; }
int fake_num_places() { return 2; }
int fake_place_num_procs(int) { return 2; }
void fake_place_proc_ids(int place, int* ids) {
    ids[0] = 2 * place;
    ids[1] = 2 * place + 1;
}

TEST(RuntimeCpuAllowance, OpenMpPlacesStandInForAMaskTheRuntimeNarrowed) {
    openmp_places_api api{fake_proc_bind_on, fake_num_places, fake_place_num_procs, fake_place_proc_ids};
    const std::optional<std::vector<int>> places = openmp_place_cpus(api);
    ASSERT_TRUE(places.has_value());
    EXPECT_EQ(*places, (std::vector<int>{0, 1, 2, 3}));
    // libgomp bound the initial thread to place 0 before aloe's constructor ran.
    EXPECT_EQ(mask_before_openmp_binding({0, 1}, places), (std::vector<int>{0, 1, 2, 3}));
    // A mask the places do not cover was set by someone else: it stays.
    EXPECT_EQ(mask_before_openmp_binding({5}, places), (std::vector<int>{5}));
    EXPECT_EQ(mask_before_openmp_binding({0, 1, 2, 3}, places), (std::vector<int>{0, 1, 2, 3}));
    EXPECT_EQ(mask_before_openmp_binding({1}, std::nullopt), (std::vector<int>{1}));
    api.proc_bind = fake_proc_bind_off;
    EXPECT_FALSE(openmp_place_cpus(api).has_value());  // not binding: the mask is its own
}

TEST(RuntimeCpuAllowance, NoOpenMpRuntimeInThisBinary) {
    // The unit tests do not link an OpenMP runtime, so the live lookup finds none.
    EXPECT_FALSE(loaded_openmp_places_api().has_value());
}

}  // namespace
}  // namespace aloe::runtime

// Coord.BackgroundLoad: the lookout's arithmetic on recorded /proc lines and hand-made
// sample sequences (no clocks, no sleeps), the rounding rule by hand, and the readers on a
// fake /proc tree and once on the real /proc.
#include "coord/background_load.hpp"

#include "../scratch_folder.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <vector>

namespace aloe::coord {
namespace {

// A 5.x kernel's first line: user nice system idle iowait irq softirq steal guest guest_nice.
constexpr std::string_view recorded_stat =
    "cpu  4705 150 1120 16250 520 30 45 7 400 20\n"
    "cpu0 2350 75 560 8125 260 15 22 3 200 10\n"
    "intr 114930548 113199788 3 0 5 263 0 4 [... more]\n";

TEST(CoordBackgroundLoad, ParsesTheAggregateLineOfARecentKernel) {
    const std::optional<cpu_jiffies> j = parse_proc_stat(recorded_stat);
    ASSERT_TRUE(j.has_value());
    EXPECT_EQ(j->busy, 4705u + 150 + 1120 + 30 + 45 + 7);  // guest (400, 20) not again
    EXPECT_EQ(j->idle, 16250u + 520);
}

TEST(CoordBackgroundLoad, ParsesAnOldFourFieldLine) {
    const std::optional<cpu_jiffies> j = parse_proc_stat("cpu 100 5 40 900\ncpu0 100 5 40 900\n");
    ASSERT_TRUE(j.has_value());
    EXPECT_EQ(j->busy, 145u);
    EXPECT_EQ(j->idle, 900u);
}

TEST(CoordBackgroundLoad, RejectsWhatIsNotTheAggregateLine) {
    for (std::string_view bad :
         {"", "\n", "garbage", "cpu", "cpu 1 2 3", "cpu 1 2 x 4", "cpu 1 2 -3 4", "cpu 1 2 3 4.5",
          "cpu 1 2 3 99999999999999999999999", "cpu0 1 2 3 4\ncpu 1 2 3 4\n", "intr 5\ncpu 1 2 3 4\n",
          "cpux 1 2 3 4"})
        EXPECT_FALSE(parse_proc_stat(bad).has_value()) << bad;
}

TEST(CoordBackgroundLoad, PidStatFieldsCountFromTheLastParenthesis) {
    // Fields 3..13, then utime=250 stime=50, then the rest; comm holds blanks and ')'.
    EXPECT_EQ(parse_pid_stat_jiffies("1234 (my (odd) prog) S 1 1234 1234 0 -1 4194304 500 0 0 0 250 50 0 0 20 0 3 0 "
                                     "100 10000 200 18446744073709551615\n"),
              300u);
    EXPECT_EQ(parse_pid_stat_jiffies("7 (a) b) c) R 1 7 7 0 -1 0 0 0 0 0 1 2"), 3u);
    EXPECT_EQ(parse_pid_stat_jiffies("8 (x) R 1 8 8 0 -1 0 0 0 0 0 10 20"), 30u);
}

TEST(CoordBackgroundLoad, RejectsTruncatedOrGarbledPidStat) {
    for (std::string_view bad :
         {"", "garbage", "1234", "1234 (my (odd", "1234 (my (odd) prog)", "1234 (x) S 1 1234 1234 0 -1 4194304 500 0 0 0",
          "1234 (x) S 1 1234 1234 0 -1 4194304 500 0 0 0 250", "1234 (x) S 1 2 3 0 -1 4 5 0 0 0 25x 50",
          "1234 (x) S 1 2 3 0 -1 4 5 0 0 0 250 -50", "abc (x) S 1 2 3 0 -1 4 5 0 0 0 250 50",
          "(x) S 1 2 3 0 -1 4 5 0 0 0 250 50", "1234 (x) S 1 2 3 0 -1 4 5 0 0 0\n250 50"})
        EXPECT_FALSE(parse_pid_stat_jiffies(bad).has_value()) << bad;
}

TEST(CoordBackgroundLoad, FirstSampleIsZeroThenBusyMinusClients) {
    background_load_meter meter(2);
    const pid_jiffies a0[] = {{100, 1000}, {200, 50}};
    EXPECT_EQ(meter.sample({10000, 5000}, a0), 0.0);
    // 200 jiffies over 2 CPUs, all busy; the clients used 100 of them: 1 CPU is background.
    const pid_jiffies a1[] = {{100, 1060}, {200, 90}};
    EXPECT_DOUBLE_EQ(meter.sample({10200, 5000}, a1), 1.0);
    // Half the machine idle, clients use all that is busy: no background.
    const pid_jiffies a2[] = {{100, 1110}, {200, 140}};
    EXPECT_DOUBLE_EQ(meter.sample({10300, 5100}, a2), 0.0);
}

TEST(CoordBackgroundLoad, AClientThatExitsIsDroppedNotCountedNegative) {
    background_load_meter meter(2);
    const pid_jiffies both[] = {{100, 1000}, {200, 5000}};
    meter.sample({10000, 5000}, both);
    // 200 had 5000; it is gone. 100 used 100 of the 200 busy jiffies: 1 CPU background.
    const pid_jiffies one[] = {{100, 1100}};
    EXPECT_DOUBLE_EQ(meter.sample({10200, 5000}, one), 1.0);
}

TEST(CoordBackgroundLoad, ANewClientCountsFromItsFirstSample) {
    background_load_meter meter(4);
    const pid_jiffies one[] = {{100, 0}};
    meter.sample({0, 0}, one);
    // 300 joins with 900 jiffies it used before: none of that is this interval's.
    const pid_jiffies two[] = {{100, 100}, {300, 900}};
    EXPECT_DOUBLE_EQ(meter.sample({200, 200}, two), (200.0 - 100.0) / 400.0 * 4);
    // Next interval 300's 150 jiffies count: 200 busy − 50 − 150 = 0.
    const pid_jiffies later[] = {{100, 150}, {300, 1050}};
    EXPECT_DOUBLE_EQ(meter.sample({400, 400}, later), 0.0);
}

TEST(CoordBackgroundLoad, AClientAnnouncedAtJoinCountsFromThenInItsFirstInterval) {
    background_load_meter meter(2);
    meter.sample({0, 0}, {});
    // 300 joins with 40 jiffies used so far; by the next sample it has used 190: the 150
    // since it joined are the client's, not background (the machine was busy 200 of 200).
    meter.joined({300, 40});
    const pid_jiffies after[] = {{300, 190}};
    EXPECT_DOUBLE_EQ(meter.sample({200, 0}, after), (200.0 - 150.0) / 200.0 * 2);
    // Announcing a pid the meter already follows changes nothing.
    meter.joined({300, 0});
    const pid_jiffies later[] = {{300, 390}};
    EXPECT_DOUBLE_EQ(meter.sample({400, 0}, later), 0.0);
}

TEST(CoordBackgroundLoad, CountersGoingBackwardsGiveZeroAndANewBaseline) {
    background_load_meter meter(2);
    const pid_jiffies a[] = {{100, 1000}};
    meter.sample({10000, 5000}, a);
    EXPECT_EQ(meter.sample({50, 40}, a), 0.0);   // machine counters reset
    EXPECT_EQ(meter.sample({150, 30}, a), 0.0);  // idle alone went back
    const pid_jiffies reused[] = {{100, 10}};    // pid reused: its counter fell
    EXPECT_DOUBLE_EQ(meter.sample({250, 30}, reused), 2.0);
    const pid_jiffies on[] = {{100, 60}};
    EXPECT_DOUBLE_EQ(meter.sample({350, 130}, on), (100.0 - 50.0) / 200.0 * 2);
}

TEST(CoordBackgroundLoad, AvailableCoresRoundsHalfDownAndKeepsOne) {
    EXPECT_EQ(available_cores(2, 0.3), 2u);   // ⌈0.3 − 0.5⌉ = 0: a blip takes nothing
    EXPECT_EQ(available_cores(2, 0.5), 2u);   // a tie goes to the clients
    EXPECT_EQ(available_cores(2, 0.51), 1u);
    EXPECT_EQ(available_cores(2, 1.0), 1u);   // a busy loop: ⌈0.5⌉ = 1
    EXPECT_EQ(available_cores(2, 2.0), 1u);   // ⌈1.5⌉ = 2 = all of them: never below 1
    EXPECT_EQ(available_cores(2, 2.7), 1u);   // ⌈2.2⌉ = 3 > 2
    EXPECT_EQ(available_cores(16, 3.6), 12u); // ⌈3.1⌉ = 4
    EXPECT_EQ(available_cores(16, 3.5), 13u); // ⌈3.0⌉ = 3
    EXPECT_EQ(available_cores(16, 0.0), 16u);
    EXPECT_EQ(available_cores(16, -2.0), 16u);
    EXPECT_EQ(available_cores(16, std::nan("")), 16u);
    EXPECT_EQ(available_cores(16, 1e30), 1u);
    EXPECT_EQ(available_cores(4, 1.0, 0.0), 3u);  // threshold 0: Alg. 3's plain ceiling
    EXPECT_EQ(available_cores(4, 0.1, 0.0), 3u);
}

void write(const std::filesystem::path& p, std::string_view text) {
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
}

TEST(CoordBackgroundLoad, ReadersUseTheGivenProcRoot) {
    const testing::scratch_folder proc("aloe-coord-proc");
    const std::string root = proc.path().string();
    EXPECT_FALSE(read_machine_jiffies(root).has_value());
    EXPECT_FALSE(read_pid_jiffies(42, root).has_value());

    write(proc.path() / "stat", recorded_stat);
    write(proc.path() / "42" / "stat", "42 (worker) S 1 42 42 0 -1 0 0 0 0 0 700 70 0 0 20 0 1 0 5\n");
    write(proc.path() / "43" / "stat", "43 (cut) S 1 43");
    const std::optional<cpu_jiffies> machine = read_machine_jiffies(root);
    ASSERT_TRUE(machine.has_value());
    EXPECT_EQ(machine->busy, 6057u);
    EXPECT_EQ(machine->idle, 16770u);
    EXPECT_EQ(read_pid_jiffies(42, root), 770u);
    EXPECT_FALSE(read_pid_jiffies(43, root).has_value());
}

TEST(CoordBackgroundLoad, ReadsTheRealProcForThisProcess) {
    const std::optional<cpu_jiffies> machine = read_machine_jiffies();
    ASSERT_TRUE(machine.has_value());
    EXPECT_GT(machine->busy + machine->idle, 0u);
    const std::optional<std::uint64_t> first = read_pid_jiffies(::getpid());
    ASSERT_TRUE(first.has_value());
    const std::optional<std::uint64_t> second = read_pid_jiffies(::getpid());
    ASSERT_TRUE(second.has_value());
    EXPECT_GE(*second, *first);
}

}  // namespace
}  // namespace aloe::coord

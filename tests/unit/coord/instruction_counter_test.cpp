// coord/instruction_counter: the `instructions` efficiency measure. Its arithmetic worked by
// hand (E = R / (p · R1), the clamp, bad input; SCAF's CG row of Table 4.2); a site's rates
// (the serial baseline, the last counted E reused); scaling for multiplexing; the process
// counter's scheme against a fake kernel (an event per thread with inherit, summed; a
// thread list that changes while opening; a thread that ended); the measure end to end
// against the fake (sample on the thread's own counter, parallel runs on the process's,
// the rate limit, a fork child dropping its parent's events); an unavailable counter giving
// the fallback and its reason once (I702); errno → reason. Then the real kernel: the
// instructions counter either counts or says why not (never a silent skip), and the same
// process scheme over a software event (the task clock, which every kernel has) counts
// threads started before and after it opened.
#include "coord/efficiency_meter.hpp"
#include "coord/instruction_counter.hpp"
#include "unit/runtime/report_capture.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <ctime>
#include <iostream>
#include <limits>
#include <map>
#include <set>
#include <thread>
#include <vector>

namespace {
using namespace aloe::coord;

constexpr double not_a_number = std::numeric_limits<double>::quiet_NaN();
constexpr double infinity = std::numeric_limits<double>::infinity();

// A kernel that counts what the test says. Events are numbered from 100; each remembers
// the thread it was opened on (0: the caller), and reads that thread's value.
class fake_source final : public counter_source {
public:
    int error = 0;                        // every open fails with it (0: opens succeed)
    std::optional<int> paranoid_level = 2;
    std::vector<std::vector<int>> lists;  // successive threads() answers; the last repeats
    std::set<int> ended;                  // open gives -ESRCH
    std::map<int, counter_value> counts;  // by thread
    std::map<int, int> tid_of;            // open events: fd -> thread
    std::vector<std::pair<int, bool>> opens;  // (thread, inherit) of every open
    int closes = 0;

    int open(int tid, bool inherit) override {
        opens.emplace_back(tid, inherit);
        if (error != 0) return -error;
        if (ended.count(tid) != 0) return -ESRCH;
        tid_of[next_] = tid;
        return next_++;
    }
    bool read(int fd, counter_value& out) override {
        const auto it = tid_of.find(fd);
        if (it == tid_of.end()) return false;
        out = counts[it->second];
        return true;
    }
    void close(int fd) override {
        tid_of.erase(fd);
        ++closes;
    }
    std::vector<int> threads() override {
        if (lists.empty()) return {};
        const std::vector<int> l = lists[std::min(answered_, lists.size() - 1)];
        ++answered_;
        return l;
    }
    std::optional<int> paranoid() override { return paranoid_level; }

    void set(int tid, std::uint64_t value) { counts[tid] = {value, 1000, 1000}; }

private:
    int next_ = 100;
    std::size_t answered_ = 0;
};

// ---- the arithmetic ----

TEST(CoordInstructionCounter, EfficiencyFromRatesWorkedByHand) {
    // 4 threads executing 3e9 instructions/s together against 1e9/s serially: speedup 3, E 0.75.
    EXPECT_DOUBLE_EQ(*instruction_efficiency(1e9, 3e9, 4), 0.75);
    // Perfect scaling.
    EXPECT_DOUBLE_EQ(*instruction_efficiency(2e9, 8e9, 4), 1.0);
    // SCAF's Table 4.2, CG at 36 threads: total IPC 6.1, serial IPC 0.35 (same clock, so
    // IPC ratios are rate ratios): 6.1 / (36 · 0.35) = 0.48413, the thesis's ratio 17.4 / 36.
    EXPECT_NEAR(*instruction_efficiency(0.35, 6.1, 36), 6.1 / 12.6, 1e-12);
    EXPECT_NEAR(*instruction_efficiency(0.35, 6.1, 36) * 36, 17.4, 0.05);
    // A slowdown, and nothing executed at all.
    EXPECT_DOUBLE_EQ(*instruction_efficiency(1e9, 0.5e9, 2), 0.25);
    EXPECT_DOUBLE_EQ(*instruction_efficiency(1e9, 0, 2), 0.0);
    // Clamped to SCAF's cap of 2 (9e9 / (4 · 1e9) = 2.25).
    EXPECT_DOUBLE_EQ(*instruction_efficiency(1e9, 9e9, 4), 2.0);
    // One thread: the ratio itself.
    EXPECT_DOUBLE_EQ(*instruction_efficiency(1e9, 0.8e9, 1), 0.8);
    // Bad input gives nothing.
    EXPECT_FALSE(instruction_efficiency(0, 1e9, 4));
    EXPECT_FALSE(instruction_efficiency(-1e9, 1e9, 4));
    EXPECT_FALSE(instruction_efficiency(not_a_number, 1e9, 4));
    EXPECT_FALSE(instruction_efficiency(infinity, 1e9, 4));
    EXPECT_FALSE(instruction_efficiency(1e9, -1, 4));
    EXPECT_FALSE(instruction_efficiency(1e9, not_a_number, 4));
    EXPECT_FALSE(instruction_efficiency(1e9, infinity, 4));
    EXPECT_FALSE(instruction_efficiency(1e9, 1e9, 0));
    // A tiny serial rate whose quotient overflows.
    EXPECT_FALSE(instruction_efficiency(1e-310, 1e300, 1));
}

TEST(CoordInstructionCounter, SiteRatesKeepTheBaselineAndReuseTheLastCountedEfficiency) {
    site_instruction_rates s;
    // A parallel run before any serial rate: nothing, and nothing to reuse later.
    EXPECT_FALSE(s.observe(4, 3e9));
    EXPECT_FALSE(s.observe(4, std::nullopt));
    // A run on one thread is the baseline (a sample or not), and has no efficiency itself.
    EXPECT_FALSE(s.observe(1, 1e9));
    EXPECT_DOUBLE_EQ(s.serial_rate(), 1e9);
    // Counted parallel runs: E = R / (p · R1).
    EXPECT_DOUBLE_EQ(*s.observe(4, 3e9), 0.75);
    // A run not counted gets the last counted E at the same thread count, not at another.
    EXPECT_DOUBLE_EQ(*s.observe(4, std::nullopt), 0.75);
    EXPECT_FALSE(s.observe(2, std::nullopt));
    EXPECT_DOUBLE_EQ(*s.observe(2, 1.5e9), 0.75);
    EXPECT_DOUBLE_EQ(*s.observe(2, std::nullopt), 0.75);
    EXPECT_FALSE(s.observe(4, std::nullopt));
    // A second sample moves the baseline by the running mean (weight 1/2): 1e9 → 2e9.
    EXPECT_FALSE(s.observe(1, 3e9));
    EXPECT_DOUBLE_EQ(s.serial_rate(), 2e9);
    EXPECT_DOUBLE_EQ(*s.observe(2, 2e9), 0.5);
    // Bad rates count as not counted; a zero or missing serial rate moves nothing.
    EXPECT_DOUBLE_EQ(*s.observe(2, not_a_number), 0.5);
    EXPECT_DOUBLE_EQ(*s.observe(2, -5), 0.5);
    EXPECT_FALSE(s.observe(1, 0));
    EXPECT_FALSE(s.observe(1, std::nullopt));
    EXPECT_DOUBLE_EQ(s.serial_rate(), 2e9);
}

TEST(CoordInstructionCounter, CountsAreScaledForMultiplexing) {
    // Counting half the time it was enabled: the estimate is twice the count.
    EXPECT_DOUBLE_EQ(scaled_count({1000, 200, 100}), 2000.0);
    EXPECT_DOUBLE_EQ(scaled_count({900, 300, 100}), 2700.0);
    // Counting all the time: the count itself.
    EXPECT_DOUBLE_EQ(scaled_count({1000, 500, 500}), 1000.0);
    // Never on the PMU: nothing can be estimated.
    EXPECT_DOUBLE_EQ(scaled_count({0, 500, 0}), 0.0);
    EXPECT_DOUBLE_EQ(scaled_count({7, 0, 0}), 0.0);
    // Running longer than enabled cannot happen; it is not scaled down.
    EXPECT_DOUBLE_EQ(scaled_count({1000, 100, 200}), 1000.0);
}

// ---- the counter against a fake kernel ----

TEST(CoordInstructionCounter, ProcessCounterHasAnInheritedEventPerThreadAndSumsThem) {
    fake_source k;
    k.lists = {{10, 11, 12}};
    instruction_counter c(k, count_scope::process);
    ASSERT_TRUE(c.open()) << c.reason();
    EXPECT_TRUE(c.counting());
    EXPECT_EQ(c.events(), 3u);
    const std::vector<std::pair<int, bool>> want = {{10, true}, {11, true}, {12, true}};
    EXPECT_EQ(k.opens, want);
    k.set(10, 100);
    k.set(11, 200);
    k.counts[12] = {300, 3000, 1000};  // multiplexed: on the PMU a third of the time
    EXPECT_DOUBLE_EQ(*c.read(), 100 + 200 + 900);
    // An event that cannot be read spoils the sum.
    k.tid_of.erase(101);
    EXPECT_FALSE(c.read());
    c.drop();
    EXPECT_FALSE(c.counting());
    EXPECT_FALSE(c.read());
}

TEST(CoordInstructionCounter, ThreadCounterIsTheCallersOwnWithoutInherit) {
    fake_source k;
    instruction_counter c(k, count_scope::thread);
    ASSERT_TRUE(c.open());
    const std::vector<std::pair<int, bool>> want = {{0, false}};
    EXPECT_EQ(k.opens, want);
    k.set(0, 42);
    EXPECT_DOUBLE_EQ(*c.read(), 42);
}

TEST(CoordInstructionCounter, AThreadStartingWhileOpeningStartsItOver) {
    fake_source k;
    // 12 appears after the first list (it may or may not descend from an open event): all
    // closed and opened again, then the list holds still.
    k.lists = {{10, 11}, {10, 11, 12}, {10, 11, 12}, {10, 11, 12}};
    instruction_counter c(k, count_scope::process);
    ASSERT_TRUE(c.open()) << c.reason();
    EXPECT_EQ(c.events(), 3u);
    EXPECT_EQ(k.closes, 2);
    EXPECT_EQ(k.tid_of.size(), 3u);
    // A thread that ended before its event opened is left out; one that ended after the
    // list was read again does not start it over.
    fake_source e;
    e.lists = {{10, 11, 12}, {10, 12}};
    e.ended = {11};
    instruction_counter d(e, count_scope::process);
    ASSERT_TRUE(d.open()) << d.reason();
    EXPECT_EQ(d.events(), 2u);
    // Threads that keep starting: given up, said why, nothing left open.
    fake_source busy;
    for (int i = 0; i < 20; ++i) busy.lists.push_back(std::vector<int>(static_cast<std::size_t>(i + 1), 0));
    for (std::size_t i = 0; i < busy.lists.size(); ++i)
        for (std::size_t j = 0; j < busy.lists[i].size(); ++j) busy.lists[i][j] = static_cast<int>(10 + j);
    instruction_counter b(busy, count_scope::process);
    EXPECT_FALSE(b.open());
    EXPECT_EQ(b.reason(), "threads kept starting while the counters were opened");
    EXPECT_TRUE(busy.tid_of.empty());
    // No thread list (no /proc): unavailable, said so.
    fake_source none;
    instruction_counter n(none, count_scope::process);
    EXPECT_FALSE(n.open());
    EXPECT_NE(n.reason().find("/proc/self/task"), std::string::npos);
}

TEST(CoordInstructionCounter, AFailedOpenClosesWhatOpenedAndSaysWhy) {
    fake_source k;
    k.lists = {{10, 11}};
    k.error = ENOENT;
    instruction_counter c(k, count_scope::process);
    EXPECT_FALSE(c.open());
    EXPECT_FALSE(c.counting());
    EXPECT_EQ(c.reason(), unavailable_reason(ENOENT, 2));
    EXPECT_TRUE(k.tid_of.empty());
}

TEST(CoordInstructionCounter, ErrnoBecomesAOneLineReason) {
    EXPECT_EQ(unavailable_reason(ENOENT, 2), "no hardware counters (ENOENT: a VM without a virtual PMU, or a CPU without the event)");
    EXPECT_NE(unavailable_reason(EOPNOTSUPP, 2).find("no hardware counters (EOPNOTSUPP"), std::string::npos);
    EXPECT_NE(unavailable_reason(ENODEV, 2).find("no hardware counters"), std::string::npos);
    EXPECT_EQ(unavailable_reason(EACCES, 3), "perf_event_paranoid=3 forbids it");
    EXPECT_EQ(unavailable_reason(EPERM, 4), "perf_event_paranoid=4 forbids it");
    const std::string denied = unavailable_reason(EACCES, 2);
    EXPECT_NE(denied.find("not permitted (EACCES"), std::string::npos) << denied;
    EXPECT_NE(denied.find("perf_event_paranoid=2"), std::string::npos) << denied;
    EXPECT_NE(unavailable_reason(EPERM, std::nullopt).find("perf_event_paranoid=unknown"), std::string::npos);
    EXPECT_NE(unavailable_reason(ENOSYS, 2).find("ENOSYS"), std::string::npos);
    EXPECT_NE(unavailable_reason(EMFILE, 2).find("EMFILE"), std::string::npos);
    EXPECT_NE(unavailable_reason(EBUSY, 2).find("EBUSY"), std::string::npos);
    EXPECT_NE(unavailable_reason(EINVAL, 2).find("EINVAL"), std::string::npos);
    for (int e : {ENOENT, EOPNOTSUPP, EACCES, EPERM, ENOSYS, EMFILE, ENFILE, EBUSY, EINVAL, EIO, 0, 9999}) {
        const std::string r = unavailable_reason(e, 2);
        EXPECT_FALSE(r.empty()) << e;
        EXPECT_EQ(r.find('\n'), std::string::npos) << e;
    }
}

// ---- the measure end to end ----

TEST(CoordInstructionCounter, MeasureCountsSamplesOnTheThreadAndRunsOnTheProcess) {
    fake_source k;
    k.lists = {{10, 11, 12, 13}};
    instruction_measure m(k);
    EXPECT_EQ(m.now(), instruction_measure::state::untried);
    ASSERT_TRUE(m.available());
    EXPECT_EQ(m.now(), instruction_measure::state::available);
    EXPECT_TRUE(m.reason().empty());
    site_instruction_rates site;

    // A serial sample, 0.5 s on the calling thread's own counter at 1e9 instructions/s.
    k.set(0, 1000);
    auto s = m.begin(/*one_thread=*/true, /*sample=*/true, 10.0);
    ASSERT_TRUE(s);
    ASSERT_NE(s->thread, nullptr);
    EXPECT_EQ(k.opens.back(), std::make_pair(0, false));
    k.set(0, 1000 + 500'000'000);
    const auto serial = m.finish(*s, 10.5);
    ASSERT_TRUE(serial);
    EXPECT_DOUBLE_EQ(*serial, 1e9);
    EXPECT_EQ(s->thread, nullptr);  // closed after the run
    EXPECT_EQ(k.tid_of.size(), 4u);  // the process's four remain
    EXPECT_FALSE(site.observe(1, serial));

    // A parallel run on 4 threads, 0.25 s, the four events together 3e9/s; one of them
    // multiplexed (on the PMU half the time), which the scaling undoes.
    for (int t : {10, 11, 12}) k.set(t, 0);
    k.counts[13] = {0, 1000, 500};
    auto p = m.begin(false, false, 20.0);
    ASSERT_TRUE(p);
    EXPECT_EQ(p->thread, nullptr);
    for (int t : {10, 11, 12}) k.set(t, 200'000'000);
    k.counts[13] = {75'000'000, 2000, 1000};  // scaled: 150e6
    const auto rate = m.finish(*p, 20.25);
    ASSERT_TRUE(rate);
    EXPECT_DOUBLE_EQ(*rate, (3 * 200e6 + 150e6) / 0.25);
    EXPECT_DOUBLE_EQ(*site.observe(4, rate), 0.75);

    // Within 10 ms of the last count another run is not counted (and reuses the site's E);
    // a serial sample always is.
    EXPECT_FALSE(m.begin(false, false, 20.005));
    EXPECT_DOUBLE_EQ(*site.observe(4, std::nullopt), 0.75);
    auto again = m.begin(true, true, 20.006);
    EXPECT_TRUE(again);
    EXPECT_TRUE(m.begin(false, false, 20.02));

    // A counter that goes back, or no time, gives no rate.
    auto q = m.begin(false, false, 30.0);
    ASSERT_TRUE(q);
    k.set(10, 0);
    EXPECT_FALSE(m.finish(*q, 30.1));
    auto z = m.begin(false, false, 40.0);
    ASSERT_TRUE(z);
    EXPECT_FALSE(m.finish(*z, 40.0));
}

TEST(CoordInstructionCounter, AForkChildDropsItsParentsEventsAndOpensItsOwn) {
    fake_source k;
    k.lists = {{10, 11}};
    instruction_measure m(k);
    ASSERT_TRUE(m.available());
    auto running = m.begin(false, true, 1.0);
    ASSERT_TRUE(running);
    m.drop_after_fork();
    EXPECT_EQ(m.now(), instruction_measure::state::untried);
    EXPECT_TRUE(k.tid_of.empty());  // the parent's events are closed
    // A run that began before the fork has nothing to compare with.
    EXPECT_FALSE(m.finish(*running, 2.0));
    EXPECT_FALSE(m.begin(false, true, 2.0));  // untried: not counted until opened again
    k.lists = {{20}};
    ASSERT_TRUE(m.available());
    EXPECT_EQ(k.opens.back(), std::make_pair(20, true));
    EXPECT_TRUE(m.begin(false, true, 3.0));
}

TEST(CoordInstructionCounter, AnUnavailableCounterFallsBackAndSaysWhyOnce) {
    aloe::runtime::testing::report_capture capture;
    aloe::runtime::set_report_verbosity(aloe::runtime::category_bit(aloe::runtime::report_category::coord));
    fake_source k;
    k.lists = {{10}};
    k.error = EACCES;
    k.paranoid_level = 3;
    instruction_measure m(k);
    EXPECT_FALSE(m.available());
    EXPECT_FALSE(m.available());  // not tried again
    EXPECT_EQ(k.opens.size(), 1u);
    EXPECT_EQ(m.now(), instruction_measure::state::unavailable);
    EXPECT_EQ(m.reason(), "perf_event_paranoid=3 forbids it");
    EXPECT_FALSE(m.begin(true, true, 1.0));
    EXPECT_FALSE(m.begin(false, false, 1.0));
    const auto said = capture.containing("I702");
    ASSERT_EQ(said.size(), 1u);
    EXPECT_NE(said[0].find("instruction counts unavailable: perf_event_paranoid=3 forbids it"), std::string::npos) << said[0];
    EXPECT_NE(said[0].find("using efficiency from serial samples and run times (loop progress, region time)"),
              std::string::npos)
        << said[0];
    // A second process-like measure failing the same way is not said again.
    instruction_measure other(k);
    EXPECT_FALSE(other.available());
    EXPECT_EQ(capture.containing("I702").size(), 1u);
    // The probe `aloe info` uses gives the same reason.
    const instruction_probe probe = probe_instructions(k);
    EXPECT_FALSE(probe.available);
    EXPECT_EQ(probe.reason, "perf_event_paranoid=3 forbids it");
}

TEST(CoordInstructionCounter, AnAvailableCounterSaysSoOnce) {
    aloe::runtime::testing::report_capture capture;
    aloe::runtime::set_report_verbosity(aloe::runtime::category_bit(aloe::runtime::report_category::coord));
    fake_source k;
    k.lists = {{10, 11}};
    instruction_measure m(k);
    EXPECT_TRUE(m.available());
    const auto said = capture.containing("I703");
    ASSERT_EQ(said.size(), 1u);
    EXPECT_NE(said[0].find("efficiency from instruction counts (perf_event_open, 2 events)"), std::string::npos) << said[0];
    EXPECT_TRUE(capture.containing("I702").empty());
    EXPECT_TRUE(probe_instructions(k).available);
}

// ---- the real kernel ----

double thread_cpu_seconds() {
    timespec t{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// Spins until this thread has used `seconds` more of CPU time.
void burn_cpu(double seconds) {
    const double until = thread_cpu_seconds() + seconds;
    volatile double sink = 0;
    while (thread_cpu_seconds() < until)
        for (int i = 0; i < 10000; ++i) sink = sink + 1.0;
}

TEST(CoordInstructionCounter, RealInstructionCounterCountsOrSaysWhyNot) {
    const auto kernel = kernel_counter_source(counted_event::instructions);
    const instruction_probe probe = probe_instructions(*kernel);
    instruction_counter c(*kernel, count_scope::process);
    const bool opened = c.open();
    // The probe and the process counter agree on this machine.
    EXPECT_EQ(probe.available, opened) << probe.reason << " / " << c.reason();
    if (!opened) {
        // No silent skip: a machine without counters must say why, in one line.
        std::cout << "[ info ] instruction counts unavailable here: " << c.reason() << '\n';
        RecordProperty("instructions", c.reason());
        EXPECT_FALSE(c.reason().empty());
        EXPECT_EQ(c.reason().find('\n'), std::string::npos);
        EXPECT_EQ(probe.reason, c.reason());
        EXPECT_FALSE(c.read());
        return;
    }
    std::cout << "[ info ] instruction counts available here (" << c.events() << " events)\n";
    RecordProperty("instructions", "available");
    EXPECT_TRUE(probe.reason.empty());
    const auto before = c.read();
    ASSERT_TRUE(before);
    std::thread worker([] { burn_cpu(0.02); });
    burn_cpu(0.02);
    worker.join();
    const auto after = c.read();
    ASSERT_TRUE(after);
    // At least a million instructions in 20 ms of spinning, on each of two threads.
    EXPECT_GT(*after - *before, 2e6);
}

TEST(CoordInstructionCounter, RealProcessSchemeCountsThreadsStartedBeforeAndAfterOpening) {
    // The same events and reads over the task clock (ns of CPU time), which needs no PMU.
    const auto kernel = kernel_counter_source(counted_event::task_clock);
    std::atomic<bool> go{false};
    std::thread before([&] {
        while (!go.load()) std::this_thread::yield();
        burn_cpu(0.05);
    });
    instruction_counter c(*kernel, count_scope::process);
    const bool opened = c.open();
    if (!opened) {
        go = true;
        before.join();
        // Only a forbidding paranoia level, a filter or a lack of descriptors stops a
        // software event; whichever, it is said.
        std::cout << "[ info ] software counters unavailable here: " << c.reason() << '\n';
        EXPECT_FALSE(c.reason().empty());
        return;
    }
    EXPECT_GE(c.events(), 2u);  // this thread and `before` at least
    const auto start = c.read();
    ASSERT_TRUE(start);
    std::thread after([&] {
        while (!go.load()) std::this_thread::yield();
        burn_cpu(0.05);
    });
    go = true;
    before.join();
    after.join();
    const auto end = c.read();
    ASSERT_TRUE(end);
    // Each worker used 50 ms of CPU time after `start` (and some waiting for the flag).
    // Both are counted: the one started before
    // the open by its own event, the one started after by inheritance from this thread's.
    const double counted_ms = (*end - *start) * 1e-6;
    std::cout << "[ info ] task clock over two threads of 50 ms each: " << counted_ms << " ms\n";
    EXPECT_GT(counted_ms, 90.0);
    EXPECT_LT(counted_ms, 1000.0);
}

}  // namespace

// The task scheduler's counters (src/task/task_counters.hpp, HPX's meanings) over workloads
// this test controls: N tasks that each busy-wait 20 µs on the runtime's clock (the one the
// counters read). Only accounting identities and lower bounds the test itself enforces are
// asserted, on counter_reader deltas (other tests may have counted before):
//   count/cumulative = N; phases = N when no task waits, within [tasks, tasks + waits] else;
//   time/cumulative ≥ 0.9 · N · 20 µs; time/overall ≥ time/cumulative;
//   pending-misses ≤ pending-accesses; Σ stolen-from = Σ stolen-to; a spawn run at once
//   (past 256 queued) counted once;
//   each raw counter's total = the sum of its worker-thread instances;
//   the derived ones (idle-rate, time/average, time/average-overhead, time/cumulative-
//   overhead, time/average-phase, time/average-phase-overhead, wait-time/pending) = their
//   formulas over the same interval's raw deltas, and overall = cumulative + overhead.
#include <aloe/stats.hpp>
#include <aloe/task.hpp>

#include "task_test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace aloe {
namespace {

constexpr std::uint64_t spin_ns = 20'000;
const std::string total = "/threads{locality#0/total}/";

// The raw (stored) task counters: per worker, so their totals are sums of the instances.
const std::vector<std::string> raw_names = {
    "time/overall",         "time/cumulative",           "count/cumulative",         "count/cumulative-phases",
    "count/pending-accesses", "count/pending-misses",    "count/stolen-from-pending", "count/stolen-to-pending",
    "wait-time/pending-sum", "wait-time/pending-samples",
};
// Derived by the registry from the raw ones (registered by the task layer with them).
const std::vector<std::string> derived_names = {
    "idle-rate",          "time/average",       "time/average-overhead",       "time/cumulative-overhead",
    "time/average-phase", "time/average-phase-overhead", "wait-time/pending"};

using values = std::map<std::string, std::uint64_t>;

values to_map(const std::vector<counter_sample>& samples) {
    values v;
    for (const auto& s : samples) v[s.name] = s.value;
    return v;
}

std::uint64_t at(const values& v, const std::string& name) {
    const auto it = v.find(name);
    if (it == v.end()) {
        ADD_FAILURE() << "no counter " << name;
        return 0;
    }
    return it->second;
}

/// Makes the task layer register its counters (the pool is made on first use).
void touch_scheduler() {
    task_group g;
    g.run([] {});
    g.wait();
}

/// Every /threads instance (totals and worker slots), read in one snapshot per call.
counter_reader all_thread_counters() { return counter_reader("/threads{locality#0/*"); }

/// The reader's delta once `tasks` tasks more were counted and the scheduling-loop time has
/// stopped moving (every thread left the loop and added its share).
values settle(counter_reader& reader, std::uint64_t tasks) {
    const std::string count = total + "count/cumulative";
    const std::string overall = total + "time/overall";
    EXPECT_TRUE(task_test::eventually([&] { return to_map(reader.peek())[count] >= tasks; }, 5.0))
        << "the task count never reached " << tasks;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    values before = to_map(reader.peek());
    while (std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
        values now = to_map(reader.peek());
        if (now[overall] == before[overall] && now[count] == before[count]) break;
        before = std::move(now);
    }
    return to_map(reader.delta());
}

void run_flat_workload(std::uint64_t n) {
    task_group g;
    for (std::uint64_t i = 0; i < n; ++i) g.run([] { task_test::spin_ns(spin_ns); });
    g.wait();
}

void expect_raw_identities(const values& d) {
    EXPECT_GE(at(d, total + "time/overall"), at(d, total + "time/cumulative")) << "t_func ≥ t_exec";
    EXPECT_LE(at(d, total + "count/pending-misses"), at(d, total + "count/pending-accesses"));
    EXPECT_EQ(at(d, total + "count/stolen-from-pending"), at(d, total + "count/stolen-to-pending"))
        << "every steal is from one slot to one thread";
    EXPECT_GE(at(d, total + "count/cumulative-phases"), at(d, total + "count/cumulative"));
    EXPECT_LE(at(d, total + "wait-time/pending-samples"), at(d, total + "count/cumulative"));
}

TEST(TaskCounters, CountersAreRegisteredPerWorker) {
    touch_scheduler();
    const std::vector<counter_description> all = list_counters();
    for (const std::string& name : raw_names) {
        const std::string full = total + name;
        bool found = false;
        for (const auto& d : all)
            if (d.name == full) {
                found = true;
                EXPECT_TRUE(d.per_worker) << full;
                EXPECT_FALSE(d.derived) << full;
            }
        EXPECT_TRUE(found) << full << " is not registered";
        EXPECT_TRUE(read_counter(full).has_value()) << full;
        EXPECT_TRUE(read_counter("/threads{locality#0/worker-thread#1}/" + name).has_value()) << name;
    }
    for (const std::string& name : derived_names) {
        const std::string full = total + name;
        bool found = false;
        for (const auto& d : all)
            if (d.name == full) {
                found = true;
                EXPECT_TRUE(d.per_worker) << full;
                EXPECT_TRUE(d.derived) << full;
            }
        EXPECT_TRUE(found) << full << " is not registered";
    }
}

TEST(TaskCounters, FlatWorkloadAccounting) {
    touch_scheduler();
    // A multiple of the sampling period (16), and all of them queued (256: a spawn past that
    // many runs at once, unsampled).
    const std::uint64_t n = 256;
    counter_reader reader = all_thread_counters();
    run_flat_workload(n);
    const values d = settle(reader, n);

    EXPECT_EQ(at(d, total + "count/cumulative"), n);
    EXPECT_EQ(at(d, total + "count/cumulative-phases"), n) << "no task waited: one phase each";
    EXPECT_GE(at(d, total + "time/cumulative"), n * spin_ns * 9 / 10) << "each task busy-waited 20 µs";
    EXPECT_EQ(at(d, total + "wait-time/pending-samples"), n / 16) << "one spawn in 16 of this thread is sampled";
    expect_raw_identities(d);

    // The same through the single-counter reader the brief names.
    counter_reader count(total + "count/cumulative");
    run_flat_workload(n);
    EXPECT_TRUE(task_test::eventually([&] { return count.peek().at(0).value >= n; }, 5.0));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_EQ(count.delta().at(0).value, n);
}

TEST(TaskCounters, WorkerInstancesSumToTheTotal) {
    touch_scheduler();
    const std::uint64_t n = 400;
    counter_reader reader = all_thread_counters();
    run_flat_workload(n);
    const values d = settle(reader, n);
    for (const std::string& name : raw_names) {
        std::uint64_t sum = 0;
        int instances = 0;
        for (const auto& [full, value] : d)
            if (full.rfind("/threads{locality#0/worker-thread#", 0) == 0 && full.size() > name.size() + 1 &&
                full.compare(full.size() - name.size() - 2, name.size() + 2, "}/" + name) == 0) {
                sum += value;
                ++instances;
            }
        EXPECT_GE(instances, 1) << name;
        EXPECT_EQ(sum, at(d, total + name)) << name << " over " << instances << " worker instances";
    }
}

// Parents that each spawn children and wait for them: a parent's time is split in phases
// around the children it runs meanwhile, so nothing is counted twice (t_exec ≤ t_func).
TEST(TaskCounters, NestedWorkloadCountsPhasesOnce) {
    touch_scheduler();
    constexpr std::uint64_t parents = 50, children = 4;
    counter_reader reader = all_thread_counters();
    task_group g;
    for (std::uint64_t p = 0; p < parents; ++p)
        g.run([] {
            task_test::spin_ns(spin_ns);
            task_group mine;
            for (std::uint64_t c = 0; c < children; ++c) mine.run([] { task_test::spin_ns(spin_ns); });
            mine.wait();
            task_test::spin_ns(spin_ns);
        });
    g.wait();
    const std::uint64_t tasks = parents * (children + 1);
    const values d = settle(reader, tasks);

    EXPECT_EQ(at(d, total + "count/cumulative"), tasks);
    EXPECT_GE(at(d, total + "count/cumulative-phases"), tasks);
    EXPECT_LE(at(d, total + "count/cumulative-phases"), tasks + parents) << "one more phase per wait at most";
    EXPECT_GE(at(d, total + "time/cumulative"), (parents * 2 + parents * children) * spin_ns * 9 / 10);
    expect_raw_identities(d);
}

// Spawns past 256 queued run at once on the spawner. From the program's thread (no task, no
// scheduling loop) each such run counts as a short visit of the loop: its time in both t_exec
// and t_func, one phase. From inside a task, its time stays in the spawning task's open
// phase and is not counted again: t_exec stays near the tasks' own measured time, one phase
// per task. Workers are kept out (concurrency 1), so almost all run at once.
TEST(TaskCounters, SpawnsRunAtOnceAreCountedOnce) {
    touch_scheduler();
    // 200 µs tasks: counting a run at once twice would add its whole time, far more than
    // what the counting itself adds per task (a few µs, more under a sanitizer on a busy
    // machine), so the bound below tells the two apart.
    constexpr std::uint64_t n = 600, task_ns = 200'000;
    const auto team = static_cast<std::uint64_t>(task_concurrency());
    set_task_concurrency(1);
    static thread_local bool spawning = false;  // this thread is inside the spawning task's loop
    std::atomic<std::uint64_t> own_ns{0};       // the tasks' time, by their own clock readings
    std::atomic<std::uint64_t> at_once_ns{0};   // of it, tasks run at once inside the spawner
    auto timed = [&] {
        const bool at_once = spawning;
        const runtime::ticks t0 = runtime::now_ticks();
        task_test::spin_ns(task_ns);
        const std::uint64_t took = runtime::ticks_to_ns(runtime::now_ticks() - t0);
        own_ns.fetch_add(took, std::memory_order_relaxed);
        if (at_once) at_once_ns.fetch_add(took, std::memory_order_relaxed);
    };
    counter_reader reader = all_thread_counters();
    {
        task_group g;
        for (std::uint64_t i = 0; i < n; ++i) g.run(timed);
    }
    values d = settle(reader, n);
    EXPECT_EQ(at(d, total + "count/cumulative"), n);
    EXPECT_EQ(at(d, total + "count/cumulative-phases"), n) << "the program's thread is no task: one phase each";
    expect_raw_identities(d);

    own_ns.store(0);
    {
        task_group g;
        g.run([&] {
            task_group inner;
            spawning = true;
            for (std::uint64_t i = 0; i < n; ++i) inner.run(timed);
            spawning = false;
            inner.wait();
        });
    }
    d = settle(reader, n + 1);
    set_task_concurrency(0);
    EXPECT_EQ(at(d, total + "count/cumulative"), n + 1);
    // One phase per task, and the spawning task's one more when its wait ended: the runs at
    // once are charged to the spawning task's open phase, which is not split.
    EXPECT_GE(at(d, total + "count/cumulative-phases"), n + 1);
    EXPECT_LE(at(d, total + "count/cumulative-phases"), n + 2);
    ASSERT_GE(at_once_ns.load(), (n - 256 - team) * task_ns) << "most ran at once inside the spawning task";
    EXPECT_LT(at(d, total + "time/cumulative"), own_ns.load() + at_once_ns.load() / 2)
        << "t_exec is the tasks' own time plus the counting's: counted twice, the runs at once would add "
        << at_once_ns.load() << " ns";
    expect_raw_identities(d);
}

// The main thread spawns everything into its own deque and then only joins a thread outside
// the team (no slot) that waits for the group: every task is stolen, by a worker or by that
// thread, and each steal counts once on each side.
TEST(TaskCounters, StealsBalanceWithAThreadThatHasNoSlot) {
    touch_scheduler();  // the main thread holds slot 0
    const std::uint64_t n = 256;  // all queued (a spawn past 256 queued runs at once)
    counter_reader reader = all_thread_counters();
    task_group g;
    for (std::uint64_t i = 0; i < n; ++i) g.run([] { task_test::spin_ns(spin_ns); });
    std::thread waiter([&g] { g.wait(); });
    waiter.join();
    const values d = settle(reader, n);

    EXPECT_EQ(at(d, total + "count/cumulative"), n);
    // Every task left slot 0 once (the spawning thread ran none); a worker's stolen batch
    // may be stolen on from its deque, a second steal of the same task.
    EXPECT_EQ(at(d, "/threads{locality#0/worker-thread#0}/count/stolen-from-pending"), n)
        << "all from slot 0, the main thread's";
    EXPECT_GE(at(d, total + "count/stolen-from-pending"), n) << "the spawning thread ran none of its tasks";
    EXPECT_EQ(at(d, total + "count/stolen-to-pending"), at(d, total + "count/stolen-from-pending"));
    expect_raw_identities(d);
}

// A thief that finds a deque holding more than 8 takes 8 of its oldest at once: it runs the
// first and queues the others on its own deque. With worker 1 the only thief (concurrency 2)
// and every task held until the test lets go, slot 0 has lost exactly one batch when the
// first task starts (1 under single steals).
TEST(TaskCounters, AThiefTakesABatchOfTheOldest) {
    touch_scheduler();
    set_task_concurrency(1);  // no thief while the deque fills
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    counter_reader reader = all_thread_counters();
    const std::string from_slot0 = "/threads{locality#0/worker-thread#0}/count/stolen-from-pending";
    std::atomic<bool> go{false};
    std::atomic<int> started{0};
    const std::uint64_t n = 65;
    task_group g;
    auto held = [&] {
        started.fetch_add(1);
        while (!go.load()) std::this_thread::yield();
    };
    for (std::uint64_t i = 0; i + 1 < n; ++i) g.run(held);
    set_task_concurrency(2);
    g.run(held);  // wakes worker 1, which finds 65 queued
    ASSERT_TRUE(task_test::eventually([&] { return started.load() >= 1; }, 5.0)) << "worker 1 never stole";
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const std::uint64_t first_steal = to_map(reader.peek())[from_slot0];
    const int running = started.load();
    go.store(true);
    g.wait();
    set_task_concurrency(0);
    EXPECT_EQ(running, 1) << "one thief, held by its first task";
    EXPECT_EQ(first_steal, 8u) << "the first steal took one batch: 8 of the 65 queued";
    const values d = settle(reader, n);
    EXPECT_EQ(at(d, total + "count/cumulative"), n);
    expect_raw_identities(d);
}

// With the concurrency limited to 1, workers run no tasks: the thread without a slot that
// waits steals every one of them (deterministically, on any machine).
TEST(TaskCounters, StealsBySlotlessWaiterCountOnBothSides) {
    touch_scheduler();
    const std::uint64_t n = 200;
    set_task_concurrency(1);
    std::this_thread::sleep_for(std::chrono::milliseconds(30));  // workers leave the loop
    counter_reader reader = all_thread_counters();
    task_group g;
    for (std::uint64_t i = 0; i < n; ++i) g.run([] { task_test::spin_ns(spin_ns); });
    std::thread waiter([&g] { g.wait(); });
    waiter.join();
    set_task_concurrency(0);
    const values d = settle(reader, n);

    EXPECT_EQ(at(d, total + "count/cumulative"), n);
    EXPECT_EQ(at(d, total + "count/stolen-from-pending"), n);
    EXPECT_EQ(at(d, total + "count/stolen-to-pending"), n) << "the slot-less thread's steals count as stolen-to";
    expect_raw_identities(d);
}

// Slot 0 belongs to the first outside thread that spawns; when that thread exits, the next
// outside thread that spawns takes it (before, one that had once found it taken stayed without
// a slot for good, its tasks in the shared queue). Seen through pending-accesses, which only a
// thread with a slot counts; the concurrency limit of 1 keeps the workers out.
TEST(TaskCounters, SlotZeroPassesOnWhenItsOwnerExits) {
    // The main thread must not hold slot 0: true in a process of its own, as CTest runs each
    // case, not after other cases of this binary ran in the same process.
    if (testing::UnitTest::GetInstance()->test_to_run_count() > 1 &&
        testing::UnitTest::GetInstance()->successful_test_count() + testing::UnitTest::GetInstance()->failed_test_count() > 0)
        GTEST_SKIP() << "needs a process of its own (earlier cases gave slot 0 to the main thread); "
                        "run it alone with --gtest_filter";
    set_task_concurrency(1);  // this (main) thread never spawns: slot 0 stays free for A
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    const std::uint64_t n = 100;
    std::mutex m;
    std::condition_variable cv;
    int stage = 0;  // 1: A holds slot 0; 2: B has run slotless; 3: A may exit; 4: B may go on
    auto wait_for = [&](int s) {
        std::unique_lock lock(m);
        cv.wait(lock, [&] { return stage >= s; });
    };
    auto advance = [&](int s) {
        { std::lock_guard lock(m); stage = s; }
        cv.notify_all();
    };
    std::thread a([&] {
        async([] {}).get();  // claims slot 0
        advance(1);
        wait_for(3);
    });
    values slotless, slotted;
    std::thread b([&] {
        wait_for(1);
        counter_reader reader = all_thread_counters();
        run_flat_workload(n);
        slotless = settle(reader, n);
        advance(2);
        wait_for(4);
        run_flat_workload(n);
        slotted = settle(reader, n);
    });
    wait_for(2);
    advance(3);
    a.join();
    advance(4);
    b.join();
    set_task_concurrency(0);

    EXPECT_EQ(at(slotless, total + "count/cumulative"), n);
    EXPECT_EQ(at(slotless, total + "count/pending-accesses"), 0u) << "B had no slot while A held slot 0";
    EXPECT_EQ(at(slotted, total + "count/cumulative"), n);
    EXPECT_GE(at(slotted, total + "count/pending-accesses"), n) << "B took slot 0 once A had exited";
    EXPECT_EQ(at(slotted, total + "count/stolen-to-pending"), 0u) << "B popped its own tasks";
}

// A task is counted before it publishes its result: whoever has the result sees the count.
TEST(TaskCounters, ResultReaderSeesTheTaskCounted) {
    touch_scheduler();
    const std::string count = total + "count/cumulative";
    for (int i = 0; i < 500; ++i) {
        const std::uint64_t before = counter_value(count).value_or(0);
        async([] {}).get();
        ASSERT_GE(counter_value(count).value_or(0), before + 1) << "round " << i;
    }
}

// Two intervals read by one reader add up to the interval of a copy of it (the same baseline)
// read just after: exactly for what only tasks move, at most for what idle threads may still
// move between the two reads (their looks into empty deques, a late leave of the loop).
TEST(TaskCounters, IntervalsAddUp) {
    touch_scheduler();
    counter_reader stepping = all_thread_counters();
    counter_reader spanning = stepping;
    run_flat_workload(160);
    const values first = settle(stepping, 160);
    run_flat_workload(320);
    const values second = settle(stepping, 320);
    const values both = to_map(spanning.delta());
    const std::vector<std::string> moved_by_tasks_only = {
        "time/cumulative", "count/cumulative", "count/cumulative-phases", "count/stolen-from-pending",
        "count/stolen-to-pending", "wait-time/pending-sum", "wait-time/pending-samples"};
    for (const std::string& name : raw_names) {
        const std::uint64_t sum = at(first, total + name) + at(second, total + name);
        if (std::find(moved_by_tasks_only.begin(), moved_by_tasks_only.end(), name) != moved_by_tasks_only.end())
            EXPECT_EQ(sum, at(both, total + name)) << name;
        else
            EXPECT_LE(sum, at(both, total + name)) << name;
    }
    EXPECT_EQ(at(both, total + "count/cumulative"), 480u);
}

// The derived counters: registered (this test fails until they are), and each equal to its
// formula over the same interval's raw deltas.
TEST(TaskCounters, DerivedCountersFollowTheirFormulas) {
    touch_scheduler();
    for (const std::string& name : derived_names)
        EXPECT_TRUE(read_counter(total + name).has_value()) << total + name << " is not registered";
    const std::uint64_t n = 400;
    counter_reader reader = all_thread_counters();
    run_flat_workload(n);
    const values d = settle(reader, n);
    for (const std::string& name : derived_names)
        if (d.count(total + name) == 0) GTEST_FAIL() << total + name << " is not registered";

    const std::uint64_t overall = at(d, total + "time/overall");
    const std::uint64_t cumulative = at(d, total + "time/cumulative");
    const std::uint64_t tasks = at(d, total + "count/cumulative");
    ASSERT_EQ(tasks, n);
    ASSERT_GE(overall, cumulative);
    const std::uint64_t overhead = overall - cumulative;

    EXPECT_EQ(at(d, total + "time/cumulative-overhead"), overhead);
    EXPECT_EQ(at(d, total + "time/cumulative") + at(d, total + "time/cumulative-overhead"),
              at(d, total + "time/overall"))
        << "overall = cumulative + cumulative-overhead";
    EXPECT_EQ(at(d, total + "time/average"), cumulative / tasks);
    EXPECT_GE(at(d, total + "time/average"), spin_ns * 9 / 10) << "each task busy-waited 20 µs";
    EXPECT_EQ(at(d, total + "time/average-overhead"), overhead / tasks);
    const std::uint64_t phases = at(d, total + "count/cumulative-phases");
    ASSERT_GT(phases, 0u);
    EXPECT_EQ(at(d, total + "time/average-phase"), cumulative / phases);
    EXPECT_EQ(at(d, total + "time/average-phase-overhead"), overhead / phases);
    const std::uint64_t samples = at(d, total + "wait-time/pending-samples");
    ASSERT_GT(samples, 0u);
    EXPECT_EQ(at(d, total + "wait-time/pending"), at(d, total + "wait-time/pending-sum") / samples);
    const std::uint64_t idle_ppm = overhead * 1'000'000 / overall;  // no overflow below 5 h of loop time
    EXPECT_NEAR(static_cast<double>(at(d, total + "idle-rate")), static_cast<double>(idle_ppm), 1.0);
    EXPECT_LE(at(d, total + "idle-rate"), 1'000'000u);

    // Per worker: the formula over that worker's own operands.
    for (int w = 0; w < 4; ++w) {
        const std::string inst = "/threads{locality#0/worker-thread#" + std::to_string(w) + "}/";
        if (d.count(inst + "time/cumulative-overhead") == 0) continue;
        const std::uint64_t o = at(d, inst + "time/overall"), c = at(d, inst + "time/cumulative");
        EXPECT_EQ(at(d, inst + "time/cumulative-overhead"), o > c ? o - c : 0) << inst;
    }
}

}  // namespace
}  // namespace aloe

// aloe::task_group on the process team (include/aloe/task.hpp, src/task/task_pool.cpp):
// every task runs exactly once, under random interleavings (seeded pauses, nesting modes),
// from team threads and from plain threads outside it; exceptions; destruction with tasks
// pending; nesting with parallel_for both ways; a chain of 20,000 nested waits (the stack
// guard); spawns that run at once past 256 queued; the concurrency limit. The suite runs
// with ALOE_NUM_THREADS=4 (CMakeLists.txt).
#include <aloe/aloe.hpp>
#include <aloe/task.hpp>

#include "task/task_pool.hpp"
#include "task_test_support.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <pthread.h>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace aloe {
namespace {

using task_test::rng;
using task_test::scaled;

/// One run count per task id.
struct run_counts {
    explicit run_counts(std::size_t n) : counts(new std::atomic<int>[n]), size(n) {
        for (std::size_t i = 0; i < n; ++i) counts[i].store(0, std::memory_order_relaxed);
    }
    void ran(std::size_t id) noexcept { counts[id].fetch_add(1, std::memory_order_relaxed); }
    /// "" when each ran exactly once, else the first ids that did not.
    std::string exactly_once() const {
        std::string bad;
        int shown = 0;
        for (std::size_t i = 0; i < size && shown < 8; ++i)
            if (const int n = counts[i].load(); n != 1) {
                bad += "task " + std::to_string(i) + " ran " + std::to_string(n) + " times; ";
                ++shown;
            }
        return bad;
    }
    std::unique_ptr<std::atomic<int>[]> counts;
    std::size_t size;
};

std::uint64_t fib_serial(int n) {
    return n < 2 ? static_cast<std::uint64_t>(n) : fib_serial(n - 1) + fib_serial(n - 2);
}

std::uint64_t fib_group(int n) {
    if (n < 2) return static_cast<std::uint64_t>(n);
    std::uint64_t a = 0;
    task_group g;
    g.run([&a, n] { a = fib_group(n - 1); });
    const std::uint64_t b = fib_group(n - 2);
    g.wait();
    return a + b;
}

/// Makes sure this (the main) thread has used the scheduler, so it holds slot 0 and threads
/// started later have none (their spawns go to the shared queue).
void touch_scheduler() {
    task_group g;
    g.run([] {});
    g.wait();
}

TEST(TaskGroup, EmptyGroupWaitsAtOnce) {
    task_group g;
    EXPECT_EQ(g.pending(), 0u);
    g.wait();
    g.wait();
}

TEST(TaskGroup, ManyTasksEachRunOnce) {
    const auto n = static_cast<std::size_t>(scaled(50'000, 10'000));
    run_counts runs(n);
    task_group g;
    for (std::size_t i = 0; i < n; ++i) g.run([&runs, i] { runs.ran(i); });
    g.wait();
    EXPECT_EQ(g.pending(), 0u);
    EXPECT_EQ(runs.exactly_once(), "");
}

TEST(TaskGroup, RecursiveFibonacci) {
    const int n = static_cast<int>(scaled(24, 17));
    EXPECT_EQ(fib_group(n), fib_serial(n));
    EXPECT_EQ(fib_group(0), 0u);
    EXPECT_EQ(fib_group(1), 1u);
}

TEST(TaskGroup, NestedGroupsWaitForTheirOwnTasks) {
    // Each outer task runs a group of inner tasks and waits for it: the inner sums are
    // complete when the outer task reads them.
    constexpr int outer = 64, inner = 32;
    std::vector<std::int64_t> sums(outer, -1);
    run_counts runs(outer * inner);
    task_group g;
    for (int o = 0; o < outer; ++o)
        g.run([o, &sums, &runs] {
            std::atomic<std::int64_t> sum{0};
            task_group mine;
            for (int i = 0; i < inner; ++i)
                mine.run([o, i, &sum, &runs] {
                    runs.ran(static_cast<std::size_t>(o * inner + i));
                    sum.fetch_add(i);
                });
            mine.wait();
            sums[static_cast<std::size_t>(o)] = sum.load();
        });
    g.wait();
    for (int o = 0; o < outer; ++o) EXPECT_EQ(sums[static_cast<std::size_t>(o)], inner * (inner - 1) / 2) << o;
    EXPECT_EQ(runs.exactly_once(), "");
}

// A random tree of tasks (the seed shapes it and picks each node's pauses and how it runs its
// children: into the root group, into a group of its own it waits for, or into one whose
// destructor waits). Every node runs exactly once.
struct random_tree {
    std::vector<std::vector<std::uint32_t>> children;
    std::vector<std::uint8_t> mode;
    std::uint64_t seed;

    random_tree(std::uint64_t s, std::size_t most) : seed(s) {
        rng r(s);
        children.emplace_back();
        mode.push_back(0);
        for (std::size_t node = 0; node < children.size() && children.size() < most; ++node) {
            const std::uint64_t fan = node == 0 ? 16 : r.below(r.below(3) == 0 ? 6 : 3);
            for (std::uint64_t c = 0; c < fan && children.size() < most; ++c) {
                children[node].push_back(static_cast<std::uint32_t>(children.size()));
                children.emplace_back();
                mode.push_back(static_cast<std::uint8_t>(r.below(3)));
            }
        }
    }

    void visit(std::uint32_t node, task_group& root, run_counts& runs) const {
        runs.ran(node);
        rng r(seed ^ (std::uint64_t{node} * 0x632be59bd9b4e019ULL));
        task_test::random_pause(r);
        const auto& kids = children[node];
        if (kids.empty()) return;
        switch (mode[node]) {
        case 0:
            for (const std::uint32_t c : kids) root.run([this, c, &root, &runs] { visit(c, root, runs); });
            break;
        case 1: {
            task_group mine;
            for (const std::uint32_t c : kids) mine.run([this, c, &root, &runs] { visit(c, root, runs); });
            task_test::random_pause(r);
            mine.wait();
            break;
        }
        default: {
            task_group mine;  // its destructor waits
            for (const std::uint32_t c : kids) mine.run([this, c, &root, &runs] { visit(c, root, runs); });
            break;
        }
        }
    }
};

class TaskGroupInterleavings : public ::testing::TestWithParam<int> {};

TEST_P(TaskGroupInterleavings, EveryTaskRunsExactlyOnce) {
    const random_tree tree(static_cast<std::uint64_t>(GetParam()), static_cast<std::size_t>(scaled(4000, 1000)));
    run_counts runs(tree.children.size());
    task_group root;
    root.run([&] { tree.visit(0, root, runs); });
    root.wait();
    EXPECT_EQ(runs.exactly_once(), "") << "seed " << GetParam() << ", " << tree.children.size() << " tasks";
}

INSTANTIATE_TEST_SUITE_P(Seeds, TaskGroupInterleavings, ::testing::Range(1, 7));

TEST(TaskGroup, FirstExceptionIsRethrownAndTheOthersStillRun) {
    constexpr int n = 200;
    run_counts runs(n);
    task_group g;
    for (int i = 0; i < n; ++i)
        g.run([i, &runs] {
            runs.ran(static_cast<std::size_t>(i));
            if (i % 10 == 3) throw std::runtime_error("task " + std::to_string(i));
        });
    try {
        g.wait();
        ADD_FAILURE() << "wait() did not rethrow";
    } catch (const std::runtime_error& e) {
        const std::string what = e.what();
        EXPECT_EQ(what.rfind("task ", 0), 0u) << what;
        EXPECT_EQ(std::stoi(what.substr(5)) % 10, 3) << what;
    }
    EXPECT_EQ(runs.exactly_once(), "");
    EXPECT_EQ(g.pending(), 0u);

    // Reusable: a clean round waits without throwing, and a later failure is reported again.
    std::atomic<int> more{0};
    for (int i = 0; i < 50; ++i) g.run([&more] { more.fetch_add(1); });
    EXPECT_NO_THROW(g.wait());
    EXPECT_EQ(more.load(), 50);

    g.run([] { throw std::logic_error("second round"); });
    g.run([&more] { more.fetch_add(1); });
    try {
        g.wait();
        ADD_FAILURE() << "wait() did not rethrow the second round's exception";
    } catch (const std::logic_error& e) {
        EXPECT_STREQ(e.what(), "second round");
    }
    EXPECT_EQ(more.load(), 51);
    EXPECT_NO_THROW(g.wait());
}

TEST(TaskGroup, NonStandardExceptionTravelsToo) {
    task_group g;
    g.run([] { throw 42; });
    try {
        g.wait();
        ADD_FAILURE() << "wait() did not rethrow";
    } catch (int v) {
        EXPECT_EQ(v, 42);
    }
}

TEST(TaskGroup, DestructorWaitsForPendingTasks) {
    constexpr int n = 500;
    run_counts runs(n);
    std::atomic<int> finished{0};
    {
        task_group g;
        for (int i = 0; i < n; ++i)
            g.run([i, &runs, &finished] {
                runs.ran(static_cast<std::size_t>(i));
                task_test::spin_ns(2000);
                finished.fetch_add(1);
            });
        // No wait(): the destructor waits.
    }
    EXPECT_EQ(finished.load(), n);
    EXPECT_EQ(runs.exactly_once(), "");

    // With a failure among them: the destructor drops the exception (no terminate).
    std::atomic<int> ran{0};
    {
        task_group g;
        for (int i = 0; i < 100; ++i)
            g.run([i, &ran] {
                ran.fetch_add(1);
                if (i == 7) throw std::runtime_error("dropped");
            });
    }
    EXPECT_EQ(ran.load(), 100);
}

TEST(TaskGroup, SpawnsFromAThreadOutsideTheTeam) {
    touch_scheduler();  // the main thread holds slot 0: the thread below has none
    const auto n = static_cast<std::size_t>(scaled(5'000, 1'000));
    run_counts runs(n);
    std::thread outside([&] {
        task_group g;
        for (std::size_t i = 0; i < n; ++i)
            g.run([i, &runs] {
                runs.ran(i);
                if (i % 64 == 0) task_test::spin_ns(5000);
            });
        g.wait();
    });
    outside.join();
    EXPECT_EQ(runs.exactly_once(), "");
}

TEST(TaskGroup, SpawnsFromSeveralOutsideThreadsAtOnce) {
    touch_scheduler();
    constexpr int threads = 4;
    const auto per_thread = static_cast<std::size_t>(scaled(2'000, 400));
    run_counts own(threads * per_thread), shared(threads * per_thread);
    task_group common;  // every thread spawns into it too; the main thread waits for it
    std::atomic<int> ready{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            ready.fetch_add(1);
            while (ready.load() < threads) std::this_thread::yield();
            task_group mine;
            for (std::size_t i = 0; i < per_thread; ++i) {
                const std::size_t id = static_cast<std::size_t>(t) * per_thread + i;
                // Nested: the task spawns from wherever it runs (a worker, this thread, another).
                mine.run([id, &own, &mine] {
                    if (id % 8 == 0) mine.run([id, &own] { own.ran(id + 1); });
                    if (id % 8 != 1) own.ran(id);
                });
                common.run([id, &shared] { shared.ran(id); });
            }
            mine.wait();
        });
    for (auto& t : pool) t.join();
    common.wait();
    EXPECT_EQ(own.exactly_once(), "");
    EXPECT_EQ(shared.exactly_once(), "");
}

TEST(TaskGroup, TaskCallsParallelFor) {
    constexpr int tasks = 8;
    constexpr std::int64_t n = 3000;
    std::vector<std::unique_ptr<run_counts>> iterations;
    for (int t = 0; t < tasks; ++t) iterations.push_back(std::make_unique<run_counts>(static_cast<std::size_t>(n)));
    std::vector<std::int64_t> sums(tasks, 0);
    task_group g;
    for (int t = 0; t < tasks; ++t)
        g.run([t, &iterations, &sums] {
            std::atomic<std::int64_t> sum{0};
            aloe::parallel_for(0, n, "dynamic,chunk=16", [&](std::int64_t i) {
                iterations[static_cast<std::size_t>(t)]->ran(static_cast<std::size_t>(i));
                sum.fetch_add(i, std::memory_order_relaxed);
            });
            sums[static_cast<std::size_t>(t)] = sum.load();
        });
    g.wait();
    for (int t = 0; t < tasks; ++t) {
        EXPECT_EQ(sums[static_cast<std::size_t>(t)], n * (n - 1) / 2) << "task " << t;
        EXPECT_EQ(iterations[static_cast<std::size_t>(t)]->exactly_once(), "") << "task " << t;
    }
}

TEST(TaskGroup, ParallelForBodySpawnsTasksAndWaits) {
    constexpr std::int64_t n = 64;
    static constexpr int per_iteration = 16;
    run_counts runs(static_cast<std::size_t>(n * per_iteration));
    std::vector<std::int64_t> sums(static_cast<std::size_t>(n), -1);
    aloe::parallel_for(0, n, "dynamic,chunk=1", [&](std::int64_t i) {
        std::atomic<std::int64_t> sum{0};
        task_group g;
        for (int j = 0; j < per_iteration; ++j)
            g.run([i, j, &runs, &sum] {
                runs.ran(static_cast<std::size_t>(i * per_iteration + j));
                task_test::spin_ns(1000);
                sum.fetch_add(j);
            });
        g.wait();
        sums[static_cast<std::size_t>(i)] = sum.load();
    });
    EXPECT_EQ(runs.exactly_once(), "");
    for (std::int64_t i = 0; i < n; ++i)
        EXPECT_EQ(sums[static_cast<std::size_t>(i)], per_iteration * (per_iteration - 1) / 2) << i;

    // Three levels: a task, its parallel_for, the body's tasks (each again a parallel_for).
    std::atomic<std::int64_t> total{0};
    task_group outer;
    for (int t = 0; t < 4; ++t)
        outer.run([&total] {
            aloe::parallel_for(0, 8, "dynamic,chunk=1", [&total](std::int64_t) {
                task_group g;
                for (int j = 0; j < 4; ++j)
                    g.run([&total] {
                        aloe::parallel_for(0, 10, "static", [&total](std::int64_t k) { total.fetch_add(k); });
                    });
                g.wait();
            });
        });
    outer.wait();
    EXPECT_EQ(total.load(), 4 * 8 * 4 * 45);
}

// The main thread starts a loop (a fork of the whole team) while workers are busy with its
// tasks: the fork waits for them to come back between tasks; then the tasks still finish.
TEST(TaskGroup, ParallelForWhileTasksAreInFlight) {
    const auto n = static_cast<std::size_t>(scaled(2'000, 500));
    run_counts runs(n);
    std::atomic<std::int64_t> loop_sum{0};
    task_group g;
    for (std::size_t i = 0; i < n; ++i)
        g.run([i, &runs] {
            task_test::spin_ns(5'000);
            runs.ran(i);
        });
    for (int round = 0; round < 5; ++round)
        aloe::parallel_for(0, 1000, "dynamic,chunk=8", [&](std::int64_t k) { loop_sum.fetch_add(k); });
    g.wait();
    EXPECT_EQ(loop_sum.load(), 5 * 999 * 1000 / 2);
    EXPECT_EQ(runs.exactly_once(), "");
}

// A chain of nested spawns, each waiting for its child: far deeper than one thread's stack
// holds task frames. The scheduler stops running tasks on a thread whose stack runs low, so
// the chain goes on on other threads; the test's own frames are small (noinline, no locals
// but the group). Shorter under the sanitizers: ThreadSanitizer records the whole call stack
// at each new synchronisation object, so its cost grows with the square of the depth (20,000
// levels take 20 s there); the small-stack test below still reaches the guard.
constexpr int chain_length = static_cast<int>(scaled(20'000, 3'000));

[[gnu::noinline]] void chain_level(int left, std::atomic<int>& deepest) {
    if (left == 0) return;
    deepest.fetch_add(1, std::memory_order_relaxed);
    task_group g;
    g.run([left, &deepest] { chain_level(left - 1, deepest); });
    g.wait();
}

TEST(TaskGroup, DeepChainOfNestedWaitsDoesNotOverflowTheStack) {
    std::atomic<int> levels{0};
    chain_level(chain_length, levels);
    EXPECT_EQ(levels.load(), chain_length);
}

[[gnu::noinline]] std::uint64_t chain_future(int left) {
    if (left == 0) return 0;
    return aloe::async([left] { return chain_future(left - 1); }).get() + 1;
}

TEST(TaskGroup, DeepChainOfNestedFuturesDoesNotOverflowTheStack) {
    EXPECT_EQ(chain_future(chain_length), static_cast<std::uint64_t>(chain_length));
}

// The same chain started on a thread with a 512 KiB stack (about 1,300 of the chain's levels
// in a release build): without the guard it would overflow; with it, that thread stops
// running tasks 128 KiB above its stack's end and the team's workers carry the chain on, or
// with no worker (TeamOfOne.*: the main thread here only joins) a relief thread does.
TEST(TaskGroup, DeepChainFromASmallStackThread) {
    struct run {
        std::atomic<int> levels{0};
        static void* main(void* self) {
            chain_level(chain_length, static_cast<run*>(self)->levels);
            return nullptr;
        }
    } r;
    pthread_attr_t attr;
    ASSERT_EQ(pthread_attr_init(&attr), 0);
    ASSERT_EQ(pthread_attr_setstacksize(&attr, 512 * 1024), 0);
    pthread_t thread;
    ASSERT_EQ(pthread_create(&thread, &attr, &run::main, &r), 0);
    pthread_attr_destroy(&attr);
    ASSERT_EQ(pthread_join(thread, nullptr), 0);
    EXPECT_EQ(r.levels.load(), chain_length);
}

// A chain deeper than every thread's stack: each runner that reaches its floor with the
// chain's next task queued starts a relief thread, which carries the chain on (with one
// worker, before relief threads, a 20,000-level chain waited forever).
TEST(TaskGroup, ChainDeeperThanEveryThreadsStackFinishes) {
#if defined(__SANITIZE_THREAD__)
    // A thread started from 8 MiB of nested waits has a creation stack of over 65,536 frames,
    // which TSan cannot record (a CHECK in its stack depot). Under TSan, relief threads are
    // covered by TeamOfOne.TaskGroup.DeepChainFromASmallStackThread.
    GTEST_SKIP() << "TSan cannot record the creation stack of a thread started this deep";
#endif
    const int length = static_cast<int>(scaled(120'000, 40'000));
    std::atomic<int> levels{0};
    chain_level(length, levels);
    EXPECT_EQ(levels.load(), length);
}

// Relief threads have a stack of their own size, not the process's default (`ulimit -s`):
// with a default of 256 KiB, 64 relief threads carried about 27,000 levels more than the team,
// and a longer chain waited forever (W019; under `ulimit -s 1024`, 300,000 levels did).
TEST(TaskGroup, ReliefThreadsDoNotTakeTheProcessDefaultStack) {
#if defined(__SANITIZE_THREAD__)
    GTEST_SKIP() << "TSan cannot record the creation stack of a thread started this deep (see above)";
#endif
    pthread_attr_t before;
    ASSERT_EQ(pthread_getattr_default_np(&before), 0);
    pthread_attr_t small;
    ASSERT_EQ(pthread_attr_init(&small), 0);
    ASSERT_EQ(pthread_attr_setstacksize(&small, 256 * 1024), 0);
    ASSERT_EQ(pthread_setattr_default_np(&small), 0);
    const int length = static_cast<int>(scaled(200'000, 60'000));
    std::atomic<int> levels{0};
    chain_level(length, levels);
    EXPECT_EQ(pthread_setattr_default_np(&before), 0);
    pthread_attr_destroy(&small);
    pthread_attr_destroy(&before);
    EXPECT_EQ(levels.load(), length);
}

// A flood from one thread: past 256 queued on its deque, a spawn runs the task at once on
// the spawning thread, so the group never holds more than 256 queued there plus, on each
// worker, a stolen batch of 8 (one running, the rest on its own deque); each task still runs
// once.
TEST(TaskGroup, AFloodFromOneThreadHoldsAtMost256Queued) {
    const auto n = static_cast<std::size_t>(scaled(20'000, 4'000));
    const auto team = static_cast<std::size_t>(task_concurrency());
    run_counts runs(n);
    std::size_t most_pending = 0;
    task_group g;
    for (std::size_t i = 0; i < n; ++i) {
        g.run([i, &runs] { runs.ran(i); });
        most_pending = std::max(most_pending, g.pending());
    }
    EXPECT_LE(most_pending, 256 + (team - 1) * 8) << "queued on this thread's deque, plus a stolen batch per worker";
    g.wait();
    EXPECT_EQ(runs.exactly_once(), "");
}

// 4 KiB a link: the stack's floor comes after a few thousand frames (TSan cannot record a
// stack of more than 65,536).
[[gnu::noinline]] void spawn_chain(task_group& g, int left, std::atomic<int>& ran) {
    volatile char frame[4096];
    const auto at = static_cast<unsigned>(left) % sizeof frame;
    frame[at] = 1;
    ran.fetch_add(frame[at], std::memory_order_relaxed);
    if (left > 0) g.run([&g, left, &ran] { spawn_chain(g, left - 1, ran); });
}

// With the deque full (workers kept out: concurrency 1), each spawn runs the oldest queued
// task at once, one frame deeper; here every queued task is a link of a chain that spawns
// the next, so each run at once spawns again and the nesting only grows: far deeper than the
// stack, it must stop running at once at the stack's floor (then it queues) rather than
// overflow.
TEST(TaskGroup, SpawnsRunAtOnceOnlyWhileTheStackHasRoom) {
    const int chains = 257;  // the deque's bound, and one more spawn that starts the nesting
    const int length = static_cast<int>(scaled(20'000, 6'000)) / chains;  // 80 (24) MiB of frames in all
    set_task_concurrency(1);
    std::atomic<int> ran{0};
    {
        task_group g;
        for (int i = 0; i < chains; ++i) g.run([&g, length, &ran] { spawn_chain(g, length, ran); });
        g.wait();
    }
    set_task_concurrency(0);
    EXPECT_EQ(ran.load(), chains * (length + 1));
}

// Past the bound the oldest queued task runs, the new one queued in its place: a thread that
// floods (and runs queued tasks only when it waits) runs them in the order it spawned them,
// 256 spawns behind, instead of leaving the first 256 queued until it waits. A worker of an
// earlier test still in its loop may steal one or two before it sees the limit (the spawner
// then runs the new task instead, once per theft): a few exceptions are allowed.
TEST(TaskGroup, PastTheBoundTheOldestQueuedRunsFirst) {
    constexpr std::size_t n = 1000, bound = 256, allowed = 8;
    set_task_concurrency(1);  // no worker joins: this thread runs them
    const std::thread::id me = std::this_thread::get_id();
    run_counts runs(n);
    std::vector<std::size_t> here;  // what this thread ran while spawning, in order
    {
        task_group g;
        for (std::size_t i = 0; i < n; ++i)
            g.run([i, me, &runs, &here] {
                if (std::this_thread::get_id() == me) here.push_back(i);
                runs.ran(i);
            });
        std::size_t still_queued = 0;
        for (std::size_t i = 0; i < n - bound; ++i) still_queued += runs.counts[i].load() == 0;
        EXPECT_LE(still_queued, allowed) << "of the first " << n - bound << " tasks, queued when the last was spawned";
        EXPECT_GE(here.size(), n - bound - allowed);
        std::size_t out_of_order = 0;
        for (std::size_t k = 1; k < here.size(); ++k) out_of_order += here[k] < here[k - 1];
        EXPECT_LE(out_of_order, allowed) << "oldest first";
        g.wait();
    }
    set_task_concurrency(0);
    EXPECT_EQ(runs.exactly_once(), "");
}

// A task that spawns while the pool's other thread sleeps wakes it: the spawner is itself a
// waiter (inside a task the program's wait runs), so counting waiters instead of sleeping
// ones left the other thread asleep until its 20 ms re-check, and a task's parallel phase
// ran serially. The re-check is set to an hour here, so only the spawn's wake-up can start
// the spawned task on the other thread while the spawner does not help.
TEST(TaskGroup, ASpawnInsideATaskWakesTheOtherSleepingThread) {
    task::task_pool& pool = task::task_pool::process();
    ASSERT_GE(task_concurrency(), 2) << "the suite runs with 4 threads (CMakeLists.txt)";
    set_task_concurrency(2);  // the waiting thread and worker 1: one of them runs the task
    const long recheck = pool.set_idle_recheck_ns(3'600'000'000'000L);
    bool other_slept = false;
    bool spawned_ran = false;
    std::atomic<bool> ran{false};
    task_group g;
    g.run([&] {
        other_slept = task_test::eventually([&] { return pool.sleeping_runners() >= 1; }, 60);
        task_group inner;
        inner.run([&] { ran.store(true); });
        spawned_ran = task_test::eventually([&] { return ran.load(); }, 60);  // not helping meanwhile
        inner.wait();
    });
    g.wait();
    pool.set_idle_recheck_ns(recheck);
    set_task_concurrency(0);
    EXPECT_TRUE(other_slept) << "the other thread never slept in the scheduling loop";
    EXPECT_TRUE(spawned_ran) << "the sleeping thread was not woken for the spawned task";
}

TEST(TaskGroup, ConcurrencyLimitThenBack) {
    const int team = task_concurrency();  // the team's size: 4 in the suite (CMakeLists.txt)
    const int n = static_cast<int>(scaled(20, 16));
    for (const int k : {1, 2}) {
        if (k > team) continue;
        set_task_concurrency(k);
        EXPECT_EQ(task_concurrency(), k);
        // Workers leave the scheduling loop once nothing is outstanding; give them the time
        // to. One that a loaded machine held up between its look at the limit and its look
        // for a task may still take that one task, never more.
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
        std::mutex m;
        std::map<std::thread::id, int> who;
        task_group g;
        for (int i = 0; i < 200; ++i)
            g.run([&] {
                task_test::spin_ns(20'000);
                std::lock_guard lock(m);
                ++who[std::this_thread::get_id()];
            });
        g.wait();
        EXPECT_EQ(fib_group(n), fib_serial(n)) << "k " << k;
        int busy_threads = 0;
        for (const auto& [id, tasks] : who) busy_threads += tasks > 1;
        EXPECT_LE(busy_threads, k) << "k " << k << ": threads that ran more than one task";
        if (k == 1) {
            EXPECT_GE(who[std::this_thread::get_id()], 200 - (team - 1)) << "k 1: the waiting thread runs them";
        }
    }
    set_task_concurrency(0);
    EXPECT_EQ(task_concurrency(), team);
    set_task_concurrency(1000);
    EXPECT_EQ(task_concurrency(), team) << "clamped to the team";
    set_task_concurrency(-1);
    EXPECT_EQ(task_concurrency(), team);
    EXPECT_EQ(fib_group(n), fib_serial(n));
    run_counts runs(10'000);
    task_group g;
    for (std::size_t i = 0; i < 10'000; ++i) g.run([i, &runs] { runs.ran(i); });
    g.wait();
    EXPECT_EQ(runs.exactly_once(), "");
}

}  // namespace
}  // namespace aloe

// The task pool follows the node's share of threads (runtime/thread_share.hpp): a source
// that answers 1 keeps every task on the thread that waits; removed, the team runs them
// again; a share never raises the program's own limit (set_task_concurrency).
#include "runtime/thread_share.hpp"

#include <aloe/parallel_for.hpp>
#include <aloe/task.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <future>
#include <mutex>
#include <set>
#include <thread>

namespace aloe {
namespace {

std::atomic<unsigned> answer{1};
std::atomic<unsigned> asked_own{0};
std::atomic<int> asked{0};

unsigned fake_share(unsigned own) noexcept {
    asked_own.store(own);
    asked.fetch_add(1);
    return answer.load();
}

// Runs n tasks from this thread and waits; returns the threads that ran them.
std::set<std::thread::id> run_tasks(int n) {
    std::mutex m;
    std::set<std::thread::id> ran_on;
    task_group g;
    for (int i = 0; i < n; ++i)
        g.run([&] {
            volatile double x = 0;
            for (int k = 0; k < 2000; ++k) x = x + 1e-9;
            std::lock_guard lock(m);
            ran_on.insert(std::this_thread::get_id());
        });
    g.wait();
    return ran_on;
}

// A wait that surely reaches the scheduler: its one task ends only once the source was
// asked (a group already finished when wait() is called never asks), or after 10 s.
void wait_until_asked() {
    const int before = asked.load();
    task_group g;
    g.run([before] {
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (asked.load() == before && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
    });
    g.wait();
}

class TaskNodeShare : public ::testing::Test {
protected:
    void TearDown() override {
        runtime::set_thread_share_source(nullptr);
        set_task_concurrency(0);
        // Waits that reach the scheduler with no source put the pool back to its own count.
        for (int i = 0; i < 20; ++i) run_tasks(64);
    }
};

TEST_F(TaskNodeShare, AShareOfOneKeepsTasksOnTheWaitingThread) {
    const int team = task_concurrency();
    if (team < 2) GTEST_SKIP() << "a team of one has no worker a share could stop (CTest runs this suite with ALOE_NUM_THREADS=4)";
    answer.store(1);
    asked.store(0);
    runtime::set_thread_share_source(&fake_share);
    wait_until_asked();  // the first wait applies the share
    EXPECT_GT(asked.load(), 0) << "a waiting thread asks the source";
    EXPECT_EQ(asked_own.load(), static_cast<unsigned>(team)) << "it asks with the pool's own count";
    EXPECT_EQ(task_concurrency(), 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // workers leave their loop
    const auto ran_on = run_tasks(500);
    EXPECT_EQ(ran_on, std::set<std::thread::id>{std::this_thread::get_id()}) << "no worker ran a task";

    // Without a source: the next wait that reaches the scheduler restores the own count.
    runtime::set_thread_share_source(nullptr);
    for (int i = 0; i < 100 && task_concurrency() != team; ++i) run_tasks(64);
    EXPECT_EQ(task_concurrency(), team) << "without a source the pool runs its own count again";
}

TEST_F(TaskNodeShare, AShareNeverRaisesTheProgramsOwnLimit) {
    const int team = task_concurrency();
    if (team < 2) GTEST_SKIP() << "a team of one has no limit between one and its size (CTest runs this suite with ALOE_NUM_THREADS=4)";
    set_task_concurrency(2);
    answer.store(64);  // more than the pool has: clamped to its own count
    runtime::set_thread_share_source(&fake_share);
    wait_until_asked();
    EXPECT_EQ(task_concurrency(), 2);
    answer.store(1);
    wait_until_asked();
    EXPECT_EQ(task_concurrency(), 1) << "the lower of the two";
    set_task_concurrency(0);
    EXPECT_EQ(task_concurrency(), 1) << "lifting the program's limit leaves the node's";
    answer.store(3);
    wait_until_asked();
    EXPECT_EQ(task_concurrency(), std::min(team, 3));
}

// A worker that waits for its own tasks inside a loop body runs them when the share drops
// below its slot: nobody else would (this hung for good before, found in review).
TEST_F(TaskNodeShare, AWorkerWaitingInALoopBodyRunsItsOwnTasksUnderAShareOfOne) {
    answer.store(1);
    runtime::set_thread_share_source(&fake_share);
    wait_until_asked();
    ASSERT_EQ(task_concurrency(), 1);
    auto done = std::async(std::launch::async, [] {
        std::atomic<int> ran{0};
        aloe::parallel_for(0, 64, [&](std::int64_t) {
            task_group g;
            for (int i = 0; i < 8; ++i) g.run([&] { ran.fetch_add(1); });
            g.wait();
        });
        return ran.load();
    });
    if (done.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
        ADD_FAILURE() << "a loop body's task_group::wait hangs under a share of 1";
        std::_Exit(1);  // the hung threads cannot be joined
    }
    EXPECT_EQ(done.get(), 64 * 8);
}

TEST(RuntimeThreadShare, ClampedBetweenOneAndOwn) {
    answer.store(0);
    runtime::set_thread_share_source(&fake_share);
    EXPECT_EQ(runtime::thread_share(4), 1u);
    answer.store(9);
    EXPECT_EQ(runtime::thread_share(4), 4u);
    answer.store(3);
    EXPECT_EQ(runtime::thread_share(4), 3u);
    runtime::set_thread_share_source(nullptr);
    EXPECT_EQ(runtime::thread_share(4), 4u);
}

}  // namespace
}  // namespace aloe

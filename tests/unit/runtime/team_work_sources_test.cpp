// The worker loop's work: a fork/join job on k of the p workers, nested loops on the workers
// idle at the time, and the work sources an upper layer plugs in (team.hpp).
#include "runtime/team.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace aloe::runtime {
namespace {

config with_policy(wait_policy_kind kind) {
    config cfg;
    cfg.wait_policy = kind;
    cfg.spin_us = 20;
    return cfg;
}

struct participants_job {
    std::vector<std::atomic<int>> ran;
    std::vector<std::thread::id> who;
    explicit participants_job(int n) : ran(static_cast<std::size_t>(n)), who(static_cast<std::size_t>(n)) {}
    static void run(void* p, int i) noexcept {
        auto& self = *static_cast<participants_job*>(p);
        self.ran[static_cast<std::size_t>(i)].fetch_add(1);
        self.who[static_cast<std::size_t>(i)] = std::this_thread::get_id();
    }
};

class RuntimeTeamWork : public ::testing::TestWithParam<wait_policy_kind> {};

TEST_P(RuntimeTeamWork, RunOnKWorkersLeavesTheOthersIdle) {
    worker_team team(4, with_policy(GetParam()));
    ASSERT_TRUE(team.try_acquire());
    for (int k = 1; k <= 4; ++k) {
        participants_job job(4);
        for (int r = 0; r < 50; ++r) team.run(&participants_job::run, &job, k);
        for (int i = 0; i < 4; ++i)
            EXPECT_EQ(job.ran[static_cast<std::size_t>(i)].load(), i < k ? 50 : 0) << "k " << k << " participant " << i;
        EXPECT_EQ(job.who[0], std::this_thread::get_id()) << "participant 0 is the holder";
    }
    // Out-of-range counts are clamped: 0 runs the holder alone, 9 runs all four.
    participants_job low(4), high(4);
    team.run(&participants_job::run, &low, 0);
    team.run(&participants_job::run, &high, 9);
    EXPECT_EQ(low.ran[0].load() + low.ran[1].load() + low.ran[2].load() + low.ran[3].load(), 1);
    EXPECT_EQ(high.ran[3].load(), 1);
    team.release();
}

// A nested loop from inside a job: the workers idle at that moment (here: those a 1-of-4
// fork leaves out) run its shares; inside a full fork none is idle and it gets none.
struct nesting_job {
    worker_team* team;
    std::atomic<int> helpers_got{-1};
    std::atomic<int> nested_ran{0};
    static void inner(void* p, int) noexcept { static_cast<nesting_job*>(p)->nested_ran.fetch_add(1); }
    static void outer(void* p, int i) noexcept {
        auto& self = *static_cast<nesting_job*>(p);
        if (i != 0) return;
        EXPECT_TRUE(self.team->in_job_of_this());
        EXPECT_FALSE(self.team->try_acquire()) << "a thread inside a job never takes a team";
        worker_team::claimed got;
        const int n = self.team->claim_idle(8, got);
        self.helpers_got = n;
        self.team->run_claimed(&inner, &self, got);
    }
};

TEST_P(RuntimeTeamWork, NestedLoopsRunOnTheIdleWorkers) {
    worker_team team(4, with_policy(GetParam()));
    ASSERT_TRUE(team.try_acquire());
    for (int r = 0; r < 20; ++r) {
        nesting_job job{&team};
        team.run(&nesting_job::outer, &job, 1);
        EXPECT_EQ(job.helpers_got.load(), 3) << "round " << r;
        EXPECT_EQ(job.nested_ran.load(), 4);
    }
    team.release();
}

TEST_P(RuntimeTeamWork, UnclaimedWorkersServeTheNextFork) {
    worker_team team(3, with_policy(GetParam()));
    ASSERT_TRUE(team.try_acquire());
    struct job_t {
        worker_team* team;
        static void outer(void* p, int i) noexcept {
            if (i != 0) return;
            auto& t = *static_cast<job_t*>(p)->team;
            worker_team::claimed got;
            EXPECT_EQ(t.claim_idle(2, got), 2);
            t.unclaim(got, 0);  // planned on the caller alone: both go back
            t.run_claimed([](void*, int) noexcept {}, nullptr, got);
        }
    } j{&team};
    team.run(&job_t::outer, &j, 1);
    participants_job all(3);
    team.run(&participants_job::run, &all, 3);  // would wait for ever on a worker left claimed
    EXPECT_EQ(all.ran[1].load() + all.ran[2].load(), 2);
    team.release();
}

// A work source: idle workers drain it after notify_work.
struct counting_source {
    std::atomic<int> left{0};
    std::atomic<int> done{0};
    std::atomic<int> by_workers{0};
    static bool poll(void* p, int worker) noexcept {
        auto& self = *static_cast<counting_source*>(p);
        int n = self.left.load();
        while (n > 0 && !self.left.compare_exchange_weak(n, n - 1)) {}
        if (n <= 0) return false;
        // by_workers before done: the test reads it once done reaches the total.
        if (worker >= 1) self.by_workers.fetch_add(1);
        self.done.fetch_add(1);
        return true;
    }
};

TEST_P(RuntimeTeamWork, IdleWorkersDrainTheWorkSources) {
    worker_team team(3, with_policy(GetParam()));
    counting_source src;
    ASSERT_TRUE(team.add_work_source({&counting_source::poll, &src}));
    ASSERT_FALSE(team.add_work_source({nullptr, nullptr})) << "a source without poll is refused";
    src.left = 1000;
    EXPECT_GE(team.notify_work(2), 1);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (src.done.load() < 1000 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    EXPECT_EQ(src.done.load(), 1000);
    EXPECT_EQ(src.by_workers.load(), 1000) << "only workers polled";
    // The team still forks and joins afterwards (a draining worker is waited for).
    ASSERT_TRUE(team.try_acquire());
    participants_job all(3);
    team.run(&participants_job::run, &all);
    EXPECT_EQ(all.ran[2].load(), 1);
    team.release();
}

INSTANTIATE_TEST_SUITE_P(Policies, RuntimeTeamWork,
                         ::testing::Values(wait_policy_kind::active, wait_policy_kind::hybrid, wait_policy_kind::passive));

}  // namespace
}  // namespace aloe::runtime

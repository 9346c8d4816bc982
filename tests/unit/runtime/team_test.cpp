// The worker team's fork/join protocol under every wait policy.
#include "runtime/team.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace aloe::runtime {
namespace {

config with_policy(wait_policy_kind kind, std::int64_t spin_us = 50) {
    config cfg;
    cfg.wait_policy = kind;
    cfg.spin_us = spin_us;
    return cfg;
}

struct count_job {
    std::vector<std::atomic<int>> ran;
    std::atomic<int> inside_job{0};
    explicit count_job(int n) : ran(static_cast<std::size_t>(n)) {}
    static void run(void* p, int worker) noexcept {
        auto& self = *static_cast<count_job*>(p);
        self.ran[static_cast<std::size_t>(worker)].fetch_add(1);
        if (worker_team::in_job()) self.inside_job.fetch_add(1);
    }
};

class RuntimeTeam : public ::testing::TestWithParam<wait_policy_kind> {};

TEST_P(RuntimeTeam, EveryWorkerRunsEveryJobOnce) {
    for (int size : {1, 2, 3, 5}) {
        worker_team team(size, with_policy(GetParam()));
        ASSERT_TRUE(team.try_acquire());
        count_job job(size);
        constexpr int rounds = 300;
        for (int r = 0; r < rounds; ++r) team.run(&count_job::run, &job);
        team.release();
        for (int w = 0; w < size; ++w) EXPECT_EQ(job.ran[static_cast<std::size_t>(w)].load(), rounds) << "worker " << w;
        EXPECT_EQ(job.inside_job.load(), rounds * size);
    }
}

TEST_P(RuntimeTeam, WorkersThatFellAsleepWakeForTheNextJob) {
    // A zero spin phase sends waiters to the futex almost at once; the sleep between jobs
    // makes sure they are asleep when the fork comes.
    worker_team team(3, with_policy(GetParam(), 0));
    ASSERT_TRUE(team.try_acquire());
    count_job job(3);
    for (int r = 0; r < 5; ++r) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        team.run(&count_job::run, &job);
    }
    team.release();
    for (int w = 0; w < 3; ++w) EXPECT_EQ(job.ran[static_cast<std::size_t>(w)].load(), 5);
}

INSTANTIATE_TEST_SUITE_P(AllPolicies, RuntimeTeam,
                         ::testing::Values(wait_policy_kind::active, wait_policy_kind::passive, wait_policy_kind::hybrid),
                         [](const ::testing::TestParamInfo<wait_policy_kind>& param_info) { return std::string(to_string(param_info.param)); });

TEST(RuntimeTeamHolding, OnlyOneHolderAtATime) {
    worker_team team(2, with_policy(wait_policy_kind::hybrid));
    ASSERT_TRUE(team.try_acquire());
    EXPECT_FALSE(team.try_acquire());
    bool other_thread_got_it = true;
    std::thread([&] { other_thread_got_it = team.try_acquire(); }).join();
    EXPECT_FALSE(other_thread_got_it);
    team.release();
    EXPECT_TRUE(team.try_acquire());
    team.release();
}

TEST(RuntimeTeamHolding, NoTeamCanBeTakenFromInsideAJob) {
    worker_team outer(2, with_policy(wait_policy_kind::hybrid));
    worker_team inner(2, with_policy(wait_policy_kind::hybrid));
    struct ctx_t {
        worker_team* inner;
        std::atomic<int> acquired{0};
    } ctx{&inner};
    ASSERT_TRUE(outer.try_acquire());
    outer.run(
        [](void* p, int) noexcept {
            auto& c = *static_cast<ctx_t*>(p);
            if (c.inner->try_acquire()) {
                c.acquired.fetch_add(1);
                c.inner->release();
            }
        },
        &ctx);
    outer.release();
    EXPECT_EQ(ctx.acquired.load(), 0);
    EXPECT_FALSE(worker_team::in_job());
}

TEST(RuntimeTeamHolding, OversubscribedTeamsFinish) {
    // 4× the cores of this machine, passive and hybrid: must complete, not spin forever.
    const int size = 4 * static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    for (auto kind : {wait_policy_kind::hybrid, wait_policy_kind::active}) {
        worker_team team(size, with_policy(kind));
        ASSERT_TRUE(team.try_acquire());
        count_job job(size);
        for (int r = 0; r < 20; ++r) team.run(&count_job::run, &job);
        team.release();
        for (int w = 0; w < size; ++w) EXPECT_EQ(job.ran[static_cast<std::size_t>(w)].load(), 20);
    }
}

TEST(RuntimeTeamFork, ATeamFromBeforeTheForkIsNotUsableInTheChild) {
    // The child checks what it can without starting threads (the process tests in
    // tests/process/fork_test.cpp run loops there); alarm() turns a block into a failure.
    worker_team team(3, with_policy(wait_policy_kind::hybrid));
    ASSERT_TRUE(team.usable());
    const std::uint32_t parent_generation = fork_generation();
    std::fflush(nullptr);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        alarm(20);
        int code = 0;
        if (fork_generation() != parent_generation + 1) code |= 1;
        if (team.usable()) code |= 2;
        if (team.try_acquire()) code |= 4;  // its workers are not here: serial, never held
        _exit(code);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status)) << "signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    EXPECT_EQ(WEXITSTATUS(status), 0) << "bits: 1 generation, 2 usable, 4 acquired";
    EXPECT_EQ(fork_generation(), parent_generation) << "the parent's generation does not move";
    EXPECT_TRUE(team.usable());
    ASSERT_TRUE(team.try_acquire());
    count_job job(3);
    team.run(&count_job::run, &job);
    team.release();
    for (int w = 0; w < 3; ++w) EXPECT_EQ(job.ran[static_cast<std::size_t>(w)].load(), 1);
}

TEST(RuntimeWaitSettings, OversubscriptionShortensTheSpin) {
    config cfg = with_policy(wait_policy_kind::hybrid, 100);
    const wait_settings fits = wait_settings::from_config(cfg, 2, 2);
    const wait_settings over = wait_settings::from_config(cfg, 8, 2);
    EXPECT_FALSE(fits.oversubscribed);
    EXPECT_TRUE(over.oversubscribed);
    EXPECT_LT(over.spin_ticks, fits.spin_ticks);
}

}  // namespace
}  // namespace aloe::runtime

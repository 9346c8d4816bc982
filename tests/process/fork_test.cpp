// A process that fork()s while aloe is running (src/runtime/README.md, "After fork()"): the
// child's first loop on the process team starts a fresh team instead of waiting for ever
// for workers it does not have; a team made before the fork runs its loops serially there;
// a fork() inside a loop body, or while other threads hold the team or aloe's locks, leaves
// a child that does not block.
//
// Each check runs in a child under a watchdog: alarm() in the child, and the parent waits
// at most child_limit, then kills it and fails, so a hang is a failure, not a stuck CI.
// Run with ALOE_NUM_THREADS=3 (CMakeLists.txt); registered a second time with
// libaloe-gomp.so preloaded, whose own copy of aloe arms its own fork handlers.
#include "fork_safe_allocator.hpp"

#include <aloe/aloe.hpp>
#include <aloe/task.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <functional>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__SANITIZE_THREAD__)
#define ALOE_FORK_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ALOE_FORK_TEST_TSAN 1
#endif
#endif

namespace {

#if defined(ALOE_FORK_TEST_TSAN)
constexpr bool under_tsan = true;
#else
constexpr bool under_tsan = false;
#endif

constexpr int team_size = 3;  // ALOE_NUM_THREADS of the test
constexpr unsigned child_alarm_s = 20;
constexpr auto child_limit = std::chrono::seconds(30);

// Exit codes a child uses to say what went wrong.
enum child_exit : int { ok = 0, wrong_size = 10, wrong_coverage = 11, not_parallel = 12, wrong_stats = 13 };

struct child_result {
    bool hung = false;
    int status = 0;  // from waitpid
};

// Waits for `pid` at most child_limit; kills it when it is still running then.
child_result wait_for(pid_t pid) {
    const auto deadline = std::chrono::steady_clock::now() + child_limit;
    child_result r;
    for (;;) {
        const pid_t done = waitpid(pid, &r.status, WNOHANG);
        if (done == pid) return r;
        if (std::chrono::steady_clock::now() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &r.status, 0);
            r.hung = true;
            return r;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
}

// fork(); the child runs `body` under an alarm and exits with its result.
child_result in_child(const std::function<int()>& body) {
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid < 0) {
        ADD_FAILURE() << "fork failed";
        return {};
    }
    if (pid == 0) {
        alarm(child_alarm_s);
        _exit(body());
    }
    return wait_for(pid);
}

void expect_exit_ok(const child_result& r) {
    ASSERT_FALSE(r.hung) << "the child was still running after " << child_limit.count() << " s (it blocked)";
    ASSERT_TRUE(WIFEXITED(r.status)) << "the child died of signal " << (WIFSIGNALED(r.status) ? WTERMSIG(r.status) : 0)
                                     << (WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGALRM ? " (its alarm: it blocked)" : "");
    EXPECT_EQ(WEXITSTATUS(r.status), ok);
}

long thread_id() { return static_cast<long>(syscall(SYS_gettid)); }

// Runs `n` iterations on the process team at `site` with a static schedule; checks each ran
// once and that the team's three workers were three threads. Returns a child_exit code.
int parallel_loop_in_child(std::int64_t n, const char* site) {
    aloe::team& t = aloe::team::global();
    if (t.size() != team_size) return wrong_size;
    std::vector<std::atomic<unsigned char>> hits(static_cast<std::size_t>(n));
    std::vector<std::atomic<long>> tid_of_worker(team_size);
    aloe::parallel_for(
        t, 0, n, 1, "static",
        [&](aloe::subrange r, int worker) {
            tid_of_worker[static_cast<std::size_t>(worker)].store(thread_id());
            for (std::int64_t i : r) hits[static_cast<std::size_t>(i)].fetch_add(1);
        },
        aloe::loop_site(site));
    for (const auto& h : hits)
        if (h.load() != 1) return wrong_coverage;
    std::set<long> tids;
    for (const auto& id : tid_of_worker) tids.insert(id.load());
    if (tids.size() != static_cast<std::size_t>(team_size) || tids.count(0) != 0) return not_parallel;
    const auto st = aloe::stats_of(aloe::loop_site(site));
    if (!st || st->invocations != 1 || st->serial_invocations != 0) return wrong_stats;
    return ok;
}

void warm_up_the_team() {
    std::atomic<std::int64_t> sum{0};
    aloe::parallel_for(0, 1000, "dynamic,chunk=8", [&](std::int64_t i) { sum.fetch_add(i); },
                       aloe::loop_site("fork/parent-warm-up"));
    ASSERT_EQ(sum.load(), 999 * 1000 / 2);
}

TEST(ProcessFork, ChildRunsLoopsOnAFreshProcessTeam) {
    warm_up_the_team();
    expect_exit_ok(in_child([] { return parallel_loop_in_child(100'000, "fork/child-loop"); }));
    EXPECT_EQ(parallel_loop_in_child(100'000, "fork/parent-after"), ok) << "the parent's team is untouched";
}

TEST(ProcessFork, GrandchildToo) {
    warm_up_the_team();
    expect_exit_ok(in_child([] {
        if (const int r = parallel_loop_in_child(10'000, "fork/child"); r != ok) return r;
        const child_result grandchild = in_child([] { return parallel_loop_in_child(10'000, "fork/grandchild"); });
        return !grandchild.hung && WIFEXITED(grandchild.status) ? WEXITSTATUS(grandchild.status) : 99;
    }));
}

TEST(ProcessFork, TeamMadeBeforeTheForkRunsSeriallyInTheChild) {
    aloe::team mine(2);
    aloe::parallel_for(mine, 0, 100, "static", [](std::int64_t) {});
    expect_exit_ok(in_child([&mine] {
        std::vector<std::atomic<unsigned char>> hits(5000);
        aloe::parallel_for(mine, 0, 5000, "dynamic,chunk=3", [&](std::int64_t i) { hits[static_cast<std::size_t>(i)].fetch_add(1); },
                           aloe::loop_site("fork/old-team"));
        for (const auto& h : hits)
            if (h.load() != 1) return static_cast<int>(wrong_coverage);
        const auto st = aloe::stats_of(aloe::loop_site("fork/old-team"));
        if (!st || st->serial_invocations != 1 || st->invocations != 0) return static_cast<int>(wrong_stats);
        if (mine.size() != 2) return static_cast<int>(wrong_size);
        return static_cast<int>(ok);
        // `mine` is destroyed by the parent only; a child-side destruction is the next test.
    }));
}

TEST(ProcessFork, DestroyingAnOldTeamInTheChildDoesNotBlock) {
    // glibc gives the new thread a stack (and so a pthread_t) of a thread the parent had;
    // TSan still counts that one as running in the child and stops ("dup thread with used
    // id"): TSan does not support threads after a multithreaded fork. Release and ASan run it.
    if (under_tsan) GTEST_SKIP() << "TSan cannot follow a child that reuses a parent's thread stack";
    auto* mine = new aloe::team(3);
    aloe::parallel_for(*mine, 0, 100, "static", [](std::int64_t) {});
    expect_exit_ok(in_child([mine] {
        delete mine;
        aloe::team fresh(2);  // may reuse the stacks of the threads `mine` had in the parent
        std::atomic<int> ran{0};
        aloe::parallel_for(fresh, 0, 1000, "static", [&](std::int64_t) { ran.fetch_add(1); });
        return ran.load() == 1000 ? static_cast<int>(ok) : static_cast<int>(wrong_coverage);
    }));
    delete mine;
}

// fork() from inside a loop body, on worker `forker` (0: the thread that called
// parallel_for; else one of the team's threads). The child runs loops inside the body
// (they run serially there: it is inside a loop) and on a team of its own, then _exits.
void fork_inside_a_body(int forker) {
    warm_up_the_team();
    std::atomic<bool> forked{false};
    child_result r{};
    aloe::parallel_for(
        0, 3 * 64, 1, "static",
        [&](aloe::subrange, int worker) {
            if (worker != forker || forked.exchange(true)) return;
            r = in_child([] {
                std::vector<std::atomic<unsigned char>> hits(20'000);
                aloe::parallel_for(0, 20'000, "dynamic,chunk=16",
                                   [&](std::int64_t i) { hits[static_cast<std::size_t>(i)].fetch_add(1); },
                                   aloe::loop_site("fork/in-body-child"));
                for (const auto& h : hits)
                    if (h.load() != 1) return static_cast<int>(wrong_coverage);
                const auto st = aloe::stats_of(aloe::loop_site("fork/in-body-child"));
                if (!st || st->serial_invocations != 1) return static_cast<int>(wrong_stats);
                return static_cast<int>(ok);
            });
        },
        aloe::loop_site("fork/forking-loop"));
    ASSERT_TRUE(forked.load());
    expect_exit_ok(r);
    const std::string after = "fork/parent-after-in-body/" + std::to_string(forker);
    EXPECT_EQ(parallel_loop_in_child(10'000, after.c_str()), ok) << "the parent goes on";
}

TEST(ProcessFork, ForkInsideALoopBodyOnTheCallingThread) { fork_inside_a_body(0); }
TEST(ProcessFork, ForkInsideALoopBodyOnAWorkerThread) { fork_inside_a_body(team_size - 1); }

// A child that returns from the body that forked it has no caller (a worker thread) or no
// workers to join (the calling thread): it stops with F013 instead of blocking.
TEST(ProcessFork, ChildReturningFromTheForkingBodyStopsLoudly) {
    warm_up_the_team();
    const std::string log = ::testing::TempDir() + "aloe-fork-" + std::to_string(getpid()) + ".log";
    std::atomic<bool> forked{false};
    pid_t child = -1;
    aloe::parallel_for(
        0, 3 * 64, 1, "static",
        [&](aloe::subrange, int worker) {
            if (worker != team_size - 1 || forked.exchange(true)) return;
            std::fflush(nullptr);
            child = fork();
            if (child == 0) {
                alarm(child_alarm_s);
                const rlimit no_core{0, 0};
                setrlimit(RLIMIT_CORE, &no_core);  // the abort is expected: no core file
                if (std::freopen(log.c_str(), "w", stderr) == nullptr) _exit(98);
            }
        },
        aloe::loop_site("fork/returning"));
    ASSERT_GT(child, 0);
    const child_result r = wait_for(child);
    ASSERT_FALSE(r.hung);
    ASSERT_TRUE(WIFSIGNALED(r.status)) << "exit status " << WEXITSTATUS(r.status);
    EXPECT_EQ(WTERMSIG(r.status), SIGABRT);
    std::ifstream in(log);
    std::stringstream text;
    text << in.rdbuf();
    std::remove(log.c_str());
    EXPECT_NE(text.str().find("aloe: fatal F013 [runtime]: fork() was called inside a loop body"), std::string::npos)
        << text.str();
}

TEST(ProcessFork, ForkWhileAnotherThreadHoldsTheTeam) {
    warm_up_the_team();
    std::atomic<bool> inside{false}, release{false};
    std::thread holder([&] {
        aloe::parallel_for(
            0, team_size, 1, "static",
            [&](std::int64_t i) {
                if (i != 0) return;
                inside = true;
                while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
            },
            aloe::loop_site("fork/holder"));
    });
    while (!inside.load()) std::this_thread::yield();
    expect_exit_ok(in_child([] { return parallel_loop_in_child(100'000, "fork/while-held"); }));
    release = true;
    holder.join();
}

TEST(ProcessFork, ForkWhileOtherThreadsMakeSitesAndRunLoops) {
    // Two threads keep the registry's locks busy (new sites, loops committing statistics,
    // snapshots of every site) while the main thread forks again and again; every child
    // must find the locks free and run its loop.
#if defined(ALOE_ALLOCATOR_NOT_FORK_SAFE)
    GTEST_SKIP() << ALOE_ALLOCATOR_NOT_FORK_SAFE_WHY;
#endif
    warm_up_the_team();
    std::atomic<bool> stop{false};
    std::vector<std::thread> busy;
    for (int t = 0; t < 2; ++t) {
        busy.emplace_back([&, t] {
            aloe::team own(1);
            for (int k = 0; !stop.load(); ++k) {
                const std::string name = "fork/busy/" + std::to_string(t) + "/" + std::to_string(k % 500);
                aloe::parallel_for(own, 0, 10, "static", [](std::int64_t) {}, aloe::loop_site(name));
                if (k % 50 == 0) (void)aloe::all_site_stats();
            }
        });
    }
    for (int round = 0; round < 20; ++round) {
        const child_result r = in_child([round] {
            const std::string site = "fork/churn-child/" + std::to_string(round);
            if (const int code = parallel_loop_in_child(1000, site.c_str()); code != ok) return code;
            return aloe::all_site_stats().empty() ? static_cast<int>(wrong_stats) : static_cast<int>(ok);
        });
        expect_exit_ok(r);
        if (HasFailure()) break;
    }
    stop = true;
    for (std::thread& t : busy) t.join();
}

// Tasks in a child of fork(): a fresh pool on the child's fresh team runs them.
int task_group_in_child(int n) {
    std::atomic<long> sum{0};
    aloe::task_group g;
    for (int i = 0; i < n; ++i) g.run([&sum, i] { sum.fetch_add(i); });
    g.wait();
    aloe::future<long> f = aloe::async([] { return 42L; });
    if (sum.load() != static_cast<long>(n) * (n - 1) / 2 || f.get() != 42) return wrong_coverage;
    return ok;
}

TEST(ProcessFork, ChildRunsTasksOnAFreshPool) {
    ASSERT_EQ(task_group_in_child(20'000), ok) << "the parent, before";
    expect_exit_ok(in_child([] { return task_group_in_child(20'000); }));
    EXPECT_EQ(task_group_in_child(20'000), ok) << "the parent goes on";
}

// Tasks queued at the fork belong to both processes: the child's wait runs its copies (the
// parent's pool has no thread in the child), the parent's wait runs its own.
TEST(ProcessFork, TasksQueuedAtTheForkRunInTheChildToo) {
    aloe::set_task_concurrency(1);  // the workers stay out: every task stays queued
    std::atomic<int> ran{0};
    aloe::task_group g;
    for (int i = 0; i < 100; ++i) g.run([&ran] { ran.fetch_add(1); });
    const child_result r = in_child([&] {
        g.wait();
        if (ran.load() != 100) return static_cast<int>(wrong_coverage);
        if (aloe::task_concurrency() != 1) return static_cast<int>(wrong_size);  // the program's limit holds
        return task_group_in_child(1000);
    });
    aloe::set_task_concurrency(0);
    g.wait();
    EXPECT_EQ(ran.load(), 100) << "the parent's tasks ran once, in the parent";
    expect_exit_ok(r);
}

// A thread floods tasks (blocks move between threads through task memory's depot, under its
// lock) while the main thread forks again and again: every child runs its tasks.
TEST(ProcessFork, ForkWhileAnotherThreadFloodsTasks) {
#if defined(ALOE_ALLOCATOR_NOT_FORK_SAFE)
    GTEST_SKIP() << ALOE_ALLOCATOR_NOT_FORK_SAFE_WHY;
#endif
    // Warm first: a fork while another thread makes the pool (its first use) is not covered
    // (src/runtime/README.md, "After fork()": state another thread was initialising).
    ASSERT_EQ(task_group_in_child(1000), ok);
    std::atomic<bool> stop{false};
    std::thread flood([&stop] {
        while (!stop.load()) {
            aloe::task_group g;
            for (int i = 0; i < 5000; ++i) g.run([] {});
            g.wait();
        }
    });
    for (int round = 0; round < 20; ++round) {
        expect_exit_ok(in_child([] { return task_group_in_child(3000); }));
        if (HasFailure()) break;
    }
    stop = true;
    flood.join();
}

}  // namespace

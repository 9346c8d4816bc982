// Workers joining a running loop on cores borrowed from other ranks (issue 19): the process
// team's spare workers (runtime/borrowed_cores.hpp) come in as guests of the loop's dynamic
// part when the borrowed count and the participant limit rise mid-loop, and leave when they
// drop; every iteration still runs exactly once. Runs in its own executable, which sets
// the environment that makes the process team one own worker and spares before the
// configuration is first read: ALOE_LEND=reactive, ALOE_NUM_THREADS=1,
// OMPI_COMM_WORLD_LOCAL_SIZE=4 (and no daemon).
#include "aloe/parallel_for.hpp"
#include "aloe/team.hpp"
#include "loop/participant_limit.hpp"
#include "unit/loop/iteration_hits.hpp"
#include "runtime/borrowed_cores.hpp"
#include "runtime/clock.hpp"
#include "runtime/local_ranks.hpp"
#include "runtime/team.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <chrono>
#include <memory>
#include <optional>
#include <random>
#include <sched.h>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace aloe::loop {
namespace {

// Before main(): the configuration is read at first use (the team, in the first SetUp).
const bool environment_set = [] {
    ::setenv("ALOE_LEND", "reactive", 1);
    ::setenv("ALOE_NUM_THREADS", "1", 1);
    ::setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "4", 1);
    ::setenv("ALOE_DAEMON", "off", 1);
    return true;
}();

void no_refresh() noexcept {}

class LoopGuests : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_TRUE(environment_set);
        team_ = &aloe::team::global();
        if (::sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "one online CPU: the team has no spare worker";
        ASSERT_EQ(team_->size(), 1);
        ASSERT_GE(team_->workers().spare(), 1) << "ALOE_LEND=reactive with 4 local ranks should give spares";
        set_participant_limit_refresh(&no_refresh);  // participant 0 knocks only while a hook is set
    }
    void TearDown() override {
        set_participant_limit_refresh(nullptr);
        lift_participant_limit();
        runtime::set_borrowed_cores(0, {});
    }
    aloe::team* team_ = nullptr;
};

using hits = test::iteration_hits;

TEST(LoopGuestsArithmetic, SparesAreWhatTheOtherLocalRanksCouldLend) {
    using runtime::lend_mode;
    EXPECT_EQ(runtime::spare_workers_for_lending(lend_mode::reactive, false, 4, 2, 16), 6);
    EXPECT_EQ(runtime::spare_workers_for_lending(lend_mode::reactive, false, 4, 4, 8), 4);  // the node's CPUs bound it
    EXPECT_EQ(runtime::spare_workers_for_lending(lend_mode::predictive, true, 1, 4, 16), 0);  // alone on the node
    EXPECT_EQ(runtime::spare_workers_for_lending(lend_mode::off, true, 4, 1, 16), 0);
    EXPECT_EQ(runtime::spare_workers_for_lending(lend_mode::automatic, false, 4, 1, 16), 0);  // no daemon seen
    EXPECT_EQ(runtime::spare_workers_for_lending(lend_mode::automatic, true, 4, 1, 16), 3);
}

TEST(LoopGuestsArithmetic, LocalRanksComeFromTheLauncher) {
    const auto env = [](std::initializer_list<std::pair<const char*, const char*>> vars) {
        std::vector<std::pair<std::string, std::string>> v(vars.begin(), vars.end());
        return runtime::env_lookup([v](std::string_view name) -> std::optional<std::string> {
            for (const auto& [k, val] : v)
                if (k == name) return val;
            return std::nullopt;
        });
    };
    EXPECT_EQ(runtime::local_ranks_from(env({})), 1);
    EXPECT_EQ(runtime::local_ranks_from(env({{"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}})), 4);
    EXPECT_EQ(runtime::local_ranks_from(env({{"MPI_LOCALNRANKS", "3"}})), 3);
    EXPECT_EQ(runtime::local_ranks_from(env({{"SLURM_TASKS_PER_NODE", "8(x2),4"}})), 8);
    EXPECT_EQ(runtime::local_ranks_from(env({{"OMPI_COMM_WORLD_LOCAL_SIZE", "four"}})), 1);
    EXPECT_EQ(runtime::local_ranks_from(env({{"OMPI_COMM_WORLD_LOCAL_SIZE", "0"}})), 1);
}

TEST(BorrowedPlacement, ATakeBackMovesASpareHomeInTheMiddleOfItsChunk) {
    cpu_set_t home;
    ASSERT_EQ(sched_getaffinity(0, sizeof home, &home), 0);
    if (CPU_COUNT(&home) < 2) GTEST_SKIP() << "one allowed CPU: a borrowed CPU would be the spare's home";
    int lent = -1;
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &home)) lent = c;  // the last allowed CPU plays the lent one
    runtime::set_borrowed_cores(1, {lent});
    std::atomic<int> stage{0};
    std::atomic<bool> pinned_there{false}, home_again{false};
    std::thread spare([&] {
        runtime::pin_to_borrowed_cpu(0, home);  // as spare 0 does at its job's start
        cpu_set_t m;
        sched_getaffinity(0, sizeof m, &m);
        pinned_there = CPU_COUNT(&m) == 1 && CPU_ISSET(lent, &m) && runtime::on_lent_cpu();
        stage = 1;
        // "In a chunk": it never returns to a chunk boundary before the check below.
        while (stage.load() != 2) std::this_thread::yield();
        sched_getaffinity(0, sizeof m, &m);
        home_again = CPU_EQUAL(&m, &home);
        runtime::set_on_lent_cpu(false);
    });
    while (stage.load() != 1) std::this_thread::yield();
    runtime::set_borrowed_cores(0, {});  // the take-back, heard by this thread
    stage = 2;
    spare.join();
    EXPECT_TRUE(pinned_there.load());
    EXPECT_TRUE(home_again.load()) << "the spare stayed on the taken-back CPU until its chunk ended";
}

TEST(BorrowedPlacement, AGuestOnALentCpuYieldsBetweenChunksAtMostEvery100Us) {
    std::thread guest([] {
        const std::uint64_t before = runtime::guest_yields();
        for (int i = 0; i < 1000; ++i) (void)must_leave(1);  // not on a lent CPU: no yield
        EXPECT_EQ(runtime::guest_yields(), before);
        runtime::set_on_lent_cpu(true);
        const runtime::ticks start = runtime::now_ticks();
        long chunks = 0;
        // At least 500 us of chunk boundaries: some yields, and no more than one per 100 us.
        while (runtime::ticks_to_seconds(runtime::now_ticks() - start) < 500e-6) {
            (void)must_leave(1);
            ++chunks;
        }
        const double spent_s = runtime::ticks_to_seconds(runtime::now_ticks() - start);
        runtime::set_on_lent_cpu(false);
        const std::uint64_t yields = runtime::guest_yields() - before;
        EXPECT_GE(yields, 1u);
        EXPECT_LE(static_cast<double>(yields), spent_s / 100e-6 + 1) << chunks << " chunk boundaries";
    });
    guest.join();
}

TEST(BorrowedPlacement, NamedCoresAreTheBorrowedOnesWithACpu) {
    runtime::set_borrowed_cores(3, {5});
    EXPECT_EQ(runtime::borrowed_cores_named(), 1);  // two have no CPU: nothing runs on them
    EXPECT_EQ(runtime::borrowed_cpu_for_spare(0), 5);
    EXPECT_EQ(runtime::borrowed_cpu_for_spare(1), -1);
    runtime::set_borrowed_cores(1, {5, 6});
    EXPECT_EQ(runtime::borrowed_cores_named(), 1);  // the count bounds the CPUs named
    runtime::set_borrowed_cores(0, {});
    EXPECT_EQ(runtime::borrowed_cores_named(), 0);
}

TEST(BorrowedPlacement, AThreadGoesToItsBorrowedCpuOrElseWhereItIsTold) {
    cpu_set_t home;
    ASSERT_EQ(sched_getaffinity(0, sizeof home, &home), 0);
    int last = -1;
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &home)) last = c;
    ASSERT_GE(last, 0);
    runtime::set_borrowed_cores(1, {last});
    cpu_set_t on_borrowed, on_fallback;
    std::thread([&] {
        runtime::pin_to_borrowed_cpu(0, home);
        sched_getaffinity(0, sizeof on_borrowed, &on_borrowed);
        runtime::pin_to_borrowed_cpu(1, home);  // no CPU named for a second core
        sched_getaffinity(0, sizeof on_fallback, &on_fallback);
    }).join();
    runtime::set_borrowed_cores(0, {});
    EXPECT_EQ(CPU_COUNT(&on_borrowed), 1);
    EXPECT_TRUE(CPU_ISSET(last, &on_borrowed));
    EXPECT_TRUE(CPU_EQUAL(&on_fallback, &home));
}

int seven_threads() noexcept { return 7; }

TEST(BorrowedPlacement, ARegisteredSourceSaysHowManyThreadsCanBorrow) {
    EXPECT_EQ(runtime::registered_borrowing_threads(), -1);  // the process team's spares apply
    runtime::set_borrowing_threads_source(&seven_threads);
    EXPECT_EQ(runtime::registered_borrowing_threads(), 7);
    runtime::set_borrowing_threads_source(nullptr);
    EXPECT_EQ(runtime::registered_borrowing_threads(), -1);
}

TEST_F(LoopGuests, WithNothingBorrowedTheLoopRunsOnItsCallerAlone) {
    hits h(500);
    std::atomic<int> other{0};
    aloe::parallel_for(*team_, std::int64_t{0}, std::int64_t{500}, aloe::schedule("dynamic,chunk=1"),
                       [&](aloe::subrange r, int thread) {
                           for (std::int64_t i : r) h.count[static_cast<std::size_t>(i)].fetch_add(1);
                           if (thread != 0) other.fetch_add(1);
                       });
    EXPECT_EQ(h.first_wrong(), -1);
    EXPECT_EQ(other.load(), 0) << "a spare ran without a borrowed core";
}

// A core arrives while the loop runs: the spare joins its dynamic part (the caller waits
// in its own chunks until the guest has taken one, so the test does not depend on timing).
TEST_F(LoopGuests, ASpareJoinsARunningLoopWhenACoreIsBorrowed) {
    // (Not guided: on one own thread its first chunk is the whole loop, nothing is left.)
    for (const std::string spec : {"dynamic,chunk=2", "dynamic,chunk=1", "hybrid,fs=0.25,chunk=3"}) {
        SCOPED_TRACE(spec);
        limit_participants(1);
        constexpr std::int64_t n = 4000;
        hits h(n);
        std::atomic<bool> raised{false}, guest_ran{false};
        std::atomic<std::int64_t> by_guest{0};
        aloe::parallel_for(*team_, std::int64_t{0}, n, aloe::schedule(spec), [&](aloe::subrange r, int thread) {
            for (std::int64_t i : r) h.count[static_cast<std::size_t>(i)].fetch_add(1);
            if (thread != 0) {
                by_guest.fetch_add(static_cast<std::int64_t>(r.size()));
                guest_ran.store(true);
                return;
            }
            if (!raised.exchange(true)) {
                runtime::set_borrowed_cores(1, {});
                limit_participants(2);  // the next chunk boundary opens the door
                return;
            }
            const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
            while (!guest_ran.load() && std::chrono::steady_clock::now() < until) std::this_thread::yield();
        });
        EXPECT_EQ(h.first_wrong(), -1);
        EXPECT_TRUE(guest_ran.load()) << "no spare joined the running loop";
        EXPECT_GT(by_guest.load(), 0);
        runtime::set_borrowed_cores(0, {});
    }
}

// Schedules whose dynamic part keeps a cursor per participant take no guests.
TEST_F(LoopGuests, SchedulesWithQueuesPerParticipantTakeNoGuests) {
    for (const std::string spec : {"staggered,fs=0.5,chunk=1", "tasklets,n=64,fs=0,skew=1", "static"}) {
        SCOPED_TRACE(spec);
        limit_participants(1);
        hits h(600);
        std::atomic<int> other{0};
        aloe::parallel_for(*team_, std::int64_t{0}, std::int64_t{600}, aloe::schedule(spec),
                           [&](aloe::subrange r, int thread) {
                               for (std::int64_t i : r) h.count[static_cast<std::size_t>(i)].fetch_add(1);
                               if (thread != 0) other.fetch_add(1);
                               runtime::set_borrowed_cores(1, {});
                               limit_participants(2);
                           });
        EXPECT_EQ(h.first_wrong(), -1);
        EXPECT_EQ(other.load(), 0);
        runtime::set_borrowed_cores(0, {});
    }
}

// The property (under TSan in `make test`): cores come and go at random while loops run;
// nothing is lost or run twice, guests join and leave.
TEST_F(LoopGuests, EveryIterationOnceWhileBorrowedCoresComeAndGo) {
    std::atomic<bool> stop{false};
    const int spare = team_->workers().spare();
    std::thread mover([&] {
        std::mt19937 rng(19);
        while (!stop.load()) {
            const int b = static_cast<int>(rng() % static_cast<unsigned>(spare + 1));
            runtime::set_borrowed_cores(b, {});
            limit_participants(1 + b);
            std::this_thread::yield();
        }
    });
    for (const std::string spec : {"dynamic,chunk=1", "dynamic,chunk=5", "guided,chunk=1", "hybrid,fs=0.5,chunk=2"})
        for (std::int64_t n : {1, 17, 1000, 4099}) {
            SCOPED_TRACE(spec + " n=" + std::to_string(n));
            for (int rep = 0; rep < 10; ++rep) {
                hits h(static_cast<std::size_t>(n));
                aloe::parallel_for(*team_, std::int64_t{0}, n, aloe::schedule(spec), [&](aloe::subrange r, int) {
                    for (std::int64_t i : r) h.count[static_cast<std::size_t>(i)].fetch_add(1);
                });
                ASSERT_EQ(h.first_wrong(), -1);
            }
        }
    stop.store(true);
    mover.join();
}

}  // namespace
}  // namespace aloe::loop

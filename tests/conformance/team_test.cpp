// Conformance of aloe::team (include/aloe/team.hpp): the process team exists, teams of any
// small size start and stop repeatedly (used or not) without hanging, and one team serves
// many loops.
#include "conformance/coverage.hpp"

#include <aloe/aloe.hpp>

#include <gtest/gtest.h>

#include <sched.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace aloe_conformance;

TEST(ConformanceTeam, ProcessTeamHasAtLeastOneThread) {
    aloe::team& g = aloe::team::global();
    EXPECT_GE(g.size(), 1);
    EXPECT_EQ(&aloe::team::global(), &g) << "the process team is one object";
    coverage c(0, 1000, 1, g.size());
    aloe::parallel_for(g, 0, 1000, 1, "dynamic,chunk=3", [&](aloe::subrange r, int thread) { c.check_subrange(r, thread); });
    EXPECT_TRUE(c.exactly_once());
}

TEST(ConformanceTeam, TeamsStartAndStopRepeatedlyWithoutHanging) {
    const int repeats = scaled(50);
    for (int size = 1; size <= 8; ++size) {
        for (int rep = 0; rep < repeats; ++rep) {
            aloe::team t(size);
            ASSERT_EQ(t.size(), size);
        }
    }
}

TEST(ConformanceTeam, TeamsStopRightAfterOneLoop) {
    const int repeats = scaled(25);
    for (int size = 1; size <= 8; ++size) {
        for (int rep = 0; rep < repeats; ++rep) {
            SCOPED_TRACE(::testing::Message() << "team " << size << ", repeat " << rep);
            aloe::team t(size);
            coverage c(0, 64, 1, size);
            aloe::parallel_for(t, 0, 64, 1, rep % 2 ? "staggered,fs=0.5" : "dynamic",
                               [&](aloe::subrange r, int thread) { c.check_subrange(r, thread); });
            ASSERT_TRUE(c.exactly_once());
        }
    }
}

TEST(ConformanceTeam, OneTeamOutlivesManyLoops) {
    aloe::team t(oversubscribed_team_size());
    const std::vector<std::string> specs = all_schedule_specs();
    const int loops = scaled(2000);
    int failures = 0;
    for (int rep = 0; rep < loops && failures < 5; ++rep) {
        const std::string& spec = specs[static_cast<std::size_t>(rep) % specs.size()];
        const std::int64_t n = 1 + rep % 257;
        coverage c(-n, n, 1 + rep % 3, t.size());
        if (rep % 2)
            aloe::parallel_for(t, -n, n, 1 + rep % 3, aloe::schedule(spec), [&](std::int64_t i) { c.hit(i); });
        else
            aloe::parallel_for(t, -n, n, 1 + rep % 3, aloe::schedule(spec), [&](aloe::subrange r, int thread) { c.check_subrange(r, thread); });
        const auto ok = c.exactly_once();
        if (!ok) {
            ++failures;
            ADD_FAILURE() << "loop " << rep << ", schedule '" << spec << "': " << ok.message();
        }
    }
}

TEST(ConformanceTeam, SeveralTeamsAliveAtOnceEachWork) {
    std::vector<std::unique_ptr<aloe::team>> teams;
    for (int size = 1; size <= 6; ++size) teams.push_back(std::make_unique<aloe::team>(size));
    for (int round = 0; round < 3; ++round) {
        for (auto& t : teams) {
            coverage c(0, 999, 1, t->size());
            aloe::parallel_for(*t, 0, 999, 1, "guided,chunk=2", [&](aloe::subrange r, int thread) { c.check_subrange(r, thread); });
            EXPECT_TRUE(c.exactly_once()) << "team " << t->size();
        }
    }
    // Destroyed in an order different from creation.
    teams.erase(teams.begin() + 2);
    teams.erase(teams.begin());
    for (auto& t : teams) {
        coverage c(0, 99, 1);
        aloe::parallel_for(*t, 0, 99, 1, "static", [&](std::int64_t i) { c.hit(i); });
        EXPECT_TRUE(c.exactly_once());
    }
}

// The process team is never destroyed (team.hpp: its threads outlive main), so nothing its
// threads touch may be destroyed at exit either. Here a program starts the process team
// and returns at once, the commonest way to end; an atexit handler registered first (so it
// runs after aloe's own static destructors) keeps the process alive 100 ms, during which
// workers that had not started yet do start. With ALOE_PROC_BIND=close each worker looks
// up its core in the machine topology when it starts. The process must exit cleanly.
void linger_at_exit() { std::this_thread::sleep_for(std::chrono::milliseconds(100)); }

TEST(ConformanceTeamDeathTest, ProcessExitRightAfterTheProcessTeamStartsIsClean) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");  // each child is a fresh process
    // Several children: whether a worker starts after the destructors is up to the OS.
    for (int child = 0; child < 10 && !HasFailure(); ++child) {
        EXPECT_EXIT(
            {
                ::setenv("ALOE_PROC_BIND", "close", 1);
                ::setenv("ALOE_NUM_THREADS", "8", 1);
                // One CPU for the whole process: workers start late, as on a loaded node.
                cpu_set_t one;
                CPU_ZERO(&one);
                CPU_SET(std::max(0, sched_getcpu()), &one);
                (void)sched_setaffinity(0, sizeof one, &one);
                std::atexit(linger_at_exit);
                (void)aloe::team::global();
                std::exit(0);
            },
            ::testing::ExitedWithCode(0), "")
            << "child " << child << " did not exit cleanly";
    }
}

}  // namespace

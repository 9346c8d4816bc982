// When a rank lends and asks (mpi/lending_rule.hpp), and the polite wait that carries it
// out (mpi/polite_wait.hpp) driven by fake completions: every decision worked out by hand.
#include "mpi/lending_rule.hpp"
#include "mpi/polite_wait.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <limits>
#include <optional>
#include <thread>
#include <vector>

namespace {

using namespace aloe::mpi;
using aloe::runtime::lend_mode;

lending_settings rule(lend_mode m) {
    lending_settings s;
    s.mode = m;
    s.grace_s = 50e-6;
    s.least_slack_s = 1e-3;
    return s;
}

constexpr double never = std::numeric_limits<double>::infinity();

// How long a wait of a path with these recent slacks waits before it lends.
double after(const lending_settings& s, std::vector<double> recent) {
    return wait_before_lending(s, recent).after_s;
}

TEST(MpiLendingRule, OffNeverLendsNorAsks) {
    for (const lend_mode m : {lend_mode::off, lend_mode::automatic}) {
        EXPECT_EQ(after(rule(m), {1.0}), never);
        EXPECT_EQ(after(rule(m), {}), never);
        EXPECT_FALSE(ask_after(rule(m)));
    }
}

// Known work, cores by hand: each rank's time work / cores, the longest as short as it goes.
TEST(MpiFinishTogether, SplitsCoresSoThatTheRanksFinishTogether) {
    // 1:3 on 8 cores: 2 and 6 cores, both 0.5 s (work 1 and 3).
    const double one_three[] = {1.0, 3.0};
    EXPECT_EQ(finish_together(one_three, 8), (std::vector<unsigned>{2, 6}));
    // Work 4, 8, 4 on 4 cores: the spare core goes to the heaviest: 1, 2, 1.
    const double one_two_one[] = {4.0, 8.0, 4.0};
    EXPECT_EQ(finish_together(one_two_one, 4), (std::vector<unsigned>{1, 2, 1}));
    // Equal work, cores not a multiple: the first of equals gets the extra one (3, 3, 2 on 8).
    const double equal[] = {1.0, 1.0, 1.0};
    EXPECT_EQ(finish_together(equal, 8), (std::vector<unsigned>{3, 3, 2}));
    // Every rank keeps a core, however little its work: 1:100 on 4 cores → 1, 3.
    const double lopsided[] = {0.01, 1.0};
    EXPECT_EQ(finish_together(lopsided, 4), (std::vector<unsigned>{1, 3}));
    // Fewer cores than ranks: no split.
    EXPECT_TRUE(finish_together(equal, 2).empty());
    EXPECT_TRUE(finish_together({}, 4).empty());
}

TEST(MpiLendingRule, PredictiveSizesAPhaseSoThePairFinishesTogether) {
    const auto p = rule(lend_mode::predictive);
    // 4 cores, 1 ms of compute, 2 ms predicted wait: the other rank's work is 3 ms on 4
    // cores, 12 core-ms against 4; on 8 cores 2 and 6 finish together: lend 2.
    EXPECT_EQ(cores_for_phase(p, 4, 1e-3, 2e-3), 2u);
    // 4 ms compute, 2 ms wait (4 x 4 = 16 against 24 core-ms on 8 cores): 3 and 5 give
    // 5.33 and 4.8 ms, 4 and 4 give 4 and 6: keep 3, lend 1.
    EXPECT_EQ(cores_for_phase(p, 4, 4e-3, 2e-3), 1u);
    // One core: integer cores lend nothing for the phase (the wait's entry lends it).
    EXPECT_EQ(cores_for_phase(p, 1, 1e-3, 2e-3), 0u);
    // A wait not worth lending for, no history, or another mode: nothing.
    EXPECT_EQ(cores_for_phase(p, 4, 1e-3, 0.5e-3), 0u);
    EXPECT_EQ(cores_for_phase(p, 4, std::nullopt, 2e-3), 0u);
    EXPECT_EQ(cores_for_phase(p, 4, 1e-3, std::nullopt), 0u);
    EXPECT_EQ(cores_for_phase(rule(lend_mode::reactive), 4, 1e-3, 2e-3), 0u);
    // However long the wait, the rank keeps one core: 16 cores, 1 ms compute, 1 s wait.
    EXPECT_EQ(cores_for_phase(p, 16, 1e-3, 1.0), 15u);
}

TEST(MpiLendingRule, ReactiveLendsAfterTheGraceAndAlwaysAsks) {
    const auto r = rule(lend_mode::reactive);
    EXPECT_EQ(after(r, {5e-3, 5e-3}), 50e-6);  // the recent waits change nothing for it
    EXPECT_EQ(after(r, {}), 50e-6);
    EXPECT_FALSE(wait_before_lending(r, {}).paid);
    EXPECT_TRUE(ask_after(r));
}

// Slacks that are all alike: the point rule (lend at the entry for least_slack or more).
TEST(MpiLendingRule, PredictiveLendsAtEntryWhenEveryRecentWaitWasWorthIt) {
    const auto p = rule(lend_mode::predictive);
    EXPECT_EQ(after(p, {2e-3, 2e-3, 2e-3}), 0.0);
    EXPECT_EQ(after(p, {1e-3}), 0.0);  // exactly least_slack: pays nothing, loses nothing
    // Mostly long (ms): 3 and 2 pay 2 + 1 at the entry, the 0.1 wait loses 0.9 there: 2.1;
    // waiting just past the short one (0.15) pays 1.85 + 0.85 = 2.7: it waits that long.
    EXPECT_NEAR(after(p, {3e-3, 2e-3, 0.1e-3}), 0.15e-3, 1e-12);
    // Long waits outnumbering a short one enough: 4 x 3 ms and a 0.1 ms wait: entry pays
    // 4 x 2 - 0.9 = 7.1 ms, after 0.15 ms 4 x 1.85 = 7.4 ms: still after it. Ten long ones
    // (20 - 0.9 = 19.1 against 18.5): at the entry.
    EXPECT_NEAR(after(p, {3e-3, 3e-3, 3e-3, 3e-3, 0.1e-3}), 0.15e-3, 1e-12);
    EXPECT_EQ(after(p, {3e-3, 3e-3, 3e-3, 3e-3, 3e-3, 3e-3, 3e-3, 3e-3, 3e-3, 3e-3, 0.1e-3}), 0.0);
    EXPECT_TRUE(wait_before_lending(p, std::vector<double>{2e-3}).paid);
    // Every computing rank asks, whatever its waits (under noise any rank may be the late one).
    EXPECT_TRUE(ask_after(p));
    // With no latencies at all (the simulator's exact cases) the guard's wait is 0.
    auto zero = p;
    zero.grace_s = zero.least_slack_s = 0;
    EXPECT_EQ(after(zero, {0.0}), 0.0);
    EXPECT_FALSE(wait_before_lending(zero, std::vector<double>{0.0}).paid);
}

// OS noise on the other rank: most waits short (the step's jitter), some 3 ms long.
TEST(MpiLendingRule, PredictiveWaitsJustPastTheShortWaitsWhenSomeAreLong) {
    const auto p = rule(lend_mode::predictive);
    // By hand (ms): short waits 0.05, 0.08, 0.10, 0.12; the candidates are 0 and each wait
    // + 0.05 (the grace). At 0.13 no short wait outlasts it: 4 x (3 - 0.13 - 1) = 7.48, the
    // most; at 0.10 the 0.12 wait lends for nothing (-0.98): 7.6 - 0.98 = 6.62; at 0.15,
    // 7.4; at 0.17, 7.32; at the entry 4 x 2 - (0.95 + 0.92 + 0.9 + 0.88) = 4.35.
    EXPECT_NEAR(after(p, {0.05e-3, 3e-3, 0.08e-3, 3e-3, 0.10e-3, 3e-3, 0.12e-3, 3e-3}), 0.13e-3, 1e-12);
    // One long wait among eight short ones still pays for a lend past the short ones.
    EXPECT_NEAR(after(p, {0.1e-3, 0.1e-3, 0.1e-3, 0.1e-3, 0.1e-3, 0.1e-3, 0.1e-3, 0.1e-3, 3e-3}), 0.15e-3, 1e-12);
}

TEST(MpiLendingRule, PredictiveGuardLendsWhenNoRecentWaitPaysAndFollowsReactiveAtFirst) {
    const auto p = rule(lend_mode::predictive);
    // Short waits only: nothing pays; a wait that lasts least_slack lends, as the reactive rule would.
    const lending_wait w = wait_before_lending(p, std::vector<double>{0.9e-3, 0.1e-3, 0.0});
    EXPECT_EQ(w.after_s, 1e-3);
    EXPECT_FALSE(w.paid);
    EXPECT_EQ(after(p, {0.0}), 1e-3);
    // No wait seen yet: the reactive rule.
    EXPECT_EQ(after(p, {}), 50e-6);
    EXPECT_FALSE(wait_before_lending(p, {}).paid);
}

struct fake_lender {
    int calls = 0;
    bool grant = true;
    static bool lend(void* self) noexcept {
        auto& f = *static_cast<fake_lender*>(self);
        ++f.calls;
        return f.grant;
    }
};

TEST(MpiPoliteWait, ACallThatCompletesAtOnceLendsNothing) {
    fake_lender f;
    int tests = 0;
    const wait_outcome out = wait_politely(
        [&](bool& done) {
            ++tests;
            done = true;
            return 0;
        },
        50e-6, std::nullopt, lend_link{&fake_lender::lend, &f});
    EXPECT_EQ(tests, 1);
    EXPECT_EQ(f.calls, 0);
    EXPECT_FALSE(out.lent);
}

TEST(MpiPoliteWait, AWaitLongerThanTheGraceLendsOnceAndReturnsAtCompletion) {
    fake_lender f;
    std::atomic<bool> complete{false};
    std::thread completer([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        complete.store(true);
    });
    int tests = 0;
    const wait_outcome out = wait_politely(
        [&](bool& done) {
            ++tests;
            done = complete.load();
            return 0;
        },
        50e-6, std::nullopt, lend_link{&fake_lender::lend, &f});
    completer.join();
    EXPECT_TRUE(out.lent);
    EXPECT_FALSE(out.lent_at_entry);  // it lent after waiting, not at the entry
    EXPECT_EQ(f.calls, 1);
    EXPECT_TRUE(complete.load());  // it did not return before the completion
    EXPECT_GE(out.waited_s, 0.0);
}

TEST(MpiPoliteWait, PredictedSlackLendsBeforeTheFirstTest) {
    fake_lender f;
    int lends_before_first_test = -1;
    const wait_outcome out = wait_politely(
        [&](bool& done) {
            if (lends_before_first_test < 0) lends_before_first_test = f.calls;
            done = true;
            return 0;
        },
        0.0, 5e-3, lend_link{&fake_lender::lend, &f});
    EXPECT_EQ(lends_before_first_test, 1);
    EXPECT_TRUE(out.lent);
    EXPECT_TRUE(out.lent_at_entry);
}

TEST(MpiPoliteWait, ARefusedLendIsNotRetriedAndAnErrorEndsTheWait) {
    fake_lender f;
    f.grant = false;
    int tests = 0;
    const wait_outcome out = wait_politely(
        [&](bool& done) {
            done = false;
            // Fails after a while (an MPI error code): the wait ends with it.
            return ++tests >= 200000 ? 17 : 0;
        },
        50e-6, std::nullopt, lend_link{&fake_lender::lend, &f});
    EXPECT_EQ(out.rc, 17);
    EXPECT_FALSE(out.lent);
    EXPECT_FALSE(out.lent_at_entry);
    EXPECT_LE(f.calls, 1);
}

}  // namespace

// The lender's nap that ends once its core is idle (mpi/idle_core_watch.hpp): the protocol
// between the napping thread and the sentinel, and the SCHED_IDLE sentinel itself. No test
// reads a clock: each asserts why a nap ended (the sentinel, or its whole length).
#include "mpi/idle_core_watch.hpp"

#include <gtest/gtest.h>

#include <pthread.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace {

using aloe::mpi::idle_core_watch;

// The first naps sleep whole while the sentinel starts and lowers its priority.
void until_watching(idle_core_watch& w) {
    for (int i = 0; i < 10'000 && !w.watching(); ++i) (void)w.nap(1e-4);
}

// Pins the calling thread to the first CPU it may use; `was` gets its mask before.
bool pin_to_first_cpu(cpu_set_t& was) {
    if (sched_getaffinity(0, sizeof was, &was) != 0) return false;
    int first = -1;
    for (int c = 0; c < CPU_SETSIZE && first < 0; ++c)
        if (CPU_ISSET(c, &was)) first = c;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    return first >= 0 && sched_setaffinity(0, sizeof one, &one) == 0;
}

TEST(IdleCoreWatch, ANapEndsOnceNothingElseWantsTheCore) {
    idle_core_watch w(/*sentinel_idle=*/true);
    until_watching(w);
    ASSERT_TRUE(w.watching()) << "the SCHED_IDLE sentinel did not start (I605)";
    // Nothing else of this test runs: a 5 s nap ends as soon as the sentinel gets the CPU
    // (a broken protocol sleeps it whole and the test fails on the flag, not a clock).
    const std::uint64_t before = w.early_wakes();
    EXPECT_TRUE(w.nap(5.0));
    EXPECT_EQ(w.early_wakes(), before + 1);
    w.stop();
}

TEST(IdleCoreWatch, EveryNapIsWatchedNotOnlyTheFirst) {
    idle_core_watch w(/*sentinel_idle=*/false);  // the protocol alone: the sentinel always ends the nap
    until_watching(w);
    ASSERT_TRUE(w.watching());
    EXPECT_EQ(w.sentinel_policy(), SCHED_OTHER);
    const std::uint64_t before = w.early_wakes();
    for (int i = 0; i < 1000; ++i) ASSERT_TRUE(w.nap(5.0)) << "nap " << i;
    EXPECT_EQ(w.early_wakes(), before + 1000);
    w.stop();
}

TEST(IdleCoreWatch, TheSentinelSleepsWhileNobodyNaps) {
    idle_core_watch w(/*sentinel_idle=*/false);
    until_watching(w);
    ASSERT_TRUE(w.nap(5.0));
    const std::uint64_t after = w.early_wakes();
    // A sentinel that woke on its own would count a nap that nobody took, or spin: its CPU
    // time stays that of a thread asleep.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(w.early_wakes(), after);
    w.stop();
}

TEST(IdleCoreWatch, TheFirstNapSleepsWholeWhileTheSentinelStarts) {
    idle_core_watch w(/*sentinel_idle=*/true);
    // Not started yet: the first nap starts the sentinel and sleeps whole (watching() is
    // set by the sentinel once it runs under SCHED_IDLE).
    EXPECT_FALSE(w.nap(1e-3));
    w.stop();
}

TEST(IdleCoreWatch, TheSentinelRunsUnderSchedIdleOnTheCallersCpus) {
    // Pin this thread to one CPU: the sentinel inherits it, and since this thread then sleeps
    // in the nap, the sentinel is the only one of the two that can run there.
    cpu_set_t mine;
    ASSERT_TRUE(pin_to_first_cpu(mine));
    idle_core_watch w(/*sentinel_idle=*/true);
    until_watching(w);
    ASSERT_TRUE(w.watching());
    EXPECT_EQ(w.sentinel_policy(), SCHED_IDLE);
    EXPECT_TRUE(w.nap(5.0));
    w.stop();
    ASSERT_EQ(sched_setaffinity(0, sizeof mine, &mine), 0);
}

// A guest computing on the lent CPU yields it now and then (runtime::yield_to_lender); the
// scheduler may then run the SCHED_IDLE sentinel, which must not take that for an idle CPU
// (it woke the lender for an MPI test at each yield, 16-20 us of each 100 us of the guest's).
TEST(IdleCoreWatch, AGuestThatYieldsBetweenChunksIsNotAnIdleCore) {
    cpu_set_t mine;
    ASSERT_TRUE(pin_to_first_cpu(mine));
    idle_core_watch w(/*sentinel_idle=*/true);
    until_watching(w);
    ASSERT_TRUE(w.watching());
    std::atomic<bool> stop{false};
    std::thread guest([&] {  // on the same CPU (the mask is inherited)
        while (!stop.load(std::memory_order_relaxed)) {
            // A chunk of 1 ms, then the guest's yield.
            const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(1);
            while (std::chrono::steady_clock::now() < end && !stop.load(std::memory_order_relaxed)) {}
            sched_yield();
        }
    });
    const std::uint64_t before = w.early_wakes();
    int ended_early = 0;
    for (int i = 0; i < 5; ++i) ended_early += w.nap(0.02) ? 1 : 0;
    stop = true;
    guest.join();
    EXPECT_EQ(ended_early, 0) << "the sentinel took a guest's yield for an idle core";
    EXPECT_EQ(w.early_wakes(), before + static_cast<std::uint64_t>(ended_early));
    EXPECT_TRUE(w.nap(5.0)) << "the guest gone, the core is idle";
    w.stop();
    ASSERT_EQ(sched_setaffinity(0, sizeof mine, &mine), 0);
}

TEST(IdleCoreWatch, AForkedChildWatchesWithItsOwnSentinel) {
    idle_core_watch& w = idle_core_watch::process();
    until_watching(w);
    ASSERT_TRUE(w.watching());
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        // The parent's sentinel did not come along: the first naps start a new one.
        bool ok = !w.watching();
        for (int i = 0; i < 10'000 && !w.watching(); ++i) (void)w.nap(1e-4);
        ok = ok && w.watching() && w.nap(5.0);
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
    EXPECT_TRUE(w.nap(5.0));  // the parent's still watches
}

}  // namespace

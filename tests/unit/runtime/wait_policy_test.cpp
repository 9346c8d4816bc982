// The wait policy's test for a CPU shared with another program: the arithmetic on recorded
// figures, and a waiter pinned beside a spinner on one CPU that must find it shared.
#include "runtime/wait_policy.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include <pthread.h>
#include <sched.h>

namespace aloe::runtime {
namespace {

TEST(WaitPolicy, ACpuIsSharedWhenTheWaiterGotLessThanThreeQuartersOfIt) {
    EXPECT_FALSE(cpu_was_shared(1e-3, 0.99e-3)) << "alone: all of it";
    EXPECT_FALSE(cpu_was_shared(1e-3, 0.80e-3));
    EXPECT_TRUE(cpu_was_shared(1e-3, 0.50e-3)) << "beside one CPU hog: half";
    EXPECT_TRUE(cpu_was_shared(4e-3, 0.1e-3)) << "a spinner's whole slice";
    EXPECT_FALSE(cpu_was_shared(50e-6, 0.0)) << "too short a phase to judge";
    EXPECT_FALSE(cpu_was_shared(1e-3, -1.0)) << "no thread clock";
}

bool pin_to(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

int first_allowed_cpu() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return -1;
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) return c;
    return -1;
}

TEST(WaitPolicy, AWaiterBesideASpinnerOnItsCpuStopsYielding) {
    const int cpu = first_allowed_cpu();
    ASSERT_GE(cpu, 0);
    std::atomic<bool> stop{false};
    std::atomic<bool> spinning{false};
    std::thread spinner([&] {
        ASSERT_TRUE(pin_to(cpu));
        spinning = true;
        while (!stop.load(std::memory_order_relaxed)) {
        }
    });
    while (!spinning) std::this_thread::yield();

    std::atomic<std::uint32_t> word{0}, sleepers{0};
    bool skipped_after = false;
    std::thread waiter([&] {
        ASSERT_TRUE(pin_to(cpu));
        wait_settings ws;
        ws.kind = wait_policy_kind::hybrid;
        ws.spin_ticks = 0;
        ws.yield_ticks = static_cast<ticks>(0.2 * ticks_per_second());  // 200 ms of yielding
        EXPECT_FALSE(waits_skip_yielding());
        wait_while_equal(word, 0, sleepers, ws);  // woken after 50 ms, mid-phase
        skipped_after = waits_skip_yielding();
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    word.store(1, std::memory_order_seq_cst);
    wake_waiters(word, sleepers);
    waiter.join();
    stop = true;
    spinner.join();
    EXPECT_TRUE(skipped_after) << "50 ms of yielding beside a spinner on the same CPU";
}

}  // namespace
}  // namespace aloe::runtime

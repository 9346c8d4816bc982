// A spare worker between two loops on a CPU another rank lent (runtime/borrowed_cores.hpp,
// wait_awake_on_lent_cpu): it stays awake only while its rank computes, and returns for
// each reason the header names. No clock is asserted on: a wait that misses its reason never
// returns, and the test's timeout fails it.
#include "runtime/borrowed_cores.hpp"
#include "runtime/clock.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

namespace aloe::runtime {
namespace {

constexpr ticks forever = ~ticks{0} / 4;  // no end in a test's time

class GuestWait : public ::testing::Test {
protected:
    void SetUp() override { set_on_lent_cpu(true); }
    void TearDown() override {
        set_on_lent_cpu(false);
        set_borrowed_cores(0, {});
    }
    std::atomic<std::uint32_t> word{0};
};

// Once `waiting` says the waiter has started, runs `act` from another thread.
template <class Act>
std::thread after_start(std::atomic<bool>& waiting, Act act) {
    return std::thread([&waiting, act] {
        while (!waiting.load()) std::this_thread::yield();
        std::this_thread::sleep_for(std::chrono::milliseconds(5));  // let the waiter spin a while
        act();
    });
}

TEST_F(GuestWait, OffALentCpuItReturnsAtOnce) {
    set_on_lent_cpu(false);
    wait_awake_on_lent_cpu(word, 0, borrowed_placement_generation(), forever);
    EXPECT_EQ(word.load(), 0u);
}

TEST_F(GuestWait, ItReturnsWhenTheNextJobArrives) {
    std::atomic<bool> waiting{false};
    std::thread t = after_start(waiting, [this] { word.store(1); });
    waiting = true;
    wait_awake_on_lent_cpu(word, 0, borrowed_placement_generation(), forever);
    EXPECT_EQ(word.load(), 1u);
    t.join();
}

TEST_F(GuestWait, ItReturnsWhenTheRankEntersAnMpiCall) {
    const int before = threads_in_mpi_calls();
    std::atomic<bool> waiting{false}, left{false};
    std::thread t = after_start(waiting, [&] {
        note_mpi_call(true);
        while (!left.load()) std::this_thread::yield();
        note_mpi_call(false);
    });
    waiting = true;
    wait_awake_on_lent_cpu(word, 0, borrowed_placement_generation(), forever);
    EXPECT_EQ(word.load(), 0u);  // no job came: the MPI call ended the wait
    EXPECT_EQ(threads_in_mpi_calls(), before + 1);
    left = true;
    t.join();
    EXPECT_EQ(threads_in_mpi_calls(), before);
}

TEST_F(GuestWait, ItDoesNotStartWhileTheRankIsInAnMpiCall) {
    note_mpi_call(true);
    wait_awake_on_lent_cpu(word, 0, borrowed_placement_generation(), forever);
    note_mpi_call(false);
    EXPECT_EQ(word.load(), 0u);
}

TEST_F(GuestWait, ItReturnsWhenTheBorrowedCpusChange) {
    const std::uint32_t placed = borrowed_placement_generation();
    std::atomic<bool> waiting{false};
    std::thread t = after_start(waiting, [] { set_borrowed_cores(0, {}); });  // a take-back
    waiting = true;
    wait_awake_on_lent_cpu(word, 0, placed, forever);
    EXPECT_NE(borrowed_placement_generation(), placed);
    t.join();
}

TEST_F(GuestWait, APlacementThatChangedBeforeTheWaitEndsItAtOnce) {
    const std::uint32_t placed = borrowed_placement_generation();
    set_borrowed_cores(0, {});
    wait_awake_on_lent_cpu(word, 0, placed, forever);
    EXPECT_EQ(word.load(), 0u);
}

TEST_F(GuestWait, ItEndsAtItsLimitWhenNothingHappens) {
    const ticks most = static_cast<ticks>(2e-3 * ticks_per_second());
    wait_awake_on_lent_cpu(word, 0, borrowed_placement_generation(), most);
    EXPECT_EQ(word.load(), 0u);
    wait_awake_on_lent_cpu(word, 0, borrowed_placement_generation(), 0);  // no awake phase at all
}

TEST(MpiCallCount, NestedAndConcurrentCallsAreCounted) {
    const int before = threads_in_mpi_calls();
    note_mpi_call(true);
    std::thread other([] { note_mpi_call(true); });
    other.join();
    EXPECT_EQ(threads_in_mpi_calls(), before + 2);
    note_mpi_call(false);
    note_mpi_call(false);
    EXPECT_EQ(threads_in_mpi_calls(), before);
}

}  // namespace
}  // namespace aloe::runtime

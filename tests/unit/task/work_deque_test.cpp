// The Chase–Lev deque (src/task/work_deque.hpp): order on one thread, steal on empty, growth,
// and the property that matters under concurrency: with one owner pushing and popping at
// random and several thieves stealing at once, every pushed item is taken exactly once (by the
// owner or by one thief) and its payload, written before the push, is seen by the taker.
#include "task/work_deque.hpp"

#include "task_test_support.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

namespace aloe::task {
namespace {

using task_test::rng;
using task_test::scaled;
using deque = work_deque<std::uintptr_t>;

TEST(TaskWorkDeque, EmptyDequeGivesNothing) {
    deque d(16);
    std::uintptr_t out = 7;
    EXPECT_FALSE(d.pop(out));
    EXPECT_EQ(d.steal(out), deque::steal_result::empty);
    EXPECT_EQ(d.size(), 0);
    EXPECT_TRUE(d.maybe_empty());

    // Emptied by the owner, then by a thief: empty again each time (no stale element).
    d.push(1);
    ASSERT_TRUE(d.pop(out));
    EXPECT_EQ(out, 1u);
    EXPECT_FALSE(d.pop(out));
    EXPECT_EQ(d.steal(out), deque::steal_result::empty);
    d.push(2);
    ASSERT_EQ(d.steal(out), deque::steal_result::taken);
    EXPECT_EQ(out, 2u);
    EXPECT_EQ(d.steal(out), deque::steal_result::empty);
    EXPECT_FALSE(d.pop(out));
    EXPECT_EQ(d.size(), 0);
}

TEST(TaskWorkDeque, OwnerPopsNewestFirstPastTheInitialCapacity) {
    deque d(16);
    constexpr std::uintptr_t n = 1000;  // 16 → 1024: six growths
    for (std::uintptr_t i = 1; i <= n; ++i) d.push(i);
    EXPECT_EQ(d.size(), static_cast<std::int64_t>(n));
    for (std::uintptr_t i = n; i >= 1; --i) {
        std::uintptr_t out = 0;
        ASSERT_TRUE(d.pop(out));
        ASSERT_EQ(out, i);
    }
    std::uintptr_t out = 0;
    EXPECT_FALSE(d.pop(out));
}

TEST(TaskWorkDeque, ThiefStealsOldestFirstPastTheInitialCapacity) {
    deque d(16);
    constexpr std::uintptr_t n = 1000;
    for (std::uintptr_t i = 1; i <= n; ++i) d.push(i);
    for (std::uintptr_t i = 1; i <= n; ++i) {
        std::uintptr_t out = 0;
        ASSERT_EQ(d.steal(out), deque::steal_result::taken);
        ASSERT_EQ(out, i);
    }
    std::uintptr_t out = 0;
    EXPECT_EQ(d.steal(out), deque::steal_result::empty);
}

// Both ends at once on one thread, with growth while the live range wraps around the ring.
TEST(TaskWorkDeque, BothEndsKeepOrderWhileTheRingWrapsAndGrows) {
    deque d(16);
    std::uintptr_t next = 1, oldest = 1;
    for (int round = 0; round < 40; ++round) {
        for (int i = 0; i < 10; ++i) d.push(next++);  // net +5 per round: wraps, then grows
        for (int i = 0; i < 3; ++i) {
            std::uintptr_t out = 0;
            ASSERT_EQ(d.steal(out), deque::steal_result::taken);
            ASSERT_EQ(out, oldest++);
        }
        for (int i = 0; i < 2; ++i) {
            std::uintptr_t out = 0;
            ASSERT_TRUE(d.pop(out));
            ASSERT_EQ(out, --next);
        }
    }
    EXPECT_EQ(d.size(), static_cast<std::int64_t>(next - oldest));
    for (std::uintptr_t expect = oldest; expect < next; ++expect) {
        std::uintptr_t out = 0;
        ASSERT_EQ(d.steal(out), deque::steal_result::taken);
        ASSERT_EQ(out, expect);
    }
}

TEST(TaskWorkDeque, OwnerTakesTheOldestAsAThiefWouldAndPushesInItsPlace) {
    deque d(16);
    for (std::uintptr_t i = 1; i <= 40; ++i) d.push(i);  // grown past 16 and 32
    std::uintptr_t out = 0;
    for (std::uintptr_t expect = 1; expect <= 100; ++expect) {  // the spawn cut-off's steady state
        ASSERT_EQ(d.take_oldest_past(1, out), deque::take_result::taken);
        ASSERT_EQ(out, expect);
        d.push(expect + 40);
        ASSERT_EQ(d.size(), 40);
    }
    ASSERT_TRUE(d.pop(out));
    EXPECT_EQ(out, 140u) << "the owner's pop still takes the newest";
    for (std::uintptr_t left = 0; d.take_oldest_past(1, out) == deque::take_result::taken; ++left)
        ASSERT_EQ(out, 101 + left);
    EXPECT_EQ(d.size(), 0);
    EXPECT_EQ(d.take_oldest_past(1, out), deque::take_result::none);
    EXPECT_FALSE(d.pop(out));
}

TEST(TaskWorkDeque, OwnerLeavesTheOldestToThievesThatTookSinceItsLastLook) {
    deque d(16);
    for (std::uintptr_t i = 1; i <= 8; ++i) d.push(i);
    std::uintptr_t out = 0;
    ASSERT_EQ(d.take_oldest_past(1, out), deque::take_result::taken);
    EXPECT_EQ(out, 1u);
    ASSERT_TRUE(d.pop(out));  // a pop at the bottom is no theft
    ASSERT_EQ(d.take_oldest_past(1, out), deque::take_result::taken) << "its own takes are no theft";
    EXPECT_EQ(out, 2u);
    ASSERT_EQ(d.steal(out), deque::steal_result::taken);
    EXPECT_EQ(out, 3u);
    EXPECT_EQ(d.take_oldest_past(1, out), deque::take_result::stolen);
    ASSERT_EQ(d.take_oldest_past(1, out), deque::take_result::taken) << "once per look";
    EXPECT_EQ(out, 4u);
}

// One owner, three thieves, a random mix of push bursts, pops and takes of the oldest (the
// seed picks it), items pointing to payloads written just before the push. Each item must be
// taken exactly once.
class TaskWorkDequeRace : public ::testing::TestWithParam<int> {};

TEST_P(TaskWorkDequeRace, EveryItemIsTakenExactlyOnce) {
    const int seed = GetParam();
    const auto items = static_cast<std::size_t>(scaled(40'000, 6'000));
    constexpr int thieves = 3;

    struct payload {
        std::uint64_t check = 0;  // written by the owner before the push, plain memory
    };
    std::vector<payload> payloads(items + 1);
    std::unique_ptr<std::atomic<int>[]> taken(new std::atomic<int>[items + 1]);
    for (std::size_t i = 0; i <= items; ++i) taken[i].store(0, std::memory_order_relaxed);
    std::atomic<std::uint64_t> bad_payloads{0};
    std::atomic<std::uint64_t> by_thieves{0};

    deque d(16);
    std::atomic<bool> owner_done{false};
    std::atomic<int> started{0};
    auto take = [&](std::uintptr_t item) {
        if (item == 0 || item > items) {
            bad_payloads.fetch_add(1, std::memory_order_relaxed);
            return;
        }
        if (payloads[item].check != item * 0x9e3779b97f4a7c15ULL) bad_payloads.fetch_add(1, std::memory_order_relaxed);
        taken[item].fetch_add(1, std::memory_order_relaxed);
    };

    std::vector<std::thread> pool;
    for (int k = 0; k < thieves; ++k)
        pool.emplace_back([&, k] {
            rng r(static_cast<std::uint64_t>(seed) * 131 + static_cast<std::uint64_t>(k) + 1);
            started.fetch_add(1);
            while (started.load() < thieves + 1) std::this_thread::yield();
            for (;;) {
                // Read the flag before the steal: empty after the owner finished means done.
                const bool finished = owner_done.load(std::memory_order_acquire);
                std::uintptr_t item = 0;
                const auto result = d.steal(item);
                if (result == deque::steal_result::taken) {
                    take(item);
                    by_thieves.fetch_add(1, std::memory_order_relaxed);
                    if (r.below(8) == 0) task_test::spin_ns(r.below(2000));
                } else if (result == deque::steal_result::empty) {
                    if (finished) return;
                    if (r.below(4) == 0) std::this_thread::yield();
                }
            }
        });

    rng r(static_cast<std::uint64_t>(seed));
    started.fetch_add(1);
    while (started.load() < thieves + 1) std::this_thread::yield();
    std::uintptr_t next = 1;
    while (next <= items) {
        // A burst of pushes (up to 300: growth while thieves read the old ring), then pops.
        const std::uint64_t burst = 1 + r.below(r.below(4) == 0 ? 300 : 24);
        for (std::uint64_t i = 0; i < burst && next <= items; ++i, ++next) {
            payloads[next].check = next * 0x9e3779b97f4a7c15ULL;
            d.push(next);
        }
        // Pops, and 1 in 3 a take of the oldest (the spawn cut-off's), racing the thieves at top.
        const std::uint64_t pops = r.below(burst + 2);
        for (std::uint64_t i = 0; i < pops; ++i) {
            std::uintptr_t item = 0;
            if (r.below(3) == 0) {
                if (d.take_oldest_past(1, item) == deque::take_result::taken) take(item);
                continue;
            }
            if (!d.pop(item)) break;
            take(item);
        }
        if (r.below(16) == 0) std::this_thread::yield();
    }
    for (std::uintptr_t item = 0; d.pop(item);) take(item);
    owner_done.store(true, std::memory_order_release);
    for (auto& t : pool) t.join();

    EXPECT_EQ(bad_payloads.load(), 0u);
    std::size_t lost = 0, duplicated = 0;
    for (std::size_t i = 1; i <= items; ++i) {
        const int n = taken[i].load();
        lost += n == 0;
        duplicated += n > 1;
    }
    EXPECT_EQ(lost, 0u) << "seed " << seed;
    EXPECT_EQ(duplicated, 0u) << "seed " << seed;
    std::uintptr_t item = 0;
    EXPECT_EQ(d.steal(item), deque::steal_result::empty);
    // Not asserted (it depends on the machine): the thieves took some. Printed for the curious.
    RecordProperty("stolen", static_cast<int>(by_thieves.load()));
}

INSTANTIATE_TEST_SUITE_P(Seeds, TaskWorkDequeRace, ::testing::Range(1, 9));

// The last element, raced by the owner's pop and a thief's steal many times over: exactly one
// of them gets it each time.
TEST(TaskWorkDeque, LastElementGoesToExactlyOneSide) {
    const int rounds = static_cast<int>(scaled(5'000, 1'000));
    deque d(16);
    std::atomic<int> round_go{0};
    std::atomic<int> thief_got{0};
    std::atomic<int> thief_done{0};
    std::thread thief([&] {
        for (int i = 1; i <= rounds; ++i) {
            while (round_go.load(std::memory_order_acquire) < i) std::this_thread::yield();
            std::uintptr_t item = 0;
            deque::steal_result res;
            do res = d.steal(item);
            while (res == deque::steal_result::lost);
            if (res == deque::steal_result::taken) thief_got.fetch_add(1, std::memory_order_relaxed);
            thief_done.store(i, std::memory_order_release);
        }
    });
    int owner_got = 0;
    for (int i = 1; i <= rounds; ++i) {
        d.push(static_cast<std::uintptr_t>(i));
        round_go.store(i, std::memory_order_release);
        std::uintptr_t item = 0;
        if (d.pop(item)) {
            ++owner_got;
            EXPECT_EQ(item, static_cast<std::uintptr_t>(i));
        }
        while (thief_done.load(std::memory_order_acquire) < i) std::this_thread::yield();
        ASSERT_EQ(owner_got + thief_got.load(), i) << "round " << i;
    }
    thief.join();
}

}  // namespace
}  // namespace aloe::task

// Integer arithmetic the schedules share: blocks, fractions, claims near 2^64.
#include "loop/partition.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <thread>
#include <vector>

namespace aloe::loop {
namespace {

constexpr std::uint64_t u64_max = std::numeric_limits<std::uint64_t>::max();

TEST(LoopPartition, BlocksTileTheRangeWithSizesWithinOne) {
    for (std::uint64_t n : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{5}, std::uint64_t{1000003}, u64_max})
        for (std::uint64_t p : {1ULL, 2ULL, 3ULL, 7ULL, 64ULL}) {
            std::uint64_t expected_begin = 0, smallest = u64_max, largest = 0;
            for (std::uint64_t i = 0; i < p; ++i) {
                const chunk c = block_of(i, n, p);
                EXPECT_EQ(c.begin, expected_begin);
                expected_begin = c.end;
                smallest = std::min(smallest, c.end - c.begin);
                largest = std::max(largest, c.end - c.begin);
            }
            EXPECT_EQ(expected_begin, n);
            EXPECT_LE(largest - smallest, 1u);
        }
}

TEST(LoopPartition, BlocksAreOpenMpsStaticSplit) {
    // libgomp (and GCC's inlined schedule(static)): q = n / p, r = n % p; worker t < r runs
    // q + 1 iterations from t(q + 1), the others q from tq + r.
    for (std::uint64_t n : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{2}, std::uint64_t{10},
                            std::uint64_t{1000003}, u64_max - 1, u64_max})
        for (std::uint64_t p : {1ULL, 2ULL, 3ULL, 7ULL}) {
            SCOPED_TRACE("n=" + std::to_string(n) + " p=" + std::to_string(p));
            const std::uint64_t q = n / p, r = n % p;
            for (std::uint64_t t = 0; t < p; ++t) {
                const chunk c = block_of(t, n, p);
                const std::uint64_t size = t < r ? q + 1 : q;
                const std::uint64_t begin = t < r ? t * (q + 1) : t * q + r;
                EXPECT_EQ(c.begin, begin) << "worker " << t;
                EXPECT_EQ(c.end - c.begin, size) << "worker " << t;
            }
        }
    // The case that tells the split from floor(t·n/p) (which gives 3, 3, 4).
    EXPECT_EQ(block_of(0, 10, 3).end, 4u);
    EXPECT_EQ(block_of(1, 10, 3).end, 7u);
    EXPECT_EQ(block_of(2, 10, 3).end, 10u);
    // More workers than iterations: the first n workers run one each.
    for (std::uint64_t t = 0; t < 7; ++t) EXPECT_EQ(block_of(t, 3, 7).end - block_of(t, 3, 7).begin, t < 3 ? 1u : 0u);
}

TEST(LoopPartition, FractionIsFloorAndClamped) {
    EXPECT_EQ(fraction_of(100, 0.0), 0u);
    EXPECT_EQ(fraction_of(100, 1.0), 100u);
    EXPECT_EQ(fraction_of(100, 0.255), 25u);
    EXPECT_EQ(fraction_of(3, 0.5), 1u);
    EXPECT_EQ(fraction_of(u64_max, 1.0), u64_max);
    EXPECT_LE(fraction_of(u64_max, 0.9999999999), u64_max);
    EXPECT_EQ(fraction_of(7, -1.0), 0u);
}

TEST(LoopPartition, WrapDetection) {
    EXPECT_FALSE(fetch_add_may_wrap(1000, 1, 4));
    EXPECT_TRUE(fetch_add_may_wrap(u64_max - 3, 1, 4));
    EXPECT_TRUE(fetch_add_may_wrap(u64_max, 1, 1));
}

TEST(LoopPartition, CasClaimsNeverPassTheLimitNearTwoToThe64) {
    // Two threads claim chunks of 3 from a counter 1000 below 2^64-1 with the CAS path:
    // every iteration exactly once, and the counter never wraps.
    const std::uint64_t limit = u64_max;
    const std::uint64_t start = limit - 1000;
    shared_counter counter;
    counter.next.store(start);
    std::vector<std::vector<chunk>> got(2);
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t)
        threads.emplace_back([&, t] {
            chunk c;
            while (claim(counter.next, 3, limit, true, c)) got[static_cast<std::size_t>(t)].push_back(c);
        });
    for (auto& t : threads) t.join();
    std::vector<int> seen(1000, 0);
    for (const auto& list : got)
        for (const chunk& c : list)
            for (std::uint64_t i = c.begin; i < c.end; ++i) ++seen[i - start];
    for (int s : seen) EXPECT_EQ(s, 1);
    EXPECT_EQ(counter.next.load(), limit);
}

TEST(LoopPartition, FetchAddClaimsClipTheLastChunk) {
    shared_counter counter;
    chunk c;
    ASSERT_TRUE(claim(counter.next, 4, 10, false, c));
    EXPECT_EQ(c.begin, 0u);
    EXPECT_EQ(c.end, 4u);
    ASSERT_TRUE(claim(counter.next, 4, 10, false, c));
    ASSERT_TRUE(claim(counter.next, 4, 10, false, c));
    EXPECT_EQ(c.begin, 8u);
    EXPECT_EQ(c.end, 10u);
    EXPECT_FALSE(claim(counter.next, 4, 10, false, c));
}

}  // namespace
}  // namespace aloe::loop

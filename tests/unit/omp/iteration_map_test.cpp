// omp::iteration_map: libgomp's loop bounds (long and unsigned long long, up and down, any
// step) to logical iterations and back, with the last chunk ending at `end` exactly.
#include "omp/team_region.hpp"

#include <gtest/gtest.h>

#include <climits>
#include <vector>

namespace aloe::omp {
namespace {

// Appends the values `for (v = lo; v < hi (or > hi); v += incr)` visits, stopping before
// the variable would overflow.
void visit(long lo, long hi, long incr, std::vector<long>& out) {
    for (long v = lo; incr > 0 ? v < hi : v > hi; v += incr) {
        out.push_back(v);
        if (incr > 0 ? v > LONG_MAX - incr : v < LONG_MIN - incr) break;
    }
}

// Every value the serial loop visits.
std::vector<long> serial_long(long start, long end, long incr) {
    std::vector<long> out;
    visit(start, end, incr, out);
    return out;
}

// The values GCC's generated code visits for chunks [istart, iend) of `chunk` iterations.
std::vector<long> chunked_long(const iteration_map& m, std::uint64_t chunk, long incr) {
    std::vector<long> out;
    for (std::uint64_t b = 0; b < m.count; b += chunk) {
        std::uint64_t first = 0, last = 0;
        m.bounds({b, std::min(m.count, b + chunk)}, first, last);
        visit(static_cast<long>(first), static_cast<long>(last), incr, out);
    }
    return out;
}

TEST(IterationMap, LongLoopsOfEveryShapeVisitTheSerialValues) {
    struct shape { long start, end, incr; };
    const shape shapes[] = {{0, 10, 1},    {0, 10, 3},     {10, 0, -1},   {10, 0, -3},   {-7, 7, 2},
                            {5, 5, 1},     {6, 5, 1},      {5, 6, -1},    {0, 1, 1},     {0, 1, 1000},
                            {LONG_MAX - 300, LONG_MAX - 1, 7}, {LONG_MIN + 1, LONG_MIN + 200, 3},
                            {LONG_MAX, LONG_MIN, -LONG_MAX}};
    for (const shape& s : shapes) {
        const iteration_map m = iteration_map::for_long(s.start, s.end, s.incr);
        const std::vector<long> want = serial_long(s.start, s.end, s.incr);
        EXPECT_EQ(m.count, want.size()) << s.start << " " << s.end << " " << s.incr;
        for (std::uint64_t chunk : {1u, 2u, 5u, 1000u})
            EXPECT_EQ(chunked_long(m, chunk, s.incr), want) << s.start << " " << s.end << " " << s.incr << " chunk " << chunk;
    }
}

TEST(IterationMap, LastChunkEndsAtTheLoopsEndAsLibgompDoes) {
    // lastprivate code compares the iteration variable with the end; libgomp clamps to it.
    const iteration_map m = iteration_map::for_long(0, 10, 3);  // 0 3 6 9
    std::uint64_t first = 0, last = 0;
    m.bounds({2, 4}, first, last);
    EXPECT_EQ(static_cast<long>(first), 6);
    EXPECT_EQ(static_cast<long>(last), 10);
    m.bounds({0, 2}, first, last);
    EXPECT_EQ(static_cast<long>(last), 6);
}

TEST(IterationMap, UnsignedLoopsUpAndDown) {
    using ull = unsigned long long;
    const iteration_map up = iteration_map::for_ull(true, 5, 20, 5);  // 5 10 15
    EXPECT_EQ(up.count, 3u);
    const iteration_map down = iteration_map::for_ull(false, 20, 5, static_cast<ull>(-5));  // 20 15 10
    EXPECT_EQ(down.count, 3u);
    std::uint64_t first = 0, last = 0;
    down.bounds({1, 3}, first, last);
    EXPECT_EQ(first, 15u);
    EXPECT_EQ(last, 5u);
    const iteration_map huge = iteration_map::for_ull(true, 0, ~0ULL, 1);
    EXPECT_EQ(huge.count, ~0ULL);
    EXPECT_EQ(iteration_map::for_ull(true, 7, 7, 1).count, 0u);
    EXPECT_EQ(iteration_map::for_ull(false, 7, 9, static_cast<ull>(-1)).count, 0u);
    EXPECT_EQ(iteration_map::for_ull(true, 7, 9, 0).count, 0u);
}

}  // namespace
}  // namespace aloe::omp

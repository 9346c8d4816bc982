// White-box tests of each schedule, driven without a team (schedule_driver.hpp).
#include "loop/any_schedule.hpp"
#include "unit/loop/schedule_driver.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

namespace aloe::loop {
namespace {

using testing::drive;
using testing::exactly_once;

// Builds the state for `spec` over `count` iterations on `threads` workers.
struct built {
    runtime::arena arena;
    site_history history;
    any_schedule state;
    built(const std::string& spec, std::uint64_t count, int threads, const site_history& h = {}) : history(h) {
        const schedule s(spec);
        make_schedule(state, loop_setup{count, threads, s, history, arena});
    }
};

template <class F>
testing::drive_result visit_built_state(any_schedule& state, F&& f) {
    return std::visit(
        [&](auto& s) {
            if constexpr (std::is_same_v<std::decay_t<decltype(s)>, std::monostate>) {
                ADD_FAILURE() << "schedule was not built";
                return testing::drive_result{};
            } else {
                return f(s);
            }
        },
        state);
}

template <class F>
auto visit_built(built& b, F&& f) {
    return visit_built_state(b.state, std::forward<F>(f));
}

testing::drive_result run(const std::string& spec, std::uint64_t count, int threads,
                          const std::function<bool(int, std::uint64_t)>& moves = {}, const site_history& h = {}) {
    built b(spec, count, threads, h);
    return visit_built(b, [&](auto& s) { return drive(s, count, threads, moves); });
}

const std::vector<std::string> every_schedule = {
    "static",
    "static,chunk=3",
    "dynamic,chunk=1",
    "dynamic,chunk=7",
    "guided,chunk=2",
    "guided,chunk=2,divisor=2",
    "hybrid,fs=0,chunk=1",
    "hybrid,fs=0.6,chunk=5",
    "hybrid,fs=1",
    "staggered,fs=0,chunk=1",
    "staggered,fs=0.5,chunk=3",
    "staggered,fs=0.9,chunk=2,queue=mutex",
    "staggered,fs=1",
    "weighted,fs=1",
    "weighted,fs=0.5,chunk=4",
    "tasklets,n=1",
    "tasklets,n=16,fs=0.5,skew=4",
    "tasklets,n=1000,fs=0,skew=1,locality=0",
};

TEST(LoopSchedules, EveryIterationOnceWithEqualPace) {
    for (const std::string& spec : every_schedule)
        for (std::uint64_t n : {1ULL, 2ULL, 3ULL, 31ULL, 1000ULL, 4099ULL})
            for (int p : {1, 2, 3, 8}) {
                SCOPED_TRACE(spec + " n=" + std::to_string(n) + " p=" + std::to_string(p));
                EXPECT_TRUE(exactly_once(run(spec, n, p)));
            }
}

TEST(LoopSchedules, EveryIterationOnceWhenOneWorkerIsSlow) {
    // Worker 0 moves one turn in five: the others must take its dynamic work.
    const auto slow0 = [](int w, std::uint64_t turn) { return w != 0 || turn % 5 == 0; };
    for (const std::string& spec : every_schedule)
        for (std::uint64_t n : {7ULL, 1000ULL})
            for (int p : {2, 3, 5}) {
                SCOPED_TRACE(spec + " n=" + std::to_string(n) + " p=" + std::to_string(p));
                EXPECT_TRUE(exactly_once(run(spec, n, p, slow0)));
            }
}

TEST(LoopSchedules, StaticBlocksAreContiguousAndBalanced) {
    const auto r = run("static", 10, 4);
    // OpenMP's split: the first 10 mod 4 workers run one more: 0..3, 3..6, 6..8, 8..10
    const std::vector<int> expected = {0, 0, 0, 1, 1, 1, 2, 2, 3, 3};
    EXPECT_EQ(r.owner, expected);
}

TEST(LoopSchedules, StaticMapsIterationsToThreadsAsOpenMpDoes) {
    // libgomp's static: without a chunk q = n/p, r = n%p, thread t < r runs q+1 iterations
    // from t(q+1), the others q from tq+r; with chunk c, chunk k runs on thread k mod p, and
    // each thread takes its chunks in increasing order.
    for (std::uint64_t n : {0ULL, 1ULL, 2ULL, 10ULL, 31ULL, 1009ULL, 4099ULL})
        for (int p : {1, 2, 3, 7})
            for (int c : {0, 1, 2, 7, 5000}) {
                SCOPED_TRACE("n=" + std::to_string(n) + " p=" + std::to_string(p) + " chunk=" + std::to_string(c));
                const auto r = run(c == 0 ? std::string("static") : "static,chunk=" + std::to_string(c), n, p);
                const auto P = static_cast<std::uint64_t>(p);
                const std::uint64_t q = n / P, rem = n % P;
                for (std::uint64_t i = 0; i < n; ++i) {
                    const std::uint64_t want = c > 0 ? (i / static_cast<std::uint64_t>(c)) % P
                                               : i < rem * (q + 1) ? i / (q + 1)
                                                                   : rem + (i - rem * (q + 1)) / q;
                    ASSERT_EQ(r.owner[i], static_cast<int>(want)) << "iteration " << i;
                }
                std::vector<std::uint64_t> last(P, 0);
                std::vector<bool> any(P, false);
                for (const auto& ch : r.chunks) {
                    const auto w = static_cast<std::size_t>(ch.worker);
                    if (any[w]) {
                        EXPECT_GT(ch.range.begin, last[w]) << "worker " << ch.worker << " went back";
                    }
                    any[w] = true;
                    last[w] = ch.range.begin;
                    EXPECT_TRUE(ch.is_static);
                }
            }
}

TEST(LoopSchedules, StaticCyclicDealsChunksRoundRobin) {
    const auto r = run("static,chunk=2", 11, 3);
    const std::vector<int> expected = {0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2};
    EXPECT_EQ(r.owner, expected);
}

TEST(LoopSchedules, StaticOfAnEmptyLoopHandsNoChunk) {
    for (const char* spec : {"static", "static,chunk=1", "static,chunk=3"}) {
        SCOPED_TRACE(spec);
        built b(spec, 0, 3);
        visit_built(b, [&](auto& s) {
            for (int w = 0; w < 3; ++w) {
                worker_cursor cur;
                cur.id = w;
                chunk c;
                EXPECT_FALSE(s.next_static(cur, c)) << "worker " << w;
            }
            return testing::drive_result{};
        });
    }
}

TEST(LoopSchedules, StaggeredWithoutImbalanceIsStaticMapWithNoSteals) {
    // The target: with no imbalance, staggered runs exactly static's map and never
    // steals. Equal pace and a count divisible by the workers is "no imbalance".
    for (const char* spec : {"staggered,fs=0,chunk=1", "staggered,fs=0.5,chunk=4", "staggered,fs=0.8,chunk=1,queue=mutex"})
        for (int p : {1, 2, 4, 8}) {
            SCOPED_TRACE(std::string(spec) + " p=" + std::to_string(p));
            const std::uint64_t n = 64ULL * static_cast<std::uint64_t>(p);
            const auto stag = run(spec, n, p);
            const auto stat = run("static", n, p);
            EXPECT_EQ(stag.owner, stat.owner);
            EXPECT_EQ(std::accumulate(stag.steals.begin(), stag.steals.end(), std::uint64_t{0}), 0u);
        }
}

TEST(LoopSchedules, StaggeredWithBlockWeightsSplitsByWeightAndRunsEachIterationOnce) {
    // adaptive's slow-core mode: worker t's block is its weight's share of the loop; the
    // static part is fs of that block; the map stays contiguous per worker.
    const std::vector<double> weights{1.0, 3.0, 2.0, 2.0};
    for (const char* spec : {"staggered,fs=1,chunk=1", "staggered,fs=0.5,chunk=3", "staggered,fs=0,chunk=2,queue=mutex"}) {
        SCOPED_TRACE(spec);
        runtime::arena arena;
        site_history history;
        any_schedule state;
        const schedule sch(spec);
        const std::uint64_t n = 800;
        make_schedule(state, loop_setup{n, 4, sch, history, arena, weights});
        const auto r = visit_built_state(state, [&](auto& s) { return drive(s, n, 4); });
        ASSERT_TRUE(exactly_once(r));
        // Static chunks: worker 1's static part starts at 100 (worker 0's share: 800 · 1/8).
        for (const auto& c : r.chunks) {
            if (!c.is_static) continue;
            const std::uint64_t begins[] = {0, 100, 400, 600};
            EXPECT_EQ(c.range.begin, begins[c.worker]) << "worker " << c.worker;
            EXPECT_EQ(c.range.end - c.range.begin,
                      static_cast<std::uint64_t>(sch.static_fraction() * static_cast<double>(weights[static_cast<std::size_t>(c.worker)] * 100)))
                << "worker " << c.worker;
        }
        // Own chunks (static and own queue) lie inside the worker's weighted block.
        const std::uint64_t bounds[] = {0, 100, 400, 600, 800};
        for (const auto& c : r.chunks) {
            if (c.how == take::stolen) continue;
            EXPECT_GE(c.range.begin, bounds[c.worker]) << "worker " << c.worker;
            EXPECT_LE(c.range.end, bounds[c.worker + 1]) << "worker " << c.worker;
        }
    }
}

TEST(LoopSchedules, StaggeredStealsFromNearestNeighbourFirst) {
    // Workers 1 and 3 of 5 stop after their static parts. Worker 0's nearest neighbour with
    // work is 1, worker 4's is 3: each must drain that neighbour rather than reach across to
    // the farther stuck queue (distance 3). Blocks of 100, static 10%, queues of 90.
    const std::uint64_t n = 500;
    const auto stuck13 = [](int w, std::uint64_t turn) { return (w != 1 && w != 3) || turn == 0 || turn > 100000; };
    const auto r = run("staggered,fs=0.1,chunk=1", n, 5, stuck13);
    ASSERT_TRUE(exactly_once(r));
    std::uint64_t w0_from_1 = 0, w0_from_3 = 0, w4_from_3 = 0, w4_from_1 = 0;
    for (std::uint64_t i = 110; i < 200; ++i) {
        w0_from_1 += r.owner[i] == 0;
        w4_from_1 += r.owner[i] == 4;
    }
    for (std::uint64_t i = 310; i < 400; ++i) {
        w0_from_3 += r.owner[i] == 0;
        w4_from_3 += r.owner[i] == 4;
    }
    EXPECT_GE(w0_from_1, 40u);
    EXPECT_GE(w4_from_3, 40u);
    EXPECT_LE(w0_from_3, 1u) << "worker 0 reached past its stuck neighbour 1";
    EXPECT_LE(w4_from_1, 1u) << "worker 4 reached past its stuck neighbour 3";
    // Worker 2 sits between two stuck queues: it takes from both (distance 1 each side).
    std::uint64_t w2_from_1 = 0, w2_from_3 = 0;
    for (std::uint64_t i = 110; i < 200; ++i) w2_from_1 += r.owner[i] == 2;
    for (std::uint64_t i = 310; i < 400; ++i) w2_from_3 += r.owner[i] == 2;
    EXPECT_GT(w2_from_1, 0u);
    EXPECT_GT(w2_from_3, 0u);
}

TEST(LoopSchedules, StaggeredNeverWrapsAround) {
    // Worker 0 is stuck: worker 1 (distance 1) takes its queue; worker 3 may help only at
    // distance 3 (never through a wrap to "worker -1").
    const std::uint64_t n = 400;
    const auto stuck0 = [](int w, std::uint64_t turn) { return w != 0 || turn == 0 || turn > 100000; };
    const auto r = run("staggered,fs=0,chunk=1", n, 4, stuck0);
    EXPECT_TRUE(exactly_once(r));
    EXPECT_GT(r.steals[1], 0u);
}

TEST(LoopSchedules, HybridStaticPartIsTheFirstFractionInBlocks) {
    const auto r = run("hybrid,fs=0.5,chunk=1", 100, 2);
    for (std::uint64_t i = 0; i < 25; ++i) EXPECT_EQ(r.owner[i], 0);
    for (std::uint64_t i = 25; i < 50; ++i) EXPECT_EQ(r.owner[i], 1);
    std::uint64_t static_iters = 0;
    for (const auto& c : r.chunks) static_iters += c.is_static ? c.range.end - c.range.begin : 0;
    EXPECT_EQ(static_iters, 50u);
}

TEST(LoopSchedules, GuidedChunksShrinkButNotBelowChunk) {
    const auto r = run("guided,chunk=3", 1000, 4);
    std::uint64_t prev = ~0ULL;
    for (const auto& c : r.chunks) {
        const std::uint64_t size = c.range.end - c.range.begin;
        EXPECT_LE(size, prev);
        if (c.range.end != 1000) {
            EXPECT_GE(size, 3u);
        }
        prev = size;
    }
    EXPECT_EQ(r.chunks.front().range.end - r.chunks.front().range.begin, 250u);  // ceil(1000/4)
}

TEST(LoopSchedules, GuidedDivisorShrinksTheFirstChunksAsLibompDoes) {
    // divisor=2: ceil(remaining / (2·p)), LLVM libomp's rule: on 2 threads the first chunk is a
    // quarter of the loop, not half, and the next ones follow from what is left.
    const auto r = run("guided,chunk=1,divisor=2", 1000, 2);
    ASSERT_GE(r.chunks.size(), 3u);
    std::vector<std::uint64_t> sizes;
    for (const auto& c : r.chunks) sizes.push_back(c.range.end - c.range.begin);
    std::sort(sizes.rbegin(), sizes.rend());
    EXPECT_EQ(sizes[0], 250u);  // ceil(1000 / 4)
    EXPECT_EQ(sizes[1], 188u);  // ceil(750 / 4)
    EXPECT_EQ(schedule("guided,chunk=1,divisor=2").to_string(), "guided,chunk=1,divisor=2");
    EXPECT_EQ(schedule("guided,divisor=1").to_string(), "guided,chunk=1");
    EXPECT_EQ(schedule::guided(1, 2), schedule("guided,divisor=2"));
}

TEST(LoopSchedules, StaticPartWritesNoSharedMemory) {
    // STYLE.md: the static part reads only thread-private data and writes nothing shared.
    for (const std::string& spec : every_schedule) {
        SCOPED_TRACE(spec);
        built b(spec, 1000, 4);
        std::vector<std::vector<std::byte>> before;
        for (auto region : b.arena.used_regions()) before.emplace_back(region.begin(), region.end());
        std::visit(
            [](auto& s) {
                if constexpr (!std::is_same_v<std::decay_t<decltype(s)>, std::monostate>) {
                    for (int w = 0; w < 4; ++w) {
                        worker_cursor cur;
                        cur.id = w;
                        chunk c;
                        while (s.next_static(cur, c)) {
                        }
                    }
                }
            },
            b.state);
        const auto after = b.arena.used_regions();
        ASSERT_EQ(after.size(), before.size());
        for (std::size_t i = 0; i < after.size(); ++i)
            EXPECT_EQ(0, std::memcmp(after[i].data(), before[i].data(), after[i].size()));
    }
}

TEST(LoopSchedules, FullyStaticSchedulesNeverTakeDynamicWork) {
    for (const char* spec : {"static", "hybrid,fs=1", "staggered,fs=1", "weighted,fs=1"}) {
        SCOPED_TRACE(spec);
        const auto r = run(spec, 1000, 4);
        for (const auto& c : r.chunks) EXPECT_TRUE(c.is_static);
    }
}

TEST(LoopSchedules, TaskletsRecordWhoRanThemForTheNextRun) {
    // Run 1 with worker 0 slow, so others take some of its tasklets; the history then names,
    // for every tasklet, the worker that really ran it.
    const std::uint64_t n = 640;
    const int p = 4;
    built first("tasklets,n=32,fs=0", n, p);
    const auto slow0 = [](int w, std::uint64_t turn) { return w != 0 || turn % 3 == 0; };
    auto r1 = visit_built(first, [&](auto& s) { return drive(s, n, p, slow0); });
    ASSERT_TRUE(exactly_once(r1));
    site_history h;
    commit_schedule(first.state, r1.records, h);
    ASSERT_EQ(h.tasklet_owner.size(), 32u);
    for (std::size_t j = 0; j < 32; ++j) EXPECT_EQ(h.tasklet_owner[j], r1.owner[j * 20]) << "tasklet " << j;
    EXPECT_GT(std::accumulate(r1.steals.begin(), r1.steals.end(), std::uint64_t{0}), 0u);
}

TEST(LoopSchedules, TaskletsWithLocalityGoBackToTheirLastOwner) {
    // A history in which tasklet j last ran on worker (j + 1) mod p, 8 tasklets each: at equal
    // pace every worker takes exactly its own tasklets again, and nobody steals.
    const std::uint64_t n = 640;
    const int p = 4;
    site_history h;
    h.team_size = p;
    for (int j = 0; j < 32; ++j) h.tasklet_owner.push_back((j + 1) % p);
    const auto r = run("tasklets,n=32,fs=0", n, p, {}, h);
    ASSERT_TRUE(exactly_once(r));
    for (std::size_t j = 0; j < 32; ++j) EXPECT_EQ(r.owner[j * 20], h.tasklet_owner[j]) << "tasklet " << j;
    EXPECT_EQ(std::accumulate(r.steals.begin(), r.steals.end(), std::uint64_t{0}), 0u);
    // Without locality the same history is ignored: the queue is taken in order.
    const auto plain = run("tasklets,n=32,fs=0,locality=0", n, p, {}, h);
    EXPECT_EQ(plain.owner[0], 0);
}

TEST(LoopSchedules, TaskletsFirstRunFollowsStaticOwnership) {
    const auto r = run("tasklets,n=8,fs=0", 80, 4);
    for (std::uint64_t i = 0; i < 80; ++i) EXPECT_EQ(r.owner[i], static_cast<int>(i / 20)) << i;
}

TEST(LoopSchedules, WeightedGivesTheSlowWorkerLessStaticWork) {
    // Synthetic records: worker 1 runs its static part at half the speed of worker 0.
    site_history h;
    built first("weighted,fs=1", 1000, 2);
    std::vector<worker_record> rec(2);
    rec[0] = {0, 1000, 1000, 500, 0, 0, 0};
    rec[1] = {0, 2000, 2000, 500, 0, 0, 0};
    for (int run = 0; run < 10; ++run) commit_schedule(first.state, rec, h);
    ASSERT_EQ(h.weights.size(), 2u);
    EXPECT_NEAR(h.weights[0] / h.weights[1], 2.0, 0.01);
    const auto r = run("weighted,fs=1", 1200, 2, {}, h);
    // Shares follow the weights (2:1), to within the one iteration that rounding moves.
    EXPECT_NEAR(static_cast<double>(std::count(r.owner.begin(), r.owner.end(), 0)), 800.0, 1.0);
    EXPECT_EQ(std::count(r.owner.begin(), r.owner.end(), 0) + std::count(r.owner.begin(), r.owner.end(), 1), 1200);
}

TEST(LoopSchedules, WeightedSharesSumExactly) {
    std::vector<double> w = {1.0, 3.0, 0.5, 2.25, 1e-3};
    for (std::uint64_t total : {0ULL, 1ULL, 7ULL, 1000003ULL, (1ULL << 62) + 12345ULL}) {
        std::vector<std::uint64_t> shares(w.size());
        weighted_split::split_by_weight(total, w, shares);
        EXPECT_EQ(std::accumulate(shares.begin(), shares.end(), std::uint64_t{0}), total) << total;
    }
}

TEST(LoopSchedules, WeightsAreClampedAndIgnoreEmptyRuns) {
    std::vector<double> w = {1.0, 1.0};
    std::vector<worker_record> rec(2);
    rec[0] = {0, 1, 1, 1000, 0, 0, 0};
    rec[1] = {0, 1000000, 1000000, 1, 0, 0, 0};
    for (int i = 0; i < 50; ++i) weighted_split::update_weights(w, rec);
    EXPECT_LE(w[0], 8.0);
    EXPECT_GE(w[1], 1.0 / 8.0);
    std::vector<double> unchanged = w;
    rec[1].static_iterations = 0;  // nothing measured for worker 1
    weighted_split::update_weights(w, rec);
    EXPECT_EQ(w, unchanged);
}

TEST(LoopSchedules, TaskletCutIsMonotoneCompleteAndSkewed) {
    for (double skew : {1.0, 2.0, 4.0, 100.0})
        for (std::size_t k : {1u, 2u, 7u, 32u, 100u}) {
            std::vector<std::uint64_t> b(k + 1);
            tasklet_queue::cut(1000, 100000, skew, b);
            EXPECT_EQ(b.front(), 1000u);
            EXPECT_EQ(b.back(), 101000u);
            for (std::size_t j = 1; j <= k; ++j) EXPECT_LE(b[j - 1], b[j]);
            if (k >= 7) {
                const double first = static_cast<double>(b[1] - b[0]);
                const double last = static_cast<double>(b[k] - b[k - 1]);
                EXPECT_NEAR(first / last, skew, skew * 0.2) << "skew " << skew << " k " << k;
            }
        }
}

TEST(LoopSchedules, MutexAndAtomicQueuesGiveTheSameMap) {
    const auto slow1 = [](int w, std::uint64_t turn) { return w != 1 || turn % 4 == 0; };
    const auto a = run("staggered,fs=0.25,chunk=2,queue=atomic", 999, 3, slow1);
    const auto m = run("staggered,fs=0.25,chunk=2,queue=mutex", 999, 3, slow1);
    EXPECT_EQ(a.owner, m.owner);
}

}  // namespace
}  // namespace aloe::loop

// Conformance of aloe::parallel_for (include/aloe/parallel_for.hpp): every iteration runs
// exactly once for every schedule family, range shape, team size and body form, also with
// random delays and on a reused team; the overloads on the process team; nested loops run
// serially on the calling thread; concurrent callers on one team all complete.
#include "conformance/coverage.hpp"

#include <aloe/aloe.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace aloe_conformance;

class ConformanceParallelFor : public ::testing::TestWithParam<schedule_family> {};

// Runs the loop once with an index body and once with a subrange body; both must cover
// the range exactly once (and the subrange body must see well-formed subranges and thread
// ids inside the team).
void expect_exactly_once_both_forms(aloe::team& t, const range_shape& r, const aloe::schedule& s,
                                    const delay_plan* delays = nullptr) {
    coverage c(r, t.size());
    {
        SCOPED_TRACE("index body");
        aloe::parallel_for(t, r.first, r.last, r.step, s, [&](std::int64_t i) {
            const auto k = c.hit(i);
            if (delays && k) delays->apply(*k);
        });
        EXPECT_TRUE(c.exactly_once());
    }
    c.clear();
    {
        SCOPED_TRACE("subrange body");
        aloe::parallel_for(t, r.first, r.last, r.step, s, [&](aloe::subrange sub, int thread) {
            const auto [begin, end] = c.check_subrange(sub, thread);
            if (delays)
                for (std::uint64_t k = begin; k < end; ++k) delays->apply(k);
        });
        EXPECT_TRUE(c.exactly_once());
    }
}

TEST_P(ConformanceParallelFor, EveryIterationOnceForEveryRangeShape) {
    for (const int size : team_sizes()) {
        aloe::team t(size);
        ASSERT_EQ(t.size(), size);
        for (const std::string& spec : GetParam().specs) {
            const aloe::schedule s(spec);
            for (const range_shape& r : range_shapes()) {
                SCOPED_TRACE(::testing::Message() << "team " << size << ", schedule '" << spec << "', range " << r);
                expect_exactly_once_both_forms(t, r, s);
            }
        }
    }
}

TEST_P(ConformanceParallelFor, EveryIterationOnceWithRandomDelaysAndTeamReuse) {
    // Three loops per configuration on the same team: a plain one, one next to INT64_MAX
    // with step 3, and one with a negative step; each with its own seeded delay plan.
    const std::vector<range_shape> shapes{
        {"delayed 0..1500", 0, 1500, 1},
        {"delayed near INT64_MAX step 3", i64_max - 3 * 1200, i64_max, 3},
        {"delayed negative step", 700, -1300, -2},
    };
    const int repeats = 2;
    std::uint32_t seed = 0x5eed0000u;
    for (const int size : team_sizes()) {
        aloe::team t(size);
        for (const std::string& spec : GetParam().specs) {
            const aloe::schedule s(spec);
            for (int rep = 0; rep < repeats; ++rep) {
                for (const range_shape& r : shapes) {
                    ++seed;
                    SCOPED_TRACE(::testing::Message() << "team " << size << ", schedule '" << spec << "', range " << r
                                                      << ", repeat " << rep << ", delay seed " << seed);
                    const delay_plan delays(reference_count(r.first, r.last, r.step), seed);
                    expect_exactly_once_both_forms(t, r, s, &delays);
                }
            }
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Families, ConformanceParallelFor, ::testing::ValuesIn(schedule_families()),
                         [](const ::testing::TestParamInfo<schedule_family>& p) { return std::string(p.param.name); });

TEST(ConformanceParallelForOverloads, ProcessTeamOverloadsCoverTheRange) {
    aloe::team& g = aloe::team::global();
    ASSERT_GE(g.size(), 1);
    {
        SCOPED_TRACE("first, last, step, schedule, body");
        coverage c(-10, 300, 3);
        aloe::parallel_for(-10, 300, 3, "dynamic,chunk=4", [&](std::int64_t i) { c.hit(i); });
        EXPECT_TRUE(c.exactly_once());
    }
    {
        SCOPED_TRACE("first, last, schedule, subrange body");
        coverage c(5, 1234, 1, g.size());
        aloe::parallel_for(5, 1234, aloe::schedule::staggered(0.5, 7), [&](aloe::subrange r, int thread) {
            c.check_subrange(r, thread);
        });
        EXPECT_TRUE(c.exactly_once());
    }
    {
        SCOPED_TRACE("first, last, body (ALOE_SCHEDULE or static)");
        coverage c(0, 777, 1);
        aloe::parallel_for(0, 777, [&](std::int64_t i) { c.hit(i); });
        EXPECT_TRUE(c.exactly_once());
    }
    {
        SCOPED_TRACE("team, first, last, schedule, body (step 1)");
        coverage c(i64_max - 100, i64_max, 1);
        aloe::parallel_for(g, i64_max - 100, i64_max, aloe::schedule::guided(3), [&](std::int64_t i) { c.hit(i); });
        EXPECT_TRUE(c.exactly_once());
    }
}

TEST(ConformanceParallelForOverloads, BuiltSchedulesCoverTheRange) {
    aloe::team t(3);
    const std::vector<aloe::schedule> built{
        aloe::schedule::static_blocks(),    aloe::schedule::static_cyclic(2),
        aloe::schedule::dynamic(),          aloe::schedule::guided(2),
        aloe::schedule::hybrid(0.6, 5),     aloe::schedule::staggered(0.4, 3, aloe::queue_claim::mutex),
        aloe::schedule::weighted(0.8, 2),   aloe::schedule::tasklets(9, 0.1, 3.0, false),
        aloe::schedule(),
    };
    for (const aloe::schedule& s : built) {
        SCOPED_TRACE(s.to_string());
        coverage c(i64_min, i64_min + 3000, 2);
        aloe::parallel_for(t, i64_min, i64_min + 3000, 2, s, [&](std::int64_t i) { c.hit(i); });
        EXPECT_TRUE(c.exactly_once());
    }
}

// ---- Loops of up to 2^64 - 1 iterations ------------------------------------------------

// Schedules that split 2^64 iterations into few chunks: static blocks, guided, and the
// largest chunk (2^40) for dynamic parts kept small by a static fraction close to 1. They
// reach the 128-bit partition arithmetic, fractions of counts near 2^64 and the claims that
// must not wrap a 64-bit counter.
const std::vector<std::string> few_chunk_specs{
    "static",
    "guided,chunk=1",
    "guided,chunk=1099511627776",
    "hybrid,fs=1,chunk=1",
    "hybrid,fs=0.999999,chunk=1099511627776",
    "staggered,fs=1,chunk=1",
    "staggered,fs=0.999999,chunk=1099511627776,queue=atomic",
    "staggered,fs=0.999999,chunk=1099511627776,queue=mutex",
    "weighted,fs=1,chunk=1",
    "weighted,fs=0.999999,chunk=1099511627776",
    "tasklets,n=1000,fs=0,skew=10,locality=1",
    "tasklets,n=500,fs=0.5,skew=1,locality=0",
};

const std::vector<range_shape> huge_ranges{
    {"full range step 1", i64_min, i64_max, 1},
    {"full range step -1", i64_max, i64_min, -1},
    {"full range step 3", i64_min, i64_max, 3},
    {"0 to INT64_MAX", 0, i64_max, 1},
};

TEST(ConformanceHugeLoops, NearlyTwoToThe64IterationsRunExactlyOnceInFewChunks) {
    for (const int size : {1, 3, oversubscribed_team_size()}) {
        aloe::team t(size);
        for (const std::string& spec : few_chunk_specs) {
            for (const range_shape& r : huge_ranges) {
                SCOPED_TRACE(::testing::Message() << "team " << size << ", schedule '" << spec << "', range " << r);
                interval_coverage c(r.first, r.last, r.step);
                std::atomic<int> bad_thread{0};
                // The body records each subrange; it must not walk 2^64 iterations.
                aloe::parallel_for(t, r.first, r.last, r.step, aloe::schedule(spec), [&](aloe::subrange sub, int thread) {
                    if (thread < 0 || thread >= size) bad_thread.fetch_add(1);
                    c.add(sub);
                });
                EXPECT_TRUE(c.exactly_once());
                EXPECT_EQ(bad_thread.load(), 0);
            }
        }
    }
}

// ---- Nested loops ------------------------------------------------------------------------

// A loop inside a loop body of the same team runs on its caller and the workers idle at that
// moment (DESIGN.md "Team"; docs/ARCHITECTURE.md "One worker loop"): here the outer loop's
// workers turn idle as its chunks run out, so later inner loops may get helpers. Either way
// every inner iteration runs exactly once, nothing waits for ever, and each inner call is
// counted once, as a parallel or a serial run.
TEST(ConformanceNested, InnerLoopRunsOnItsCallerAndTheIdleWorkers) {
    aloe::team t(3);
    constexpr std::int64_t outer_n = 40, inner_n = 25;
    const aloe::loop_site inner_site("conformance/nested/inner-same-team");
    const aloe::loop_site outer_site("conformance/nested/outer-same-team");
    coverage outer(0, outer_n, 1);
    coverage inner(0, outer_n * inner_n, 1, t.size());

    aloe::parallel_for(
        t, 0, outer_n, 1, "dynamic,chunk=1",
        [&](std::int64_t o) {
            outer.hit(o);
            aloe::parallel_for(
                t, o * inner_n, (o + 1) * inner_n, 1, "dynamic,chunk=2", [&](std::int64_t j) { inner.hit(j); },
                inner_site);
        },
        outer_site);

    EXPECT_TRUE(outer.exactly_once());
    EXPECT_TRUE(inner.exactly_once());
    const auto inner_stats = aloe::stats_of(inner_site);
    ASSERT_TRUE(inner_stats.has_value());
    EXPECT_EQ(inner_stats->serial_invocations + inner_stats->invocations, static_cast<std::uint64_t>(outer_n));
    EXPECT_EQ(inner_stats->iterations, static_cast<std::uint64_t>(outer_n * inner_n));
    const auto outer_stats = aloe::stats_of(outer_site);
    ASSERT_TRUE(outer_stats.has_value());
    EXPECT_EQ(outer_stats->invocations, 1u);
}

TEST(ConformanceNested, InnerLoopOnAnotherTeamRunsSeriallyWithSubrangeBody) {
    aloe::team outer_team(3);
    aloe::team inner_team(2);
    constexpr std::int64_t outer_n = 30, inner_n = 17;
    const aloe::loop_site inner_site("conformance/nested/inner-other-team");
    coverage inner(0, outer_n * inner_n * 3, 3, inner_team.size());
    std::atomic<int> wrong_thread{0};

    aloe::parallel_for(outer_team, 0, outer_n, 1, "staggered,fs=0.5,chunk=2", [&](aloe::subrange r, int) {
        for (const std::int64_t o : r) {
            const std::thread::id me = std::this_thread::get_id();
            aloe::parallel_for(
                inner_team, o * inner_n * 3, (o + 1) * inner_n * 3, 3, "hybrid,fs=0.5,chunk=1",
                [&](aloe::subrange ir, int thread) {
                    inner.check_subrange(ir, thread);
                    if (std::this_thread::get_id() != me) wrong_thread.fetch_add(1);
                },
                inner_site);
        }
    });

    EXPECT_TRUE(inner.exactly_once());
    EXPECT_EQ(wrong_thread.load(), 0);
    const auto st = aloe::stats_of(inner_site);
    ASSERT_TRUE(st.has_value());
    EXPECT_EQ(st->serial_invocations, static_cast<std::uint64_t>(outer_n));
    EXPECT_EQ(st->invocations, 0u);
}

TEST(ConformanceNested, ThreeLevelsOnTheProcessTeamCoverEverything) {
    constexpr std::int64_t n = 12;
    coverage c(0, n * n * n, 1);
    aloe::parallel_for(0, n, "dynamic,chunk=1", [&](std::int64_t a) {
        aloe::parallel_for(0, n, "guided", [&](std::int64_t b) {
            aloe::parallel_for(0, n, "tasklets,n=3", [&](std::int64_t d) { c.hit((a * n + b) * n + d); });
        });
    });
    EXPECT_TRUE(c.exactly_once());
}

// ---- Concurrent callers ------------------------------------------------------------------

TEST(ConformanceConcurrentCallers, TwoThreadsRunLoopsOnOneTeamAtOnce) {
    aloe::team t(3);
    const aloe::loop_site site("conformance/concurrent/shared-team");
    const std::vector<std::string> specs = all_schedule_specs();
    const int loops_per_caller = scaled(60);
    std::atomic<int> failures{0};
    std::vector<std::string> first_failure(2);

    auto caller = [&](int who) {
        for (int rep = 0; rep < loops_per_caller; ++rep) {
            const std::string& spec = specs[static_cast<std::size_t>(rep * 2 + who) % specs.size()];
            const std::int64_t first = who == 0 ? -2000 : i64_max - 4000;
            const std::int64_t last = who == 0 ? 2000 : i64_max;
            coverage c(first, last, 1 + who, t.size());
            const delay_plan delays(c.count(), static_cast<std::uint32_t>(rep * 2 + who));
            if (rep % 2 == 0) {
                aloe::parallel_for(
                    t, first, last, 1 + who, aloe::schedule(spec),
                    [&](std::int64_t i) {
                        if (const auto k = c.hit(i)) delays.apply(*k);
                    },
                    site);
            } else {
                aloe::parallel_for(
                    t, first, last, 1 + who, aloe::schedule(spec), [&](aloe::subrange r, int thread) { c.check_subrange(r, thread); },
                    site);
            }
            if (const auto ok = c.exactly_once(); !ok) {
                if (failures.fetch_add(1) == 0 || first_failure[static_cast<std::size_t>(who)].empty())
                    first_failure[static_cast<std::size_t>(who)] = "caller " + std::to_string(who) + ", schedule '" +
                                                                   spec + "': " + ok.message();
            }
        }
    };
    std::thread a(caller, 0);
    std::thread b(caller, 1);
    a.join();
    b.join();
    EXPECT_EQ(failures.load(), 0) << first_failure[0] << "\n" << first_failure[1];
    const auto st = aloe::stats_of(site);
    ASSERT_TRUE(st.has_value());
    EXPECT_EQ(st->invocations + st->serial_invocations, static_cast<std::uint64_t>(2 * loops_per_caller));

    // The team is still usable by its creator afterwards.
    coverage after(0, 5000, 1);
    aloe::parallel_for(t, 0, 5000, 1, "dynamic,chunk=8", [&](std::int64_t i) { after.hit(i); });
    EXPECT_TRUE(after.exactly_once());
}

TEST(ConformanceConcurrentCallers, FourThreadsWithNestedLoopsOnOneTeam) {
    aloe::team t(2);
    const int loops_per_caller = scaled(30);
    constexpr std::int64_t outer_n = 16, inner_n = 16;
    std::atomic<int> failures{0};
    std::vector<std::thread> callers;
    for (int who = 0; who < 4; ++who) {
        callers.emplace_back([&, who] {
            for (int rep = 0; rep < loops_per_caller; ++rep) {
                coverage c(0, outer_n * inner_n, 1);
                aloe::parallel_for(t, 0, outer_n, 1, who % 2 ? "staggered,fs=0.5" : "dynamic", [&](std::int64_t o) {
                    aloe::parallel_for(t, o * inner_n, (o + 1) * inner_n, 1, "guided",
                                       [&](std::int64_t i) { c.hit(i); });
                });
                if (!c.exactly_once()) failures.fetch_add(1);
            }
        });
    }
    for (std::thread& th : callers) th.join();
    EXPECT_EQ(failures.load(), 0);
}

TEST(ConformanceConcurrentCallers, SeparateTeamsRunInParallelFromSeparateThreads) {
    aloe::team t1(2), t2(2);
    const aloe::loop_site s1("conformance/concurrent/team-1"), s2("conformance/concurrent/team-2");
    const int loops = scaled(40);
    std::atomic<int> failures{0};
    auto caller = [&](aloe::team& t, const aloe::loop_site& site) {
        for (int rep = 0; rep < loops; ++rep) {
            coverage c(-3000, 3000, 1, t.size());
            aloe::parallel_for(
                t, -3000, 3000, 1, "hybrid,fs=0.5,chunk=16",
                [&](aloe::subrange r, int thread) { c.check_subrange(r, thread); }, site);
            if (!c.exactly_once()) failures.fetch_add(1);
        }
    };
    std::thread a(caller, std::ref(t1), std::cref(s1));
    std::thread b(caller, std::ref(t2), std::cref(s2));
    a.join();
    b.join();
    EXPECT_EQ(failures.load(), 0);
    // A team held by nobody else runs every loop in parallel.
    for (const aloe::loop_site* site : {&s1, &s2}) {
        const auto st = aloe::stats_of(*site);
        ASSERT_TRUE(st.has_value());
        EXPECT_EQ(st->invocations, static_cast<std::uint64_t>(loops));
    }
}

}  // namespace

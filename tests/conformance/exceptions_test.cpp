// Conformance of exception handling in aloe::parallel_for (include/aloe/parallel_for.hpp):
// the first exception a body throws reaches the caller with its type and message, the
// other iterations still run (with an index body, all of them), exactly one exception
// leaves the loop, and the team stays usable.
#include "conformance/coverage.hpp"

#include <aloe/aloe.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace aloe_conformance;

/// The exception the bodies throw: a type of the test's own, so that a rethrow that lost
/// the type (e.g. wrapped into aloe::error or std::runtime_error) is caught as a failure.
struct body_failure : std::runtime_error {
    explicit body_failure(std::int64_t at) : std::runtime_error("body failed at " + std::to_string(at)), index(at) {}
    std::int64_t index;
};

// Runs a small loop on `t` and checks it; proves the team is still usable.
::testing::AssertionResult team_still_works(aloe::team& t, const aloe::schedule& s) {
    coverage c(-100, 2900, 3, t.size());
    aloe::parallel_for(t, -100, 2900, 3, s, [&](aloe::subrange r, int thread) { c.check_subrange(r, thread); });
    return c.exactly_once();
}

TEST(ConformanceExceptions, OneThrowingIndexIsRethrownAndEveryOtherIterationRuns) {
    for (const int size : team_sizes()) {
        aloe::team t(size);
        for (const std::string& spec : all_schedule_specs()) {
            SCOPED_TRACE(::testing::Message() << "team " << size << ", schedule '" << spec << "'");
            const aloe::schedule s(spec);
            constexpr std::int64_t n = 500, bad = 37;
            coverage c(0, n, 1);
            bool caught = false;
            try {
                aloe::parallel_for(t, 0, n, 1, s, [&](std::int64_t i) {
                    c.hit(i);
                    if (i == bad) throw body_failure(i);
                });
            } catch (const body_failure& e) {
                caught = true;
                EXPECT_EQ(e.index, bad);
                EXPECT_STREQ(e.what(), "body failed at 37");
            } catch (...) {
                ADD_FAILURE() << "an exception of another type reached the caller";
            }
            EXPECT_TRUE(caught) << "the body's exception did not reach the caller";
            EXPECT_TRUE(c.exactly_once()) << "with an index body every iteration runs, the throwing one included";
            EXPECT_TRUE(team_still_works(t, s));
        }
    }
}

TEST(ConformanceExceptions, ManyThrowingIterationsDeliverExactlyOneOfThem) {
    aloe::team t(3);
    const std::vector<std::string> specs = all_schedule_specs();
    std::mt19937 rng(20240611u);
    const int repeats = 100;  // many runs: a lost wake-up or a stuck worker would hang here
    for (int rep = 0; rep < repeats; ++rep) {
        const std::string& spec = specs[static_cast<std::size_t>(rep) % specs.size()];
        SCOPED_TRACE(::testing::Message() << "repeat " << rep << ", schedule '" << spec << "'");
        constexpr std::int64_t n = 300;
        const int every = std::uniform_int_distribution<int>(1, 40)(rng);
        const int offset = std::uniform_int_distribution<int>(0, every - 1)(rng);
        coverage c(n, 0, -1);  // a negative step, for variety
        std::atomic<int> thrown{0};
        int delivered = 0;
        std::int64_t delivered_index = -1;
        try {
            aloe::parallel_for(t, n, 0, -1, aloe::schedule(spec), [&](std::int64_t i) {
                c.hit(i);
                if (i % every == offset) {
                    thrown.fetch_add(1);
                    throw body_failure(i);
                }
            });
        } catch (const body_failure& e) {
            ++delivered;
            delivered_index = e.index;
        }
        EXPECT_EQ(delivered, 1);
        EXPECT_GT(thrown.load(), 0);
        EXPECT_TRUE(delivered_index % every == offset && delivered_index > 0 && delivered_index <= n)
            << "the delivered exception (index " << delivered_index << ") was not thrown by the body";
        EXPECT_TRUE(c.exactly_once());
        EXPECT_TRUE(team_still_works(t, "dynamic,chunk=3"));
    }
}

TEST(ConformanceExceptions, EveryIterationThrowingStillRunsAllAndKeepsTheTeam) {
    aloe::team t(oversubscribed_team_size());
    for (const std::string& spec : all_schedule_specs()) {
        SCOPED_TRACE(spec);
        coverage c(i64_max - 700, i64_max, 7);
        EXPECT_THROW(aloe::parallel_for(t, i64_max - 700, i64_max, 7, aloe::schedule(spec),
                                        [&](std::int64_t i) {
                                            c.hit(i);
                                            throw body_failure(i);
                                        }),
                     body_failure);
        EXPECT_TRUE(c.exactly_once());
        EXPECT_TRUE(team_still_works(t, aloe::schedule(spec)));
    }
}

TEST(ConformanceExceptions, NonStandardExceptionTypeIsRethrownUnchanged) {
    aloe::team t(2);
    int caught = -1;
    try {
        aloe::parallel_for(t, 0, 100, 1, "dynamic", [](std::int64_t i) {
            if (i == 99) throw 42;
        });
    } catch (int v) {
        caught = v;
    } catch (...) {
        ADD_FAILURE() << "an exception of another type reached the caller";
    }
    EXPECT_EQ(caught, 42);
    EXPECT_TRUE(team_still_works(t, "static"));
}

TEST(ConformanceExceptions, SubrangeBodyThrowIsRethrownAndOtherChunksRun) {
    for (const int size : {1, 3, oversubscribed_team_size()}) {
        aloe::team t(size);
        for (const std::string& spec : all_schedule_specs()) {
            SCOPED_TRACE(::testing::Message() << "team " << size << ", schedule '" << spec << "'");
            constexpr std::int64_t n = 400, bad = 123;
            coverage c(0, n, 1, size);
            // Slots of the chunk that threw (it throws before touching them).
            std::atomic<std::uint64_t> bad_begin{0}, bad_end{0};
            bool caught = false;
            try {
                aloe::parallel_for(t, 0, n, 1, aloe::schedule(spec), [&](aloe::subrange r, int thread) {
                    if (!r.empty() && r.first() <= bad && bad < r.first() + static_cast<std::int64_t>(r.size())) {
                        bad_begin = static_cast<std::uint64_t>(r.first());
                        bad_end = static_cast<std::uint64_t>(r.first()) + r.size();
                        throw body_failure(bad);
                    }
                    c.check_subrange(r, thread);
                });
            } catch (const body_failure& e) {
                caught = true;
                EXPECT_EQ(e.index, bad);
            }
            EXPECT_TRUE(caught);
            const std::uint64_t b = bad_begin.load(), e = bad_end.load();
            EXPECT_TRUE(c.exactly_once_where([&](std::uint64_t k) { return k < b || k >= e; }))
                << "every chunk but the throwing one [" << b << ", " << e << ") runs";
            EXPECT_TRUE(team_still_works(t, aloe::schedule(spec)));
        }
    }
}

TEST(ConformanceExceptions, ThrowFromNestedLoopReachesTheOuterCaller) {
    aloe::team t(3);
    coverage outer(0, 20, 1);
    bool caught = false;
    try {
        aloe::parallel_for(t, 0, 20, 1, "dynamic", [&](std::int64_t o) {
            outer.hit(o);
            aloe::parallel_for(t, 0, 10, 1, "static", [&](std::int64_t i) {
                if (o == 13 && i == 4) throw body_failure(o * 100 + i);
            });
        });
    } catch (const body_failure& e) {
        caught = true;
        EXPECT_EQ(e.index, 1304);
    }
    EXPECT_TRUE(caught);
    EXPECT_TRUE(outer.exactly_once());
    EXPECT_TRUE(team_still_works(t, "guided,chunk=2"));
}

}  // namespace

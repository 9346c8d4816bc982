// Conformance of aloe::loop_handle (include/aloe/loop_handle.hpp) driven by threads aloe did
// not start: every iteration exactly once for every schedule and 1-4 threads, calls that
// disagree on the thread count or pass a thread outside it throw aloe::error, an empty
// range ends at once, and the site's statistics are recorded when the last thread is done.
#include "conformance/coverage.hpp"

#include <aloe/aloe.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace aloe_conformance;

// Runs `threads` std::threads that each call next(tid, threads, r) until it returns false.
// Returns the first exception message any of them saw ("" when none).
std::string drive(aloe::loop_handle& h, int threads, coverage& c) {
    std::mutex m;
    std::string error;
    std::atomic<int> ready{0};
    std::vector<std::thread> pool;
    for (int tid = 0; tid < threads; ++tid) {
        pool.emplace_back([&, tid] {
            ready.fetch_add(1);
            while (ready.load() < threads) std::this_thread::yield();  // start together
            try {
                for (aloe::subrange r; h.next(tid, threads, r);) c.check_subrange(r, tid);
                aloe::subrange after;
                if (h.next(tid, threads, after)) c.check_subrange(after, tid);  // must stay done
            } catch (const std::exception& e) {
                std::lock_guard lock(m);
                if (error.empty()) error = e.what();
            }
        });
    }
    for (std::thread& t : pool) t.join();
    return error;
}

TEST(ConformanceLoopHandle, EveryIterationOnceDrivenByPlainThreads) {
    for (int threads = 1; threads <= 4; ++threads) {
        for (const std::string& spec : all_schedule_specs()) {
            const aloe::schedule s(spec);
            for (const range_shape& r : range_shapes()) {
                SCOPED_TRACE(::testing::Message() << threads << " threads, schedule '" << spec << "', range " << r);
                coverage c(r, threads);
                aloe::loop_handle h(r.first, r.last, r.step, s);
                EXPECT_EQ(drive(h, threads, c), "");
                EXPECT_TRUE(c.exactly_once());
            }
        }
    }
}

TEST(ConformanceLoopHandle, EveryIterationOnceDrivenRoundRobinFromOneThread) {
    // One OS thread plays every logical thread in turn: a deterministic interleaving.
    for (const int threads : {2, 3, 5}) {
        for (const std::string& spec : all_schedule_specs()) {
            SCOPED_TRACE(::testing::Message() << threads << " logical threads, schedule '" << spec << "'");
            coverage c(i64_min + 5, i64_min + 5 + 3 * 997, 3, threads);
            aloe::loop_handle h(i64_min + 5, i64_min + 5 + 3 * 997, 3, aloe::schedule(spec));
            std::vector<bool> done(static_cast<std::size_t>(threads), false);
            for (int left = threads; left > 0;) {
                for (int tid = 0; tid < threads; ++tid) {
                    if (done[static_cast<std::size_t>(tid)]) continue;
                    aloe::subrange r;
                    if (h.next(tid, threads, r)) {
                        c.check_subrange(r, tid);
                    } else {
                        done[static_cast<std::size_t>(tid)] = true;
                        --left;
                    }
                }
            }
            EXPECT_TRUE(c.exactly_once());
        }
    }
}

TEST(ConformanceLoopHandle, NearlyTwoToThe64IterationsAreHandedOutExactlyOnce) {
    // One OS thread plays three logical threads in turn over 2^64 - 1 iterations; the
    // chunks (few, thanks to large static parts and the largest chunk) must tile the loop.
    const std::vector<std::string> specs{
        "static",
        "guided,chunk=1",
        "hybrid,fs=0.999999,chunk=1099511627776",
        "staggered,fs=0.999999,chunk=1099511627776,queue=atomic",
        "staggered,fs=0.999999,chunk=1099511627776,queue=mutex",
        "weighted,fs=0.999999,chunk=1099511627776",
        "tasklets,n=300,fs=0.2,skew=50,locality=1",
    };
    const std::vector<range_shape> ranges{
        {"full range step 1", i64_min, i64_max, 1},
        {"full range step -1", i64_max, i64_min, -1},
        {"full range step INT64_MIN", i64_max, i64_min, i64_min},
    };
    constexpr int threads = 3;
    for (const std::string& spec : specs) {
        for (const range_shape& r : ranges) {
            SCOPED_TRACE(::testing::Message() << "schedule '" << spec << "', range " << r);
            interval_coverage c(r.first, r.last, r.step);
            aloe::loop_handle h(r.first, r.last, r.step, aloe::schedule(spec));
            std::vector<bool> done(threads, false);
            for (int left = threads; left > 0;) {
                for (int tid = 0; tid < threads; ++tid) {
                    if (done[static_cast<std::size_t>(tid)]) continue;
                    aloe::subrange sub;
                    if (h.next(tid, threads, sub)) {
                        c.add(sub);
                    } else {
                        done[static_cast<std::size_t>(tid)] = true;
                        --left;
                    }
                }
            }
            EXPECT_TRUE(c.exactly_once());
        }
    }
}

TEST(ConformanceLoopHandle, TwoToThe24ChunksOfTwoToThe40CoverTheFullRange) {
    // The largest chunk over 2^64 - 1 iterations: 2^24 claims per loop, the last ones next
    // to the top of the 64-bit counter, where a fetch-add could wrap.
    if (under_sanitizer) GTEST_SKIP() << "2^24 claims per loop take minutes under a sanitizer";
    constexpr int threads = 3;
    for (const char* spec : {"dynamic,chunk=1099511627776", "static,chunk=1099511627776",
                             "hybrid,fs=0.5,chunk=1099511627776", "weighted,fs=0.25,chunk=1099511627776"}) {
        SCOPED_TRACE(spec);
        interval_coverage c(i64_min, i64_max, 1);
        aloe::loop_handle h(i64_min, i64_max, spec);
        std::vector<bool> done(threads, false);
        for (int left = threads; left > 0;) {
            for (int tid = 0; tid < threads; ++tid) {
                if (done[static_cast<std::size_t>(tid)]) continue;
                aloe::subrange sub;
                if (h.next(tid, threads, sub)) {
                    c.add(sub);
                } else {
                    done[static_cast<std::size_t>(tid)] = true;
                    --left;
                }
            }
        }
        EXPECT_TRUE(c.exactly_once());
    }
}

TEST(ConformanceLoopHandle, ForEachCoversTheRange) {
    coverage c(1000, -1000, -7, 3);
    aloe::loop_handle h(1000, -1000, -7, "tasklets,n=10,fs=0.2,skew=3");
    std::vector<std::thread> pool;
    for (int tid = 0; tid < 3; ++tid)
        pool.emplace_back([&, tid] { h.for_each(tid, 3, [&](aloe::subrange r) { c.check_subrange(r, tid); }); });
    for (std::thread& t : pool) t.join();
    EXPECT_TRUE(c.exactly_once());
}

TEST(ConformanceLoopHandle, MismatchedThreadCountOrThreadOutOfRangeThrows) {
    for (const std::string& spec : all_schedule_specs()) {
        SCOPED_TRACE(spec);
        coverage c(0, 100, 1, 2);
        aloe::loop_handle h(0, 100, aloe::schedule(spec));
        aloe::subrange r;
        if (h.next(0, 2, r)) c.check_subrange(r, 0);
        EXPECT_THROW(h.next(1, 3, r), aloe::error) << "num_threads differs from the first call's";
        EXPECT_THROW(h.next(0, 1, r), aloe::error) << "num_threads differs from the first call's";
        EXPECT_THROW(h.next(2, 2, r), aloe::error) << "thread == num_threads";
        EXPECT_THROW(h.next(-1, 2, r), aloe::error) << "negative thread";
        // The refused calls changed nothing: the two real threads still finish the loop.
        for (int tid : {0, 1})
            while (h.next(tid, 2, r)) c.check_subrange(r, tid);
        EXPECT_TRUE(c.exactly_once());
    }
}

TEST(ConformanceLoopHandle, FirstCallWithBadThreadCountThrows) {
    for (const int bad : {0, -1}) {
        aloe::loop_handle h(0, 10, "dynamic");
        aloe::subrange r;
        EXPECT_THROW(h.next(0, bad, r), aloe::error) << "num_threads " << bad;
    }
    {
        // Thread out of range on the very first call.
        aloe::loop_handle h(0, 10, "static");
        aloe::subrange r;
        EXPECT_THROW(h.next(3, 3, r), aloe::error);
    }
    try {
        aloe::loop_handle h(0, 10, "dynamic");
        aloe::subrange r;
        (void)h.next(0, 2, r);
        (void)h.next(0, 5, r);
        ADD_FAILURE() << "no exception";
    } catch (const aloe::error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find('5'), std::string::npos) << "names the bad count: " << what;
    }
}

TEST(ConformanceLoopHandle, EmptyRangeReturnsFalseAtOnceForEveryThread) {
    for (const range_shape& r : range_shapes()) {
        if (reference_count(r.first, r.last, r.step) != 0) continue;
        for (const std::string& spec : all_schedule_specs()) {
            for (int threads = 1; threads <= 4; ++threads) {
                SCOPED_TRACE(::testing::Message() << threads << " threads, schedule '" << spec << "', range " << r);
                aloe::loop_handle h(r.first, r.last, r.step, aloe::schedule(spec));
                std::atomic<int> got_work{0};
                std::vector<std::thread> pool;
                for (int tid = 0; tid < threads; ++tid)
                    pool.emplace_back([&, tid] {
                        aloe::subrange sub;
                        if (h.next(tid, threads, sub)) got_work.fetch_add(1);
                        if (h.next(tid, threads, sub)) got_work.fetch_add(1);
                    });
                for (std::thread& t : pool) t.join();
                EXPECT_EQ(got_work.load(), 0);
            }
        }
    }
}

TEST(ConformanceLoopHandle, EmptyRangeCountsOneEmptyInvocationPerHandle) {
    // Every handle is one time the program reached the loop, whichever threads ask.
    const aloe::loop_site site("conformance/loop-handle/empty");
    constexpr int threads = 4, handles = 3;
    for (int k = 0; k < handles; ++k) {
        aloe::loop_handle h(10, 10, "staggered,fs=0.5", site);
        std::vector<std::thread> pool;
        for (int tid = 0; tid < threads; ++tid)
            pool.emplace_back([&, tid] {
                aloe::subrange sub;
                EXPECT_FALSE(h.next(tid, threads, sub));
                EXPECT_FALSE(h.next(tid, threads, sub));
            });
        for (std::thread& t : pool) t.join();
    }
    aloe::loop_handle full(0, 100, "staggered,fs=0.5", site);
    coverage c(0, 100, 1, threads);
    EXPECT_EQ(drive(full, threads, c), "");
    const auto st = aloe::stats_of(site);
    ASSERT_TRUE(st.has_value());
    EXPECT_EQ(st->empty_invocations, static_cast<std::uint64_t>(handles));
    EXPECT_EQ(st->invocations, 1u);
    EXPECT_EQ(st->iterations, 100u);
    EXPECT_EQ(st->calls(), static_cast<std::uint64_t>(handles + 1));
}

TEST(ConformanceLoopHandle, SiteStatisticsRecordedWhenTheLastThreadIsDone) {
    const aloe::loop_site site("conformance/loop-handle/stats");
    constexpr int threads = 3, runs = 4;
    constexpr std::int64_t n = 999;
    for (int run = 0; run < runs; ++run) {
        coverage c(0, n, 1, threads);
        aloe::loop_handle h(0, n, "hybrid,fs=0.5,chunk=10", site);
        EXPECT_EQ(drive(h, threads, c), "");
        EXPECT_TRUE(c.exactly_once());
    }
    const auto st = aloe::stats_of(site);
    ASSERT_TRUE(st.has_value());
    EXPECT_EQ(st->invocations, static_cast<std::uint64_t>(runs));
    EXPECT_EQ(st->iterations, static_cast<std::uint64_t>(runs * n));
    ASSERT_EQ(st->last.size(), static_cast<std::size_t>(threads));
    std::uint64_t sum = 0;
    for (const aloe::thread_loop_stats& t : st->last) sum += t.iterations;
    EXPECT_EQ(sum, static_cast<std::uint64_t>(n));
    EXPECT_EQ(st->schedule, aloe::schedule("hybrid,fs=0.5,chunk=10").to_string());
}

TEST(ConformanceLoopHandle, ScheduleTextRunsThatScheduleAndABadTextThrowsNamingIt) {
    // Text goes through the per-site parse cache: the same text again, and a changed text at
    // the same site, each run as written; a bad text throws at every construction.
    const aloe::loop_site site("conformance/loop-handle/text");
    for (const char* text : {"dynamic,chunk=7", "dynamic,chunk=7", "guided,chunk=3"}) {
        coverage c(0, 50, 1, 2);
        aloe::loop_handle h(0, 50, std::string(text), site);
        EXPECT_EQ(drive(h, 2, c), "");
        EXPECT_TRUE(c.exactly_once());
        const auto st = aloe::stats_of(site);
        ASSERT_TRUE(st.has_value());
        EXPECT_EQ(st->schedule, aloe::schedule(text).to_string()) << text;
    }
    for (int k = 0; k < 2; ++k) {
        try {
            aloe::loop_handle h(0, 10, 1, "dynamic,chunk=banana", site);
            ADD_FAILURE() << "a malformed schedule text was accepted";
        } catch (const aloe::error& e) {
            EXPECT_NE(std::string(e.what()).find("banana"), std::string::npos) << e.what();
        }
    }
}

}  // namespace

// Conformance of schedules given as text per call (parsed once per site, include/aloe/
// parallel_for.hpp and aloe.h): parallel_for with a literal, a const char*, a std::string or
// a std::string_view runs the schedule the text names, a call site whose text changes runs
// the new one, two sites keep their own, a bad text throws (C: returns ALOE_ERROR_SCHEDULE
// with the parser's message) at every call and runs nothing, and threads calling one site at
// once each run their own text. What ran is read from the site's statistics.
#include <aloe/aloe.h>
#include <aloe/aloe.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

constexpr std::int64_t n = 1000;

// The canonical string of what `text` parses to, or the parser's message.
std::string parsed(std::string_view text) {
    aloe::schedule s;
    std::string error;
    return aloe::schedule::try_parse(text, s, error) ? s.to_string() : error;
}

std::string last_schedule(const aloe::loop_site& site) {
    const auto st = aloe::stats_of(site);
    return st ? st->schedule : std::string("(no statistics)");
}

// One call site for every text; returns the site and checks exactly-once coverage.
aloe::loop_site run_at_one_site(const std::string& text) {
    const aloe::loop_site here;
    std::vector<std::atomic<int>> seen(n);
    aloe::parallel_for(0, n, text, [&](std::int64_t i) { seen[static_cast<std::size_t>(i)].fetch_add(1); }, here);
    for (const auto& s : seen) EXPECT_EQ(s.load(), 1) << text;
    return here;
}

TEST(ConformanceScheduleText, ACallSiteWhoseTextChangesRunsTheNewSchedule) {
    for (int round = 0; round < 2; ++round) {
        for (const char* text : {"dynamic,chunk=3", "dynamic,chunk=3", "guided,chunk=5", "hybrid,fs=0.5,chunk=2",
                                 "staggered,fs=0.25", "static", "tasklets,n=8,skew=2", "dynamic,chunk=3"}) {
            const aloe::loop_site site = run_at_one_site(text);
            EXPECT_EQ(last_schedule(site), parsed(text));
        }
    }
}

TEST(ConformanceScheduleText, EveryTextTypeAndOverloadRunsItsSchedule) {
    aloe::team& t = aloe::team::global();
    std::atomic<std::int64_t> sum{0};
    const auto body = [&](std::int64_t i) { sum.fetch_add(i); };
    const std::int64_t want = n * (n - 1) / 2;
    const std::string str = "guided,chunk=7";
    const std::string_view view = "dynamic,chunk=9";
    const char* pointer = "weighted,fs=0.5,chunk=2";
    const aloe::loop_site s1("schedule-text/literal"), s2("schedule-text/string"), s3("schedule-text/view"),
        s4("schedule-text/pointer"), s5("schedule-text/team-step");
    aloe::parallel_for(0, n, "static,chunk=4", body, s1);
    aloe::parallel_for(0, n, str, body, s2);
    aloe::parallel_for(t, 0, n, view, body, s3);
    aloe::parallel_for(0, n, 1, pointer, body, s4);
    aloe::parallel_for(t, 0, 2 * n, 2, "dynamic,chunk=5", [&](std::int64_t i) { sum.fetch_add(i / 2); }, s5);
    EXPECT_EQ(sum.load(), 5 * want);
    EXPECT_EQ(last_schedule(s1), "static,chunk=4");
    EXPECT_EQ(last_schedule(s2), "guided,chunk=7");
    EXPECT_EQ(last_schedule(s3), "dynamic,chunk=9");
    EXPECT_EQ(last_schedule(s4), "weighted,fs=0.5,chunk=2");
    EXPECT_EQ(last_schedule(s5), "dynamic,chunk=5");
    // A schedule value still takes the value overloads.
    const aloe::schedule value = aloe::schedule::hybrid(0.75, 3);
    aloe::parallel_for(0, n, value, body, s1);
    EXPECT_EQ(last_schedule(s1), "hybrid,fs=0.75,chunk=3");
}

TEST(ConformanceScheduleText, TwoSitesKeepTheirOwnTexts) {
    const aloe::loop_site a("schedule-text/a"), b("schedule-text/b");
    for (int round = 0; round < 3; ++round) {
        aloe::parallel_for(0, n, "dynamic,chunk=11", [](std::int64_t) {}, a);
        aloe::parallel_for(0, n, "guided,chunk=12", [](std::int64_t) {}, b);
        EXPECT_EQ(last_schedule(a), "dynamic,chunk=11");
        EXPECT_EQ(last_schedule(b), "guided,chunk=12");
    }
}

TEST(ConformanceScheduleText, ABadTextThrowsAtEveryCallAndRunsNothing) {
    const std::string message = parsed("dynamic,chunk=0");
    for (int i = 0; i < 3; ++i) {
        bool ran = false;
        try {
            aloe::parallel_for(0, n, "dynamic,chunk=0", [&](std::int64_t) { ran = true; });
            ADD_FAILURE() << "accepted";
        } catch (const aloe::error& e) {
            EXPECT_EQ(std::string(e.what()), message);
        }
        EXPECT_FALSE(ran);
        // The text is checked before the step, as when it was converted at the call.
        EXPECT_THROW(aloe::parallel_for(0, n, 0, "hybird", [](std::int64_t) {}), aloe::error);
    }
}

void empty_body(int64_t, int64_t, int, void*) {}

TEST(ConformanceScheduleText, TheCApiParsesOncePerSiteAndRefusesABadTextAtEveryCall) {
    const char* site = "schedule-text/c";
    for (const char* text : {"dynamic,chunk=2", "dynamic,chunk=2", "guided,chunk=4", "dynamic,chunk=2"}) {
        ASSERT_EQ(aloe_parallel_for_site(0, n, 1, text, site, &empty_body, nullptr), ALOE_OK) << aloe_last_error();
        EXPECT_EQ(last_schedule(aloe::loop_site(std::string_view(site))), parsed(text));
    }
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(aloe_parallel_for_site(0, n, 1, "guided,chunk=x", site, &empty_body, nullptr), ALOE_ERROR_SCHEDULE);
        EXPECT_EQ(std::string(aloe_last_error()), parsed("guided,chunk=x"));
        EXPECT_EQ(aloe_parallel_for(0, n, 1, "staggered", &empty_body, nullptr), ALOE_ERROR_SCHEDULE);
        EXPECT_EQ(std::string(aloe_last_error()), parsed("staggered"));
    }
    ASSERT_EQ(aloe_parallel_for_site(0, n, 1, "dynamic,chunk=2", site, &empty_body, nullptr), ALOE_OK);
    EXPECT_EQ(last_schedule(aloe::loop_site(std::string_view(site))), "dynamic,chunk=2");

    aloe_loop* bad = aloe_loop_create(0, n, 1, "hybrid,fs=7", "schedule-text/c-loop");
    EXPECT_EQ(bad, nullptr);
    EXPECT_EQ(std::string(aloe_last_error()), parsed("hybrid,fs=7"));
    aloe_loop* good = aloe_loop_create(0, n, 1, "hybrid,fs=0.5", "schedule-text/c-loop");
    ASSERT_NE(good, nullptr) << aloe_last_error();
    aloe_loop_destroy(good);
}

// Plain threads calling one site at once (one of them may hold the team, the others run
// serially), each with texts of its own that change as it goes: each loop covers its
// range exactly once, and a thread's own bad text fails for it alone.
TEST(ConformanceScheduleText, ThreadsAtOneSiteRunTheirOwnTexts) {
    constexpr int threads = 4;
    constexpr int calls = 200;
    std::vector<int> wrong(threads, 0);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            const std::string texts[] = {"dynamic,chunk=" + std::to_string(t + 1), "guided,chunk=" + std::to_string(t + 2),
                                         "dynamic,chunk=0"};
            for (int i = 0; i < calls; ++i) {
                const std::string& text = texts[static_cast<std::size_t>(i % 3)];
                std::atomic<std::int64_t> sum{0};
                try {
                    aloe::parallel_for(0, 100, text, [&](aloe::subrange r, int) {
                        for (std::int64_t k : r) sum.fetch_add(k, std::memory_order_relaxed);
                    }, aloe::loop_site("schedule-text/threads"));
                    if (i % 3 == 2 || sum.load() != 4950) ++wrong[static_cast<std::size_t>(t)];
                } catch (const aloe::error&) {
                    if (i % 3 != 2) ++wrong[static_cast<std::size_t>(t)];
                }
            }
        });
    }
    for (std::thread& th : pool) th.join();
    for (int t = 0; t < threads; ++t) EXPECT_EQ(wrong[static_cast<std::size_t>(t)], 0) << "thread " << t;
}

}  // namespace

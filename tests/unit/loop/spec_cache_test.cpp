// White-box tests of the per-site cache of string schedules (loop/schedules/spec_cache.hpp):
// whatever the cache holds, a call gets exactly what parsing its string gives, or the
// parser's message. A site whose string changes gets the new schedule, sites do not see each
// other's strings (call sites and explicit names, including a name in a reused buffer), a bad
// string fails at every call and leaves the site's good entry alone, strings too long to
// keep and more sites than the cache holds still parse right, and threads calling the same
// sites at once each get their own right answers (run it under TSan too).
#include "loop/schedules/spec_cache.hpp"

#include <aloe/error.hpp>
#include <aloe/parallel_for.hpp>

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace aloe::loop {
namespace {

// The schedule the cache gives `site` for `text`, or the message it fails with.
std::string at(const loop_site& site, std::string_view text) {
    schedule s = schedule::dynamic(99);
    std::string error;
    if (!site_schedule(site, text, s, error)) {
        EXPECT_EQ(s, schedule::dynamic(99)) << "a failure must leave the output untouched";
        return "error: " + error;
    }
    EXPECT_TRUE(error.empty());
    return s.to_string();
}

// What parsing gives, in at()'s form.
std::string parsed(std::string_view text) {
    schedule s;
    std::string error;
    return schedule::try_parse(text, s, error) ? s.to_string() : "error: " + error;
}

TEST(LoopSpecCache, ASiteWhoseStringChangesGetsTheNewSchedule) {
    const loop_site site;  // this line: a call site
    for (int round = 0; round < 3; ++round) {
        for (const char* text : {"dynamic,chunk=2", "dynamic,chunk=2", "guided,chunk=3", "dynamic,chunk=20",
                                 "dynamic,chunk=2", "hybrid,fs=0.5", "hybrid,fs=0.50", "static"}) {
            EXPECT_EQ(at(site, text), parsed(text)) << text;
        }
    }
    // A longer and a shorter string sharing the remembered one's prefix.
    EXPECT_EQ(at(site, "dynamic,chunk=4"), "dynamic,chunk=4");
    EXPECT_EQ(at(site, "dynamic,chunk=42"), "dynamic,chunk=42");
    EXPECT_EQ(at(site, "dynamic,chunk=4"), "dynamic,chunk=4");
    EXPECT_EQ(at(site, "dynamic"), "dynamic,chunk=1");
}

TEST(LoopSpecCache, SitesKeepTheirOwnStrings) {
    const loop_site a;
    const loop_site b;
    const loop_site named_a("spec-cache/a");
    const loop_site named_b("spec-cache/b");
    for (int round = 0; round < 4; ++round) {
        EXPECT_EQ(at(a, "dynamic,chunk=5"), "dynamic,chunk=5");
        EXPECT_EQ(at(b, "guided,chunk=6"), "guided,chunk=6");
        EXPECT_EQ(at(named_a, "static,chunk=7"), "static,chunk=7");
        EXPECT_EQ(at(named_b, "weighted,fs=0.25"), "weighted,fs=0.25,chunk=1");
    }
}

// An explicit name is its text: the same buffer holding another name is another site, and
// the same name in another buffer is the same site.
TEST(LoopSpecCache, ExplicitNamesAreKeyedByTheirText) {
    std::string buffer = "spec-cache/one";
    EXPECT_EQ(at(loop_site(buffer), "dynamic,chunk=11"), "dynamic,chunk=11");
    buffer.replace(buffer.size() - 3, 3, "two");
    EXPECT_EQ(at(loop_site(buffer), "dynamic,chunk=12"), "dynamic,chunk=12");
    buffer.replace(buffer.size() - 3, 3, "one");
    EXPECT_EQ(at(loop_site(buffer), "dynamic,chunk=11"), "dynamic,chunk=11");
    const std::string copy = "spec-cache/one";
    EXPECT_EQ(at(loop_site(copy), "dynamic,chunk=13"), "dynamic,chunk=13");
    EXPECT_EQ(at(loop_site(buffer), "dynamic,chunk=11"), "dynamic,chunk=11");
}

TEST(LoopSpecCache, ABadStringFailsAtEveryCallWithTheParsersMessage) {
    const loop_site site;
    const std::string message = parsed("dynamic,chunk=0");
    ASSERT_EQ(message.rfind("error: ", 0), 0u);
    EXPECT_EQ(at(site, "dynamic,chunk=8"), "dynamic,chunk=8");
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(at(site, "dynamic,chunk=0"), message);
        EXPECT_EQ(at(site, "dynamic,chunk=8"), "dynamic,chunk=8") << "the good string is still right after";
    }
    const loop_site fresh;  // a site never seen with a good string
    for (int i = 0; i < 3; ++i) EXPECT_EQ(at(fresh, "hybird"), parsed("hybird"));
    EXPECT_EQ(at(fresh, ""), parsed(""));

    // The public entry point throws the parser's error.
    const loop_site thrown;
    for (int i = 0; i < 2; ++i) {
        try {
            (void)detail::site_schedule(thrown, "hybrid,fs=2");
            ADD_FAILURE() << "accepted";
        } catch (const error& e) {
            EXPECT_EQ("error: " + std::string(e.what()), parsed("hybrid,fs=2"));
        }
    }
    EXPECT_EQ(detail::site_schedule(thrown, "hybrid,fs=1"), schedule::hybrid(1.0));
}

TEST(LoopSpecCache, LongStringsAndManySitesStillParseRight) {
    const loop_site site;
    const std::string long_text = "tasklets,n=32,fs=0.5,skew=4,locality=0" + std::string(100, ' ');
    const std::string long_name(200, 'n');
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(at(site, long_text), parsed(long_text));
        EXPECT_EQ(at(site, "guided,chunk=2"), "guided,chunk=2");
        EXPECT_EQ(at(loop_site(long_name), "dynamic,chunk=3"), "dynamic,chunk=3");
        EXPECT_EQ(at(loop_site(long_name), long_text), parsed(long_text));
    }
    // Far more sites than the cache holds, visited round-robin (evicting each other).
    std::vector<std::string> names;
    for (int i = 0; i < 100; ++i) names.push_back("spec-cache/site-" + std::to_string(i));
    for (int round = 0; round < 3; ++round) {
        for (int i = 0; i < 100; ++i) {
            const std::string text = "dynamic,chunk=" + std::to_string(i + 1 + (round == 2 ? 1000 : 0));
            EXPECT_EQ(at(loop_site(names[static_cast<std::size_t>(i)]), text), text);
        }
    }
}

// Several threads at the same sites, each with strings of its own that change as it goes:
// every answer must be the parse of the string given (the cache is per thread; TSan checks
// that nothing is shared).
TEST(LoopSpecCache, ThreadsAtTheSameSitesGetTheirOwnStrings) {
    const loop_site shared_site;
    const loop_site named("spec-cache/threads");
    constexpr int threads = 6;
    constexpr int calls = 3000;
    std::vector<int> wrong(threads, 0);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            const std::string mine = "dynamic,chunk=" + std::to_string(t + 1);
            const std::string other = "guided,chunk=" + std::to_string(t + 1);
            const schedule want_mine = schedule::dynamic(t + 1);
            const schedule want_other = schedule::guided(t + 1);
            for (int i = 0; i < calls; ++i) {
                const bool switch_text = (i / 100) % 2 == 1;
                schedule got;
                std::string error;
                if (!site_schedule(shared_site, switch_text ? other : mine, got, error) ||
                    got != (switch_text ? want_other : want_mine))
                    ++wrong[static_cast<std::size_t>(t)];
                if (!site_schedule(named, "staggered,fs=0.5", got, error) || got != schedule::staggered(0.5))
                    ++wrong[static_cast<std::size_t>(t)];
                if (i % 500 == 0 && site_schedule(named, "staggered", got, error))
                    ++wrong[static_cast<std::size_t>(t)];  // fs missing: must fail every time
            }
        });
    }
    for (std::thread& th : pool) th.join();
    for (int t = 0; t < threads; ++t) EXPECT_EQ(wrong[static_cast<std::size_t>(t)], 0) << "thread " << t;
}

}  // namespace
}  // namespace aloe::loop

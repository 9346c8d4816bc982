// Runtime.Report: the line format, once-only reporting, the ALOE_VERBOSE filter and
// reporting from several threads at once.
#include "runtime/report.hpp"

#include "unit/runtime/report_capture.hpp"

#include <gtest/gtest.h>

#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <set>
#include <thread>

namespace aloe::runtime {
namespace {

using testing::report_capture;

// Restores "no info categories" after a test that changes the verbosity.
struct verbosity_scope {
    explicit verbosity_scope(category_set shown) { set_report_verbosity(shown); }
    ~verbosity_scope() { set_report_verbosity(no_categories); }
    verbosity_scope(const verbosity_scope&) = delete;
    verbosity_scope& operator=(const verbosity_scope&) = delete;
};

report_message warning(std::string_view id, std::string what, std::string fallback = {}) {
    return {report_level::warning, report_category::loop, id, std::move(what), std::move(fallback)};
}

TEST(RuntimeReport, FormatWithAndWithoutFallback) {
    EXPECT_EQ(format_report(warning("W014", "chunk 0 is invalid", "chunk 1")),
              "aloe: warning W014 [loop]: chunk 0 is invalid; using chunk 1");
    EXPECT_EQ(format_report(warning("W014", "chunk 0 is invalid")),
              "aloe: warning W014 [loop]: chunk 0 is invalid");
    EXPECT_EQ(format_report({report_level::info, report_category::caps, "I401", "no counters", ""}),
              "aloe: info I401 [caps]: no counters");
    EXPECT_EQ(format_report({report_level::fatal, report_category::runtime, "F001", "no memory", ""}),
              "aloe: fatal F001 [runtime]: no memory");
}

TEST(RuntimeReport, ReportOnceDeduplicatesOnIdAndText) {
    report_capture capture;
    EXPECT_TRUE(report_once(warning("W900", "first")));
    EXPECT_FALSE(report_once(warning("W900", "first")));
    EXPECT_FALSE(report_once(warning("W900", "first", "another fallback")));  // same cause
    EXPECT_TRUE(report_once(warning("W900", "second")));                      // same ID, other text
    EXPECT_TRUE(report_once(warning("W901", "first")));                       // other ID, same text
    const std::vector<std::string> lines = capture.lines();
    ASSERT_EQ(lines.size(), 3u);
    EXPECT_EQ(lines[0], "aloe: warning W900 [loop]: first");
    EXPECT_EQ(lines[1], "aloe: warning W900 [loop]: second");
    EXPECT_EQ(lines[2], "aloe: warning W901 [loop]: first");
}

TEST(RuntimeReport, ResetForgetsWhatWasReported) {
    report_capture capture;
    EXPECT_TRUE(report_once(warning("W902", "x")));
    reset_reported_for_tests();
    EXPECT_TRUE(report_once(warning("W902", "x")));
    EXPECT_EQ(capture.lines().size(), 2u);
}

TEST(RuntimeReport, ReportPrintsEveryTime) {
    report_capture capture;
    report(warning("W903", "again"));
    report(warning("W903", "again"));
    EXPECT_EQ(capture.containing("W903").size(), 2u);
}

TEST(RuntimeReport, WarningsAndFatalPrintWhateverTheVerbosity) {
    report_capture capture;
    verbosity_scope quiet(no_categories);
    EXPECT_TRUE(report_once(warning("W904", "always")));
    report({report_level::fatal, report_category::runtime, "F900", "always too", ""});
    EXPECT_EQ(capture.lines().size(), 2u);
}

TEST(RuntimeReport, InfoPrintsOnlyForEnabledCategories) {
    report_capture capture;
    verbosity_scope loop_only(category_bit(report_category::loop));
    EXPECT_TRUE(info_enabled(report_category::loop));
    EXPECT_FALSE(info_enabled(report_category::caps));
    EXPECT_TRUE(report_once({report_level::info, report_category::loop, "I900", "shown", ""}));
    EXPECT_FALSE(report_once({report_level::info, report_category::caps, "I901", "hidden", ""}));
    report({report_level::info, report_category::caps, "I902", "hidden too", ""});
    const std::vector<std::string> lines = capture.lines();
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_EQ(lines[0], "aloe: info I900 [loop]: shown");

    // A filtered line is not remembered as reported: it prints once its category is on.
    set_report_verbosity(all_categories);
    EXPECT_TRUE(report_once({report_level::info, report_category::caps, "I901", "hidden", ""}));
    EXPECT_EQ(capture.containing("I901").size(), 1u);
}

TEST(RuntimeReport, CategoryBitsAreDistinct) {
    category_set seen = no_categories;
    for (report_category c : all_report_categories) {
        EXPECT_EQ(seen & category_bit(c), 0u) << to_string(c);
        seen |= category_bit(c);
    }
    EXPECT_EQ(seen, all_categories);
}

TEST(RuntimeReport, CategoryNamesRoundTrip) {
    for (report_category c : all_report_categories) {
        const std::optional<report_category> parsed = parse_report_category(to_string(c));
        ASSERT_TRUE(parsed.has_value()) << to_string(c);
        EXPECT_EQ(*parsed, c);
    }
    EXPECT_FALSE(parse_report_category("bogus").has_value());
    EXPECT_FALSE(parse_report_category("").has_value());
    EXPECT_FALSE(parse_report_category("Loop").has_value());  // config lower-cases first
}

TEST(RuntimeReport, ReportTextSendsOneLinePerCall) {
    report_capture capture;
    report_text("first\n  second\n");
    report_text("third");
    const std::vector<std::string> lines = capture.lines();
    ASSERT_EQ(lines.size(), 3u);
    EXPECT_EQ(lines[0], "first");
    EXPECT_EQ(lines[1], "  second");
    EXPECT_EQ(lines[2], "third");
}

TEST(RuntimeReport, SetSinkReturnsThePreviousSink) {
    report_capture outer;
    std::vector<std::string> inner_lines;
    report_sink previous = set_report_sink([&](std::string_view l) { inner_lines.emplace_back(l); });
    report(warning("W905", "to inner"));
    set_report_sink(previous);
    report(warning("W905", "to outer"));
    ASSERT_EQ(inner_lines.size(), 1u);
    EXPECT_NE(inner_lines[0].find("to inner"), std::string::npos);
    ASSERT_EQ(outer.lines().size(), 1u);
    EXPECT_NE(outer.lines()[0].find("to outer"), std::string::npos);
}

// A caller that refuses bad settings (aloe run before it starts a program) asks for the
// messages without their "; using …": that fallback will not happen. The next sink gets it back.
TEST(RuntimeReport, FallbackTextCanBeLeftOutUntilTheNextSink) {
    report_capture outer;
    std::vector<std::string> refused;
    const report_message bad{report_level::warning, report_category::config, "W907", "X='y' is bad", "z"};
    const report_sink previous =
        set_report_sink([&](std::string_view l) { refused.emplace_back(l); }, fallback_text::left_out);
    report(bad);
    set_report_sink(previous);
    report(bad);
    ASSERT_EQ(refused.size(), 1u);
    EXPECT_EQ(refused[0], "aloe: warning W907 [config]: X='y' is bad");
    ASSERT_EQ(outer.lines().size(), 1u);
    EXPECT_EQ(outer.lines()[0], "aloe: warning W907 [config]: X='y' is bad; using z");
}

// The default sink writes a line and its newline with one write(2), so the pipe mpirun or
// Slurm reads a rank's stderr from gets it whole and two ranks' lines are never joined.
// Stderr is a SOCK_SEQPACKET socket here: each write arrives as one packet.
TEST(RuntimeReport, TheDefaultSinkWritesEachLineInOneWrite) {
    int pair[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET, 0, pair), 0);
    std::fflush(stderr);
    const int saved = ::dup(STDERR_FILENO);
    ASSERT_GE(saved, 0);
    ASSERT_EQ(::dup2(pair[0], STDERR_FILENO), STDERR_FILENO);
    const report_sink previous = set_report_sink(nullptr);  // nullptr: the default, stderr
    report(warning("W906", "one line"));
    set_report_sink(previous);
    ::dup2(saved, STDERR_FILENO);
    ::close(saved);
    ::close(pair[0]);
    char packet[256];
    const ssize_t first = ::recv(pair[1], packet, sizeof packet, MSG_DONTWAIT);
    ASSERT_GT(first, 0);
    EXPECT_EQ(std::string(packet, static_cast<std::size_t>(first)), "aloe: warning W906 [loop]: one line\n");
    EXPECT_LE(::recv(pair[1], packet, sizeof packet, MSG_DONTWAIT), 0);  // nothing more: no second part
    ::close(pair[1]);
}

TEST(RuntimeReport, ConcurrentReportersEmitEachCauseOnceAndWholeLines) {
    report_capture capture;
    constexpr int threads = 8;
    constexpr int messages_per_thread = 200;
    std::vector<std::thread> pool;
    std::atomic<int> emitted_shared{0};
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([t, &emitted_shared] {
            for (int i = 0; i < messages_per_thread; ++i) {
                // Every thread reports the same causes: each must appear exactly once.
                if (report_once(warning("W906", "shared " + std::to_string(i)))) ++emitted_shared;
                // And its own cause, once per thread and message.
                report_once(warning("W907", "thread " + std::to_string(t) + " message " +
                                                std::to_string(i)));
            }
        });
    }
    for (std::thread& th : pool) th.join();
    EXPECT_EQ(emitted_shared.load(), messages_per_thread);
    const std::vector<std::string> lines = capture.lines();
    EXPECT_EQ(lines.size(), static_cast<std::size_t>(messages_per_thread * (threads + 1)));
    std::set<std::string> unique(lines.begin(), lines.end());
    EXPECT_EQ(unique.size(), lines.size());
    for (const std::string& l : lines) {
        EXPECT_EQ(l.rfind("aloe: warning W90", 0), 0u) << l;  // no torn or interleaved lines
    }
}

}  // namespace
}  // namespace aloe::runtime

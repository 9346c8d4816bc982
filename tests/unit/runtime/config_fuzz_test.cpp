// Runtime.Config under random values: every variable of the settings table, one at a time,
// fed numbers, keywords, signs, blanks, NULs, control bytes, invalid UTF-8 and 10 kB values
// from a seeded generator. Each value is either accepted silently (its source recorded),
// blank (unset, silent), or rejected with exactly one warning that names the variable and
// prints as one line of valid UTF-8 without control characters.
#include "runtime/config.hpp"

#include "runtime/printable_text.hpp"
#include "runtime/utf8_text.hpp"
#include "unit/runtime/report_capture.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace aloe::runtime {
namespace {

using testing::report_capture;

// Pieces that sit near each parser's edges: numbers at the limits and past them, the
// keywords of every row, and the bytes a value must never pass through to a terminal.
const std::vector<std::string> pieces = {
    "0", "1", "2", "64", "4096", "4097", "1000000", "1000001", "-0", "-1", "+1", "1e3", "1.5", "0x10",
    "99999999999999999999999", "nan", "inf", "1e999", " ", "\t", ",", ",,", "=", "true", "false", "TRUE",
    "close", "spread", "none", "active", "passive", "hybrid", "all", "runtime", "loop", "omp", "bogus",
    "static", "dynamic,4", "hybrid,fs=1e-400", "program", "forward", "/tmp/x", "-",
    std::string("\0", 1), "\n", "\r\n", "\x1b[2J", "\x7f", "\xff", "\xC0\xAF", "\xED\xA0\x80", "\xEF\xBB\xBF",
    "\xE2\x80\xAE", "\xC3\xA9"};

std::string random_value(std::mt19937_64& rng) {
    std::string v;
    switch (rng() % 4) {
    case 0:  // a few pieces glued together
        for (std::size_t n = 1 + rng() % 3; n > 0; --n) v += pieces[rng() % pieces.size()];
        break;
    case 1:  // random bytes
        v.resize(rng() % 24);
        for (char& c : v) c = static_cast<char>(rng() & 0xFF);
        break;
    case 2:  // one piece, perhaps wrapped in blanks
        v = std::string(rng() % 2, ' ') + pieces[rng() % pieces.size()] + std::string(rng() % 2, '\t');
        break;
    default:  // a long value
        v = std::string(10'000, "9a,\xff"[rng() % 4]);
        break;
    }
    return v;
}

// A failing line as the test log shows it (escaped, so the log itself stays readable).
std::string shown(std::string_view line) { return printable(line, 400); }

bool blank(std::string_view v) { return v.find_first_not_of(" \t\r\n") == std::string_view::npos; }

bool printable_line(std::string_view line) {
    if (!is_valid_utf8(line)) return false;
    for (const char c : line)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) return false;
    return true;
}

TEST(RuntimeConfigFuzz, EveryRejectedValueGivesOnePrintableWarningNamingTheVariable) {
    std::vector<std::string> names;
    for (const setting_row& r : describe_settings(config{})) names.push_back(r.name);
    ASSERT_GE(names.size(), 13u);
    std::mt19937_64 rng(1207);
    int rejected = 0, accepted = 0;
    for (int i = 0; i < 3000; ++i) {
        const std::string& name = names[static_cast<std::size_t>(i) % names.size()];
        const std::string value = random_value(rng);
        SCOPED_TRACE(name + "='" + printable(value) + "' case " + std::to_string(i));
        report_capture capture;
        config cfg;
        ASSERT_NO_THROW(cfg = load_config([&](std::string_view n) -> std::optional<std::string> {
            if (n == name) return value;
            return std::nullopt;
        }));
        const std::vector<std::string> lines = capture.lines();
        const bool took = cfg.sources.count(name) != 0;
        if (blank(value) || took) {
            EXPECT_TRUE(lines.empty()) << (lines.empty() ? "" : shown(lines.front()));
            EXPECT_FALSE(blank(value) && took) << "a blank value counts as unset";
            accepted += took ? 1 : 0;
            continue;
        }
        ++rejected;
        ASSERT_EQ(lines.size(), 1u) << "a rejected value gives exactly one warning";
        EXPECT_NE(lines.front().find("warning W"), std::string::npos) << shown(lines.front());
        EXPECT_NE(lines.front().find(name + "='"), std::string::npos) << shown(lines.front());
        EXPECT_TRUE(printable_line(lines.front())) << shown(lines.front());
        EXPECT_LT(lines.front().size(), 1000u) << "a 10 kB value is quoted, not copied";
    }
    // The generator reaches both outcomes, or the test would prove nothing.
    EXPECT_GT(rejected, 100);
    EXPECT_GT(accepted, 100);
}

}  // namespace
}  // namespace aloe::runtime

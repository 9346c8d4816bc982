// loop::format_stats_json with hostile site names: quotes, backslashes, control bytes, NUL,
// bidi overrides, 10 kB names and invalid UTF-8. The file must always be valid UTF-8 and
// valid JSON for a strict reader; valid names come back exactly, and invalid ones keep
// their valid parts, each broken sequence replaced by U+FFFD.
#include "loop/loop_stats.hpp"

#include "runtime/utf8_text.hpp"
#include "unit/strict_json.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace aloe::loop {
namespace {

using testing::json_value;

const std::vector<std::string> hostile_valid = {
    "\"", "\\", "\"\\\"", "a\"b\\c", std::string("nul\0inside", 10), "\n\r\t\b\f", "\x01\x1f\x7f", "</script>",
    "\xE2\x80\xAE" "evil", "\xEF\xBB\xBF" "bom", "\xE2\x80\xA8", "caf\xC3\xA9.c:12:3", "\xF0\x9F\x98\x80", "{}[],:",
    std::string(10'000, 'x'), std::string(10'000, '"')};

const json_value& sites_of(const json_value& doc) {
    const json_value* sites = doc.member("sites");
    EXPECT_NE(sites, nullptr);
    static const json_value none;
    return sites != nullptr ? *sites : none;
}

std::optional<json_value> parse(const std::string& text) {
    std::string error;
    std::optional<json_value> doc = testing::strict_json_reader::parse(text, error);
    EXPECT_TRUE(doc.has_value()) << error;
    return doc;
}

site_stats named(std::string name, std::string schedule_text) {
    site_stats s;
    s.site = std::move(name);
    s.schedule = std::move(schedule_text);
    s.invocations = 1;
    s.last.resize(2);
    s.total.resize(2);
    return s;
}

TEST(LoopStatsJson, HostileValidNamesRoundTripExactly) {
    std::vector<site_stats> sites;
    for (const std::string& name : hostile_valid) sites.push_back(named(name, name));
    site_stats tuned = named("tuned", "adaptive");
    tuned.tuning = tuning_stats{};
    tuned.tuning->reason = "because \"x\"\\\n";
    tuned.tuning->chosen = std::string("a\0b", 3);
    tuned.tuning->steps.push_back({"staggered,fs=0.5", 0.5, 4, 0.001});
    sites.push_back(tuned);
    const std::string text = format_stats_json(sites);
    ASSERT_TRUE(runtime::is_valid_utf8(text));
    const std::optional<json_value> doc = parse(text);
    ASSERT_TRUE(doc);
    const json_value& list = sites_of(*doc);
    ASSERT_EQ(list.items.size(), sites.size());
    // The decoded text of `name` in `object`; empty, and a failure, when it is missing.
    const auto text_of = [](const json_value& object, std::string_view name) -> std::string {
        const json_value* v = object.member(name);
        EXPECT_NE(v, nullptr) << name;
        return v != nullptr ? v->text : std::string();
    };
    for (std::size_t i = 0; i < hostile_valid.size(); ++i) {
        EXPECT_EQ(text_of(list.items[i], "site"), hostile_valid[i]) << i;
        EXPECT_EQ(text_of(list.items[i], "schedule"), hostile_valid[i]) << i;
    }
    const json_value* tuning = list.items.back().member("tuning");
    ASSERT_NE(tuning, nullptr);
    EXPECT_EQ(text_of(*tuning, "reason"), tuned.tuning->reason);
    EXPECT_EQ(text_of(*tuning, "chosen"), tuned.tuning->chosen);
}

// Seeded random names: random bytes between two ASCII markers. Whatever the bytes, the
// document is valid; the markers survive; what lies between is valid UTF-8 and equal to
// the bytes when they were valid.
TEST(LoopStatsJson, RandomByteNamesAlwaysGiveValidJson) {
    std::mt19937_64 rng(4242);
    for (int round = 0; round < 200; ++round) {
        std::vector<site_stats> sites;
        std::vector<std::string> middles;
        for (int k = 0; k < 10; ++k) {
            std::string middle(rng() % 30, '\0');
            for (char& c : middle) c = static_cast<char>(rng() & 0xFF);
            middles.push_back(middle);
            sites.push_back(named("<" + middle + ">", "static"));
        }
        const std::string text = format_stats_json(sites);
        ASSERT_TRUE(runtime::is_valid_utf8(text)) << round;
        const std::optional<json_value> doc = parse(text);
        ASSERT_TRUE(doc) << round;
        const json_value& list = sites_of(*doc);
        ASSERT_EQ(list.items.size(), sites.size());
        for (std::size_t k = 0; k < sites.size(); ++k) {
            const json_value* site = list.items[k].member("site");
            ASSERT_NE(site, nullptr);
            const std::string& back = site->text;
            ASSERT_GE(back.size(), 2u);
            EXPECT_EQ(back.front(), '<');
            EXPECT_EQ(back.back(), '>');
            if (runtime::is_valid_utf8(middles[k])) EXPECT_EQ(back, "<" + middles[k] + ">");
            else EXPECT_NE(back.find("\xEF\xBF\xBD"), std::string::npos) << "U+FFFD marks the broken bytes";
        }
    }
}

}  // namespace
}  // namespace aloe::loop

// The schedule string syntax under seeded random input: random valid specs (any key order,
// case, blanks, number spellings) round-trip print -> parse -> print identically; random
// mutations never crash or throw out of try_parse, and every rejection is one printable
// line that quotes the spec; a bad value for a key is named with its key.
#include <aloe/schedule.hpp>

#include "runtime/printable_text.hpp"
#include "runtime/utf8_text.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <charconv>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace aloe {
namespace {

using rng_t = std::mt19937_64;

struct kind_keys {
    const char* kind;
    std::vector<const char*> keys;  // the first `required` are always given
    std::size_t required;
};

const std::vector<kind_keys> kinds = {
    {"static", {"chunk"}, 0},
    {"dynamic", {"chunk"}, 0},
    {"guided", {"chunk", "divisor"}, 0},
    {"hybrid", {"fs", "chunk"}, 1},
    {"staggered", {"fs", "chunk", "queue"}, 1},
    {"weighted", {"fs", "chunk"}, 0},
    {"tasklets", {"n", "fs", "skew", "locality"}, 1},
    {"adaptive", {"search", "chunk", "delay"}, 0},
};

std::string shortest(double x) {
    char buf[32];
    return std::string(buf, std::to_chars(buf, buf + sizeof buf, x).ptr);
}

std::string random_case(rng_t& rng, std::string s) {
    for (char& c : s)
        if ((rng() & 3) == 0 && c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    return s;
}

std::string blanks(rng_t& rng) { return std::string(rng() % 3 == 0 ? 1 + rng() % 2 : 0, " \t"[rng() & 1]); }

std::string integer_text(rng_t& rng, std::int64_t v) {
    std::string s = std::to_string(v);
    switch (rng() % 4) {
    case 0: return "+" + s;
    case 1: return "00" + s;
    default: return s;
    }
}

std::string real_text(rng_t& rng, double lo, double hi) {
    switch (rng() % 8) {
    case 0: return shortest(lo);
    case 1: return shortest(hi);
    case 2: return lo == 0 ? "-0" : "+" + shortest(lo);
    case 3: return lo == 0 ? "1e-400" : "1e0";
    default: {
        const double x = lo + (hi - lo) * std::uniform_real_distribution<double>(0, 1)(rng);
        return rng() & 1 ? shortest(x) : std::to_string(x);  // "0.123456" or the shortest form
    }
    }
}

std::string value_for(rng_t& rng, std::string_view kind, std::string_view key) {
    if (key == "chunk") {
        if (kind == "adaptive" && (rng() & 1)) return random_case(rng, "auto");
        const std::int64_t big = std::int64_t{1} << 40;
        return integer_text(rng, rng() % 4 == 0 ? big - static_cast<std::int64_t>(rng() % 3)
                                                : 1 + static_cast<std::int64_t>(rng() % 1000));
    }
    if (key == "n") return integer_text(rng, 1 + static_cast<std::int64_t>(rng() % (std::uint64_t{1} << 24)));
    if (key == "divisor") return integer_text(rng, 1 + static_cast<std::int64_t>(rng() % 64));
    if (key == "fs") return real_text(rng, 0, 1);
    if (key == "skew") return real_text(rng, 1, 1e6);
    if (key == "locality") return random_case(rng, std::vector<std::string>{"0", "1", "true", "false"}[rng() % 4]);
    if (key == "queue") return random_case(rng, rng() & 1 ? "atomic" : "mutex");
    if (key == "search") return random_case(rng, std::vector<std::string>{"local", "nlopt", "sweep"}[rng() % 3]);
    return random_case(rng, rng() & 1 ? "optimistic" : "pessimistic");  // delay
}

// A valid spec: the kind, its required keys, a random subset of the others, shuffled.
std::string random_valid_spec(rng_t& rng) {
    const kind_keys& k = kinds[rng() % kinds.size()];
    std::vector<std::string> items;
    for (std::size_t i = 0; i < k.keys.size(); ++i) {
        if (i < k.required || (rng() & 1))
            items.push_back(blanks(rng) + random_case(rng, k.keys[i]) + blanks(rng) + "=" + blanks(rng) +
                            value_for(rng, k.kind, k.keys[i]) + blanks(rng));
    }
    std::shuffle(items.begin(), items.end(), rng);
    std::string spec = blanks(rng) + random_case(rng, k.kind) + blanks(rng);
    for (const std::string& item : items) spec += "," + item;
    return spec;
}

// A message is one line of valid UTF-8 with no control character.
bool printable_line(std::string_view s) {
    if (!runtime::is_valid_utf8(s)) return false;
    for (const char c : s)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) return false;
    return true;
}

TEST(LoopScheduleSpecFuzz, RandomValidSpecsRoundTripIdentically) {
    rng_t rng(20261207);
    for (int i = 0; i < 4000; ++i) {
        const std::string spec = random_valid_spec(rng);
        SCOPED_TRACE(spec);
        schedule s;
        std::string message;
        ASSERT_TRUE(schedule::try_parse(spec, s, message)) << message;
        const std::string printed = s.to_string();
        schedule again;
        ASSERT_TRUE(schedule::try_parse(printed, again, message)) << printed << ": " << message;
        EXPECT_EQ(again, s) << printed;
        EXPECT_EQ(again.to_string(), printed);
        EXPECT_EQ(printed.find("=-"), std::string::npos) << "-0 is printed as 0: " << printed;
    }
}

// Mutations of valid specs: flipped bytes, cuts, NULs, UTF-8 garbage, huge numbers, extra
// separators. try_parse never throws; a failure leaves the output untouched and explains
// itself in one printable line that quotes the spec; a success round-trips.
TEST(LoopScheduleSpecFuzz, MutationsNeverCrashAndRejectionsArePrintable) {
    rng_t rng(77);
    const std::vector<std::string> inserts = {std::string(1, '\0'), "\xff", "\xC0\xAF", "\xED\xA0\x80", "\xEF\xBB\xBF",
                                              "\x1b[2J", "\n", ",", "=", ",,", "99999999999999999999999",
                                              "1e999", "1e-999", "nan", "-", "+", "0x", " ", "\xE2\x80\xAE"};
    int rejected = 0, accepted = 0;
    for (int i = 0; i < 6000; ++i) {
        std::string spec = random_valid_spec(rng);
        for (std::size_t m = 1 + rng() % 3; m > 0; --m) {
            const std::size_t at = spec.empty() ? 0 : rng() % (spec.size() + 1);
            switch (rng() % 5) {
            case 0:
                if (!spec.empty()) spec[rng() % spec.size()] = static_cast<char>(rng() & 0xFF);
                break;
            case 1: spec.resize(at); break;
            case 2: spec.insert(at, inserts[rng() % inserts.size()]); break;
            case 3:
                if (at < spec.size()) spec.erase(at, 1);
                break;
            default: spec += "," + spec; break;  // repeated keys, a kind as a key
            }
        }
        SCOPED_TRACE(runtime::printable(spec, 1000));
        schedule out = schedule::dynamic(9);
        std::string message;
        bool ok = false;
        ASSERT_NO_THROW(ok = schedule::try_parse(spec, out, message));
        if (!ok) {
            ++rejected;
            EXPECT_EQ(out, schedule::dynamic(9));
            EXPECT_TRUE(printable_line(message)) << message;
            EXPECT_EQ(message.rfind("schedule '" + runtime::printable(spec) + "': ", 0), 0u) << message;
            EXPECT_LT(message.size(), 600u) << message;
        } else {
            ++accepted;
            EXPECT_EQ(schedule(out.to_string()), out) << out.to_string();
        }
    }
    EXPECT_GT(rejected, 1000);
    EXPECT_GT(accepted, 100);
}

// A bad value for one key of an otherwise valid spec: the message names `key=value`
// (escaped) and says what is wrong with it.
TEST(LoopScheduleSpecFuzz, BadNumbersAreNamedWithTheirKey) {
    const std::vector<std::string> bad_values = {
        "1e400", "-1e400", "inf", "-inf", "nan", "0x10", "0x1p-1", "--1", "+-1", "+", "-", ".", "1e", "e5", "1.2.3",
        "1,5", "5 5", std::string("1\0", 2), "\xff", "1\xC0\xAF", "\x1b[2J", "99999999999999999999999",
        std::string(5000, '9'), "-0.5", "1e-999x"};
    struct slot {
        const char* prefix;
        const char* key;
        const char* suffix;
    };
    const slot slots[] = {{"hybrid,", "fs", ""},         {"dynamic,", "chunk", ""},       {"tasklets,", "n", ""},
                          {"tasklets,n=4,", "skew", ""}, {"staggered,fs=1,", "chunk", ",queue=mutex"},
                          {"adaptive,", "chunk", ""}};
    for (const slot& s : slots) {
        for (const std::string& v : bad_values) {
            const std::string spec = std::string(s.prefix) + s.key + "=" + v + s.suffix;
            SCOPED_TRACE(runtime::printable(spec, 200));
            schedule out;
            std::string message;
            // "1," would be cut at the comma: an empty item or a stray value, still rejected.
            ASSERT_FALSE(schedule::try_parse(spec, out, message));
            EXPECT_TRUE(printable_line(message)) << message;
            if (v.find(',') != std::string::npos) continue;
            const std::string named = std::string(s.key) + "=" + runtime::printable(v);
            EXPECT_NE(message.find(named), std::string::npos) << message;
            EXPECT_TRUE(message.find("is not a number") != std::string::npos ||
                        message.find("is not an integer") != std::string::npos ||
                        message.find("is outside [") != std::string::npos)
                << message;
        }
    }
}

}  // namespace
}  // namespace aloe

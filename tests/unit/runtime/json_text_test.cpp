// runtime/json_text: json_quote always gives a valid JSON string in valid UTF-8, whatever
// the bytes; valid text comes back unchanged through a strict reader, and each ill-formed
// UTF-8 sequence comes back as one U+FFFD.
#include "runtime/json_text.hpp"

#include "unit/strict_json.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <string>

namespace aloe::runtime {
namespace {

const std::string replacement = "\xEF\xBF\xBD";  // U+FFFD

// What a strict reader gives back for json_quote(s); fails the test when it is not JSON.
std::string read_back(std::string_view s) {
    const std::string quoted = json_quote(s);
    std::string error;
    const std::optional<testing::json_value> v = testing::strict_json_reader::parse(quoted, error);
    EXPECT_TRUE(v.has_value()) << error << " in " << quoted;
    if (!v) return {};
    EXPECT_EQ(v->kind, testing::json_value::kind_t::string);
    return v->text;
}

// An encoder independent of the decoder under test: the shortest UTF-8 form of `cp`.
std::string encode(char32_t cp) { return testing::utf8_of(static_cast<std::uint32_t>(cp)); }

// Reference for the replacement rule, by a different method than utf8_text.hpp: a candidate
// is well-formed when decoding its bits naively and re-encoding gives the same bytes (which
// rules out overlong forms) and the code point is a scalar value. An ill-formed run is the
// longest prefix that, padded with 0x80 continuation bytes, becomes well-formed.
std::string reference_sanitized(std::string_view s) {
    const auto length_from_lead = [](unsigned char b) -> std::size_t {
        if (b < 0x80) return 1;
        if ((b & 0xE0) == 0xC0) return 2;
        if ((b & 0xF0) == 0xE0) return 3;
        if ((b & 0xF8) == 0xF0) return 4;
        return 0;
    };
    const auto well_formed = [&](const std::string& bytes) {
        const std::size_t n = length_from_lead(static_cast<unsigned char>(bytes[0]));
        if (n == 0 || bytes.size() != n) return false;
        char32_t cp = n == 1 ? static_cast<unsigned char>(bytes[0]) : static_cast<unsigned char>(bytes[0]) & (0x7F >> n);
        for (std::size_t k = 1; k < n; ++k) {
            const auto b = static_cast<unsigned char>(bytes[k]);
            if ((b & 0xC0) != 0x80) return false;
            cp = (cp << 6) | (b & 0x3F);
        }
        return cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF) && encode(cp) == bytes;
    };
    std::string out;
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t n = length_from_lead(static_cast<unsigned char>(s[i]));
        if (n != 0 && i + n <= s.size() && well_formed(std::string(s.substr(i, n)))) {
            out += s.substr(i, n);
            i += n;
            continue;
        }
        std::size_t bad = 1;
        for (std::size_t k = 2; n != 0 && k < n && i + k <= s.size(); ++k) {
            std::string padded(s.substr(i, k));
            padded.append(n - k, '\x80');
            if (!well_formed(padded)) break;
            bad = k;
        }
        out += replacement;
        i += bad;
    }
    return out;
}

TEST(RuntimeJsonText, EscapesQuotesBackslashesAndControls) {
    EXPECT_EQ(json_quote("a\"b\\c"), "\"a\\\"b\\\\c\"");
    EXPECT_EQ(json_quote("\n\t\r\b\f"), "\"\\n\\t\\r\\b\\f\"");
    EXPECT_EQ(json_quote(std::string_view("\0\x01\x1f\x7f", 4)), "\"\\u0000\\u0001\\u001f\\u007f\"");
    EXPECT_EQ(json_quote("\xE2\x80\xA8"), "\"\\u2028\"");
}

TEST(RuntimeJsonText, ValidUtf8IsKeptAsIs) {
    const std::string text = "caf\xC3\xA9 \xE4\xB8\xAD \xF0\x9F\x98\x80 \xEF\xBB\xBF";
    EXPECT_EQ(json_quote(text), "\"" + text + "\"");
}

TEST(RuntimeJsonText, EachIllFormedSequenceBecomesOneReplacement) {
    const std::string r = replacement;
    EXPECT_EQ(json_quote("a\xFF" "b"), "\"a" + r + "b\"");
    EXPECT_EQ(json_quote("\xC0\xAF"), "\"" + r + r + "\"");                 // overlong '/'
    EXPECT_EQ(json_quote("\xED\xA0\x80"), "\"" + r + r + r + "\"");         // CESU-8 surrogate
    EXPECT_EQ(json_quote("\xF4\x90\x80\x80"), "\"" + r + r + r + r + "\""); // above U+10FFFF
    EXPECT_EQ(json_quote("x\xE4\xB8"), "\"x" + r + "\"");                   // truncated
    EXPECT_EQ(json_quote("\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64"),
              "\"a" + r + r + r + "b" + r + "c" + r + r + "d\"");
}

// Random valid text (every plane, controls, quotes) comes back unchanged; random bytes come
// back as the reference replacement gives them; the output is always valid UTF-8 JSON.
TEST(RuntimeJsonText, RandomNamesRoundTripThroughAStrictReader) {
    std::mt19937_64 rng(2026);
    const char32_t specials[] = {'"', '\\', '/', 0, '\n', 0x1F, 0x7F, 0x2028, 0x2029, 0xFEFF, 0xFFFD, 0x10FFFF};
    for (int i = 0; i < 3000; ++i) {
        std::string text;
        for (std::size_t n = rng() % 40; n > 0; --n) {
            char32_t cp = 0;
            switch (rng() % 5) {
            case 0: cp = static_cast<char32_t>(0x20 + rng() % 0x5F); break;
            case 1: cp = specials[rng() % std::size(specials)]; break;
            case 2: cp = static_cast<char32_t>(0x80 + rng() % 0x780); break;
            case 3: cp = static_cast<char32_t>(0x800 + rng() % (0xD800 - 0x800)); break;
            default: cp = static_cast<char32_t>(0x10000 + rng() % 0x100000); break;
            }
            text += encode(cp);
        }
        ASSERT_EQ(read_back(text), text) << i;
        std::string bytes(rng() % 40, '\0');
        for (char& c : bytes) c = static_cast<char>(rng() & 0xFF);
        const std::string quoted = json_quote(bytes);
        ASSERT_TRUE(is_valid_utf8(quoted)) << i;
        ASSERT_EQ(read_back(bytes), reference_sanitized(bytes)) << i;
    }
}

TEST(RuntimeJsonText, NumbersAreJsonOrNull) {
    EXPECT_EQ(json_number(0.5), "0.5");
    EXPECT_EQ(json_number(std::numeric_limits<double>::quiet_NaN()), "null");
    EXPECT_EQ(json_number(-std::numeric_limits<double>::infinity()), "null");
}

}  // namespace
}  // namespace aloe::runtime

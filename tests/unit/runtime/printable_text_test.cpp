// runtime/utf8_text and runtime/printable_text: strict UTF-8 decoding (the standard's own
// examples) and the escaping every message uses to quote user text.
#include "runtime/printable_text.hpp"
#include "runtime/utf8_text.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace aloe::runtime {
namespace {

// Lengths of the units decode_utf8 splits `bytes` into, negative for ill-formed ones.
std::vector<int> units(std::string_view bytes) {
    std::vector<int> out;
    for (std::size_t i = 0; i < bytes.size();) {
        const utf8_unit u = decode_utf8(bytes, i);
        out.push_back(u.well_formed ? static_cast<int>(u.length) : -static_cast<int>(u.length));
        i += u.length;
    }
    return out;
}

TEST(RuntimeUtf8, WellFormedSequencesDecode) {
    EXPECT_EQ(decode_utf8("A", 0).code_point, U'A');
    EXPECT_EQ(decode_utf8("\xC3\xA9", 0).code_point, U'\u00E9');
    EXPECT_EQ(decode_utf8("\xE4\xB8\xAD", 0).code_point, U'\u4E2D');
    EXPECT_EQ(decode_utf8("\xF0\x9F\x98\x80", 0).code_point, U'\U0001F600');
    EXPECT_EQ(decode_utf8("\xF4\x8F\xBF\xBF", 0).code_point, U'\U0010FFFF');
    EXPECT_EQ(decode_utf8("\xEF\xBB\xBF", 0).code_point, U'\uFEFF');
    EXPECT_TRUE(is_valid_utf8("plain, \xC3\xA9, \xF0\x9F\x98\x80"));
}

TEST(RuntimeUtf8, IllFormedSequencesAreMaximalSubparts) {
    // The Unicode Standard's example (ch. 3, table 3-8): 61 F1 80 80 E1 80 C2 62 80 63 80 BF 64.
    EXPECT_EQ(units("\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64"),
              (std::vector<int>{1, -3, -2, -1, 1, -1, 1, -1, -1, 1}));
    EXPECT_EQ(units("\xC0\xAF"), (std::vector<int>{-1, -1}));              // overlong '/'
    EXPECT_EQ(units("\xE0\x80\xAF"), (std::vector<int>{-1, -1, -1}));      // overlong, 3 bytes
    EXPECT_EQ(units("\xF0\x80\x80\xAF"), (std::vector<int>{-1, -1, -1, -1}));
    EXPECT_EQ(units("\xED\xA0\x80\xED\xB0\x80"), (std::vector<int>{-1, -1, -1, -1, -1, -1}));  // CESU-8 pair
    EXPECT_EQ(units("\xF4\x90\x80\x80"), (std::vector<int>{-1, -1, -1, -1}));  // above U+10FFFF
    EXPECT_EQ(units("\xE4\xB8"), (std::vector<int>{-2}));                  // truncated at the end
    EXPECT_EQ(units("\xFF\xFE"), (std::vector<int>{-1, -1}));
    EXPECT_FALSE(is_valid_utf8("a\x80"));
}

TEST(RuntimePrintable, PlainTextIsKept) {
    EXPECT_EQ(printable("staggered,fs=0.5"), "staggered,fs=0.5");
    EXPECT_EQ(printable("caf\xC3\xA9 \xE4\xB8\xAD"), "caf\xC3\xA9 \xE4\xB8\xAD");
    EXPECT_EQ(printable(""), "");
}

TEST(RuntimePrintable, ControlBytesNulAndInvalidUtf8AreEscaped) {
    EXPECT_EQ(printable(std::string_view("a\0b", 3)), "a\\x00b");
    EXPECT_EQ(printable("1\n2\r3\t4"), "1\\n2\\r3\\t4");
    EXPECT_EQ(printable("\x1b[31mred"), "\\x1b[31mred");
    EXPECT_EQ(printable("del\x7f"), "del\\x7f");
    EXPECT_EQ(printable("back\\slash"), "back\\\\slash");
    EXPECT_EQ(printable("\xff\xC0\xAF"), "\\xff\\xc0\\xaf");
    EXPECT_EQ(printable("\xE4\xB8"), "\\xe4\\xb8");
    EXPECT_EQ(printable("\xEF\xBB\xBFsite"), "\\ufeffsite");          // a BOM
    EXPECT_EQ(printable("a\xE2\x80\xAE" "b"), "a\\u202eb");            // right-to-left override
    EXPECT_EQ(printable("\xC2\x85"), "\\u0085");                        // C1 next line
}

TEST(RuntimePrintable, LongTextIsCutAtACharacterBoundary) {
    const std::string long_text(10'000, 'x');
    const std::string p = printable(long_text);
    EXPECT_EQ(p, std::string(printable_default_limit, 'x') + "\xE2\x80\xA6");
    // An escape is never split: 79 letters then a NUL (4 bytes escaped) does not fit in 80.
    const std::string cut = printable(std::string(79, 'y') + std::string(1, '\0'));
    EXPECT_EQ(cut, std::string(79, 'y') + "\xE2\x80\xA6");
    EXPECT_EQ(printable(std::string(100, 'z'), 10), std::string(10, 'z') + "\xE2\x80\xA6");
}

// Random bytes: the result is always valid UTF-8 with no control character, and bounded.
TEST(RuntimePrintable, AnyBytesGivePrintableBoundedUtf8) {
    std::mt19937_64 rng(12);
    for (int i = 0; i < 5000; ++i) {
        std::string bytes(rng() % 200, '\0');
        for (char& c : bytes) c = static_cast<char>(rng() & 0xFF);
        const std::string p = printable(bytes);
        ASSERT_TRUE(is_valid_utf8(p)) << i;
        for (const char c : p) ASSERT_FALSE(static_cast<unsigned char>(c) < 0x20 || c == 0x7F) << i;
        ASSERT_LE(p.size(), printable_default_limit + 3) << i;  // + "…"
        if (p.size() <= printable_default_limit && p.find("\xE2\x80\xA6") == std::string::npos) {
            // Not cut: every input byte is accounted for, so nothing was dropped silently.
            ASSERT_GE(p.size(), bytes.size()) << i;
        }
    }
}

}  // namespace
}  // namespace aloe::runtime

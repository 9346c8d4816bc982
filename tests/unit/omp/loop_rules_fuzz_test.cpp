// omp::parse_loop_rules under seeded random input: generated valid rules files (any
// spacing, comments, blank lines, CRLF, a BOM) parse to exactly the rules written; random
// texts and byte garbage never crash, give a bounded number of errors, and every error is
// one printable line naming file:line with a line that exists.
#include "omp/loop_rules.hpp"

#include "runtime/utf8_text.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace aloe::omp {
namespace {

using rng_t = std::mt19937_64;

struct written_rule {
    std::string site;
    std::string choice;  // canonical text
    int line;
};

std::string random_site(rng_t& rng) {
    static const char* const modules[] = {"app", "libfoo.so.1", "a-b_c", "jacobi3d", "x"};
    static const char* const files[] = {"stencil.c", "src/kernel.cpp", "a.f90", "dir/sub/loop.cc"};
    switch (rng() % 3) {
    case 0: return "*";
    case 1: {
        static const char hex[] = "0123456789abcdefABCDEF";
        std::string off;
        for (std::size_t n = 1 + rng() % 8; n > 0; --n) off += hex[rng() % 22];
        return std::string(modules[rng() % 5]) + "+0x" + off;
    }
    default: return std::string(files[rng() % 4]) + ":" + std::to_string(1 + rng() % 5000);
    }
}

std::string random_choice(rng_t& rng) {
    static const char* const choices[] = {"program", "forward", "static", "dynamic,chunk=4", "guided,2",
                                          "hybrid,fs=0.25", "staggered,fs=0.7,chunk=8", "tasklets,n=16,skew=2",
                                          "adaptive", "adaptive,search=nlopt,chunk=auto", "weighted,fs=-0"};
    return choices[rng() % std::size(choices)];
}

// The canonical text parse_loop_rules will store for `choice`.
std::string canonical(const std::string& choice) {
    std::string error;
    const std::optional<loop_choice> c = parse_loop_choice(choice, error);
    return c ? c->text() : "<" + error + ">";
}

std::string gap(rng_t& rng) { return std::string(1 + rng() % 3, " \t"[rng() & 1]); }

// A valid file and the rules it holds.
std::string random_valid_file(rng_t& rng, std::vector<written_rule>& rules) {
    const std::string eol = (rng() & 1) ? "\r\n" : "\n";
    std::string text = (rng() % 4 == 0) ? "\xEF\xBB\xBF" : "";
    int line = 0;
    for (std::size_t n = rng() % 30; n > 0; --n) {
        ++line;
        switch (rng() % 5) {
        case 0: text += "# a comment, with * and +0x10 in it" + eol; break;
        case 1: text += std::string(rng() % 4, ' ') + eol; break;
        default: {
            const std::string site = random_site(rng);
            const std::string choice = random_choice(rng);
            text += std::string(rng() % 3, ' ') + site + gap(rng) + choice + (rng() & 1 ? gap(rng) + "# why" : "") + eol;
            rules.push_back({site, canonical(choice), line});
        }
        }
    }
    return text;
}

bool printable_line(std::string_view s) {
    if (!runtime::is_valid_utf8(s)) return false;
    for (const char c : s)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) return false;
    return true;
}

// Checks the errors of a failed parse of `text` from "f.rules": bounded, printable, each
// naming f.rules and a line the text has; the last may be the "… and N more" count.
void check_errors(const std::vector<std::string>& errors, std::string_view text) {
    ASSERT_LE(errors.size(), max_rules_errors + 1);
    const long lines = static_cast<long>(std::count(text.begin(), text.end(), '\n')) + 1;
    for (std::size_t i = 0; i < errors.size(); ++i) {
        const std::string& e = errors[i];
        EXPECT_TRUE(printable_line(e)) << e;
        if (i == max_rules_errors) {
            EXPECT_EQ(e.rfind("f.rules: \xE2\x80\xA6 and ", 0), 0u) << e;
            continue;
        }
        ASSERT_EQ(e.rfind("f.rules:", 0), 0u) << e;
        const long line = std::strtol(e.c_str() + 8, nullptr, 10);
        EXPECT_GE(line, 1) << e;
        EXPECT_LE(line, lines) << e;
        EXPECT_NE(e.find(": ", 8), std::string::npos) << e;
    }
}

TEST(OmpLoopRulesFuzz, GeneratedValidFilesParseToTheRulesWritten) {
    rng_t rng(31337);
    for (int i = 0; i < 3000; ++i) {
        std::vector<written_rule> expected;
        const std::string text = random_valid_file(rng, expected);
        loop_rules rules;
        std::vector<std::string> errors;
        ASSERT_TRUE(parse_loop_rules(text, "f.rules", rules, errors)) << errors.front();
        ASSERT_EQ(rules.rules.size(), expected.size()) << i;
        for (std::size_t k = 0; k < expected.size(); ++k) {
            EXPECT_EQ(rules.rules[k].site, expected[k].site);
            EXPECT_EQ(rules.rules[k].choice.text(), expected[k].choice);
            EXPECT_EQ(rules.rules[k].line, expected[k].line);
        }
    }
}

// Mutated valid files and pure garbage: no crash, bounded and well-formed errors.
TEST(OmpLoopRulesFuzz, RandomTextsAndGarbageGiveBoundedNamedErrors) {
    rng_t rng(4711);
    const std::vector<std::string> inserts = {std::string(1, '\0'), "\xff", "\xED\xA0\x80", "\x1b[2J", "\r", "\n",
                                              "#", "*", "+0x", ":", ",", "=", "1e999", std::string(5000, 'z'),
                                              "\xEF\xBB\xBF", "\xE2\x80\xAE"};
    int failed = 0;
    for (int i = 0; i < 3000; ++i) {
        std::string text;
        if (rng() % 4 == 0) {
            text.resize(rng() % 5000);
            for (char& c : text) c = static_cast<char>(rng() & 0xFF);
        } else {
            std::vector<written_rule> ignored;
            text = random_valid_file(rng, ignored);
            for (std::size_t m = 1 + rng() % 6; m > 0; --m) {
                const std::size_t at = text.empty() ? 0 : rng() % (text.size() + 1);
                if (rng() & 1) text.insert(at, inserts[rng() % inserts.size()]);
                else if (!text.empty()) text[rng() % text.size()] = static_cast<char>(rng() & 0xFF);
            }
        }
        loop_rules rules;
        std::vector<std::string> errors;
        bool ok = false;
        ASSERT_NO_THROW(ok = parse_loop_rules(text, "f.rules", rules, errors));
        EXPECT_EQ(ok, errors.empty());
        if (!ok) ++failed;
        check_errors(errors, text);
        for (const loop_rule& r : rules.rules) EXPECT_GE(r.line, 1);
    }
    EXPECT_GT(failed, 1000);
}

}  // namespace
}  // namespace aloe::omp

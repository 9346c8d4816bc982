// Runtime.NoGetenv: only src/runtime/config.cpp reads the environment (STYLE.md,
// "Configuration"). Scans every C/C++ file under src/, tools/ and include/ for the
// identifiers getenv and secure_getenv outside comments.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

constexpr std::string_view allowed_file = "src/runtime/config.cpp";

bool is_identifier_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// `text` with // and /* */ comments blanked out (string and character literals kept, so a
// comment marker inside a string does not hide code after it).
std::string strip_comments(const std::string& text) {
    std::string out;
    out.reserve(text.size());
    enum class state { code, line_comment, block_comment, string, character } s = state::code;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        const char next = i + 1 < text.size() ? text[i + 1] : '\0';
        switch (s) {
        case state::code:
            if (c == '/' && next == '/') { s = state::line_comment; ++i; out += "  "; continue; }
            if (c == '/' && next == '*') { s = state::block_comment; ++i; out += "  "; continue; }
            if (c == '"') s = state::string;
            // A quote after a digit or letter is a digit separator (1'000) or a literal's
            // prefix (u8'x' is rare enough to ignore), not the start of a character.
            if (c == '\'' && (out.empty() || !is_identifier_char(out.back()))) s = state::character;
            out += c;
            break;
        case state::line_comment:
            if (c == '\n') { s = state::code; out += c; } else { out += ' '; }
            break;
        case state::block_comment:
            if (c == '*' && next == '/') { s = state::code; ++i; out += "  "; continue; }
            out += c == '\n' ? '\n' : ' ';
            break;
        case state::string:
        case state::character:
            if (c == '\\' && i + 1 < text.size()) { out += c; out += next; ++i; continue; }
            if ((s == state::string && c == '"') || (s == state::character && c == '\'')) s = state::code;
            out += c;
            break;
        }
    }
    return out;
}

// Whether `code` (comments stripped) names getenv or secure_getenv as a whole identifier.
bool names_getenv(const std::string& code) {
    for (std::string_view word : {"getenv", "secure_getenv"}) {
        for (std::size_t at = code.find(word); at != std::string::npos; at = code.find(word, at + 1)) {
            const bool starts = at == 0 || !is_identifier_char(code[at - 1]);
            const std::size_t end = at + word.size();
            const bool ends = end == code.size() || !is_identifier_char(code[end]);
            if (starts && ends) return true;
        }
    }
    return false;
}

bool is_source(const fs::path& p) {
    static const std::vector<std::string> extensions = {".c", ".cc", ".cpp", ".cxx", ".h", ".hh",
                                                        ".hpp", ".hxx", ".inl", ".ipp", ".tpp"};
    const std::string ext = p.extension().string();
    return std::find(extensions.begin(), extensions.end(), ext) != extensions.end();
}

std::string read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream buf;
    buf << in.rdbuf();
    return buf.str();
}

TEST(RuntimeNoGetenv, ScannerSeesCallsNotComments) {
    EXPECT_TRUE(names_getenv(strip_comments("auto v = std::getenv(\"X\");")));
    EXPECT_TRUE(names_getenv(strip_comments("char* v = secure_getenv(name);")));
    EXPECT_TRUE(names_getenv(strip_comments("auto f = &::getenv;")));
    EXPECT_TRUE(names_getenv(strip_comments("/* note */ getenv(\"A\"); // getenv")));
    EXPECT_FALSE(names_getenv(strip_comments("// no other file calls getenv (a test checks it)")));
    EXPECT_FALSE(names_getenv(strip_comments("/* getenv(\n  \"X\") */ int x;")));
    EXPECT_FALSE(names_getenv(strip_comments("my_getenv_wrapper(1); getenvironment();")));
    EXPECT_TRUE(names_getenv(strip_comments("const char* s = \"//\"; getenv(s);")));
    EXPECT_TRUE(names_getenv(strip_comments("int n = 1'000; getenv(\"A\"); char q = '\\'';")));
}

TEST(RuntimeNoGetenv, OnlyConfigCppReadsTheEnvironment) {
    const fs::path root = ALOE_SOURCE_DIR;
    std::vector<std::string> offenders;
    bool config_cpp_seen = false;
    std::size_t scanned = 0;
    for (const char* dir : {"src", "tools", "include"}) {
        if (!fs::exists(root / dir)) continue;
        for (const fs::directory_entry& e : fs::recursive_directory_iterator(root / dir)) {
            if (!e.is_regular_file() || !is_source(e.path())) continue;
            ++scanned;
            const std::string relative = fs::relative(e.path(), root).generic_string();
            if (!names_getenv(strip_comments(read(e.path())))) continue;
            if (relative == allowed_file) config_cpp_seen = true;
            else offenders.push_back(relative);
        }
    }
    EXPECT_GT(scanned, 0u);
    EXPECT_TRUE(offenders.empty()) << "getenv outside " << allowed_file << ": "
                                   << ::testing::PrintToString(offenders)
                                   << " (add the variable to the table in config.cpp instead)";
    // The scanner works on real files: it finds the one allowed call.
    EXPECT_TRUE(config_cpp_seen) << allowed_file << " no longer calls getenv?";
}

}  // namespace

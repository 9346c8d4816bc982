// Runtime.NoGetenv: only src/runtime/config.cpp reads the environment (STYLE.md,
// "Configuration"). Scans every C/C++ file under src/, tools/ and include/ for the
// identifiers getenv and secure_getenv outside comments.
#include "unit/source_scan.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace fs = std::filesystem;
using aloe::testing::is_identifier_char;
using aloe::testing::is_source;
using aloe::testing::strip_comments;

constexpr std::string_view allowed_file = "src/runtime/config.cpp";

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
            if (!names_getenv(strip_comments(aloe::testing::read_file(e.path())))) continue;
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

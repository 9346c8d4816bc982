// apps/common/args: every flag form, and every bad command line named in the error.
#include "common/args.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

namespace {
using aloe_apps::args;
using aloe_apps::usage_error;

// argv for a list of words (program name first).
struct argv_of {
    explicit argv_of(std::vector<std::string> w) : words(std::move(w)) {
        for (std::string& s : words) ptrs.push_back(s.data());
    }
    int argc() const { return static_cast<int>(ptrs.size()); }
    char** argv() { return ptrs.data(); }
    std::vector<std::string> words;
    std::vector<char*> ptrs;
};

std::string message_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const usage_error& e) {
        return e.what();
    }
    return "no error";
}

TEST(AppsArgs, ReadsBothFormsAndDefaults) {
    argv_of a({"prog", "--n", "12", "--mean-us=2.5", "--dist", "ramp", "--timeline"});
    args f(a.argc(), a.argv());
    EXPECT_EQ(f.integer("--n", 1, "n"), 12);
    EXPECT_DOUBLE_EQ(f.real("--mean-us", 1, "mean"), 2.5);
    EXPECT_EQ(f.text("--dist", "uniform", "dist"), "ramp");
    EXPECT_TRUE(f.present("--timeline", "t"));
    EXPECT_FALSE(f.present("--other", "o"));
    EXPECT_EQ(f.integer("--absent", 7, "a"), 7);
    EXPECT_NO_THROW(f.reject_unread());
    EXPECT_FALSE(f.help_requested());
}

TEST(AppsArgs, LastOccurrenceWins) {
    argv_of a({"prog", "--n", "1", "--n=2"});
    args f(a.argc(), a.argv());
    EXPECT_EQ(f.integer("--n", 0, "n"), 2);
}

TEST(AppsArgs, BadValuesNameTheFlag) {
    argv_of a({"prog", "--n", "12x", "--x", "abc", "--last"});
    args f(a.argc(), a.argv());
    EXPECT_NE(message_of([&] { f.integer("--n", 0, ""); }).find("--n: '12x' is not an integer"), std::string::npos);
    EXPECT_NE(message_of([&] { f.real("--x", 0, ""); }).find("--x: 'abc' is not a number"), std::string::npos);
    EXPECT_NE(message_of([&] { f.text("--last", "", ""); }).find("--last needs a value"), std::string::npos);
}

TEST(AppsArgs, SwitchWithValueIsAnError) {
    argv_of a({"prog", "--timeline=yes"});
    args f(a.argc(), a.argv());
    EXPECT_NE(message_of([&] { f.present("--timeline", ""); }).find("takes no value"), std::string::npos);
}

TEST(AppsArgs, UnreadWordsAreRejectedByName) {
    argv_of a({"prog", "--n", "3", "--typo", "4"});
    args f(a.argc(), a.argv());
    f.integer("--n", 0, "");
    EXPECT_NE(message_of([&] { f.reject_unread(); }).find("'--typo'"), std::string::npos);
}

TEST(AppsArgs, HelpListsEveryFlagRead) {
    argv_of a({"prog", "--help"});
    args f(a.argc(), a.argv());
    f.integer("--n", 5, "grid points");
    f.present("--timeline", "record timelines");
    EXPECT_TRUE(f.help_requested());
    const std::string h = f.help("summary");
    EXPECT_NE(h.find("--n N"), std::string::npos);
    EXPECT_NE(h.find("grid points (default 5)"), std::string::npos);
    EXPECT_NE(h.find("--timeline"), std::string::npos);
    EXPECT_NO_THROW(f.reject_unread());
}

}  // namespace

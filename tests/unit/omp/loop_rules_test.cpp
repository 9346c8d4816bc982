// omp::loop_rules: the rules file of `aloe run --rules` and the --schedule choice.
#include "omp/loop_rules.hpp"

#include <gtest/gtest.h>

namespace aloe::omp {
namespace {

TEST(LoopChoice, ProgramForwardOrAnAloeSchedule) {
    std::string error;
    EXPECT_EQ(parse_loop_choice("program", error)->kind, loop_choice::kind_t::program);
    EXPECT_EQ(parse_loop_choice("forward", error)->kind, loop_choice::kind_t::forward);
    const auto s = parse_loop_choice("staggered,fs=0.7,chunk=8", error);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->kind, loop_choice::kind_t::schedule);
    EXPECT_EQ(s->text(), schedule("staggered,fs=0.7,chunk=8").to_string());
    EXPECT_FALSE(parse_loop_choice("dynmic,4", error));
    EXPECT_NE(error.find("dynmic,4"), std::string::npos) << error;
}

TEST(LoopRules, FirstNamingLineWinsAndStarIsTheFallback) {
    loop_rules rules;
    std::vector<std::string> errors;
    ASSERT_TRUE(parse_loop_rules("# comment\n"
                                 "*              adaptive\n"
                                 "app+0x1f2c     forward   # by address\n"
                                 "stencil.c:42   dynamic,chunk=4\n"
                                 "app+0x1f2c     static\n",
                                 "rules.txt", rules, errors))
        << errors.front();
    ASSERT_EQ(rules.rules.size(), 4u);
    EXPECT_TRUE(rules.names_source_lines());
    EXPECT_EQ(rules.match("app+0x1f2c", "")->choice.text(), "forward");
    EXPECT_EQ(rules.match("app+0x9999", "src/stencil.c:42")->line, 4);
    EXPECT_EQ(rules.match("app+0x9999", "stencil.c:42")->line, 4);
    // A suffix that is not a whole path component does not match.
    EXPECT_EQ(rules.match("app+0x9999", "my_stencil.c:42")->line, 2);
    EXPECT_EQ(rules.match("lib.so+0x10", "")->line, 2);
}

TEST(LoopRules, NoStarMeansNoRuleForUnnamedSites) {
    loop_rules rules;
    std::vector<std::string> errors;
    ASSERT_TRUE(parse_loop_rules("app+0x10 forward\n", "r", rules, errors));
    EXPECT_FALSE(rules.names_source_lines());
    EXPECT_EQ(rules.match("app+0x11", "a.c:1"), nullptr);
}

TEST(LoopRules, EachBadLineIsNamedWithItsFileAndLine) {
    loop_rules rules;
    std::vector<std::string> errors;
    EXPECT_FALSE(parse_loop_rules("app+0x10\n"              // no schedule
                                  "nonsense static\n"       // not a site
                                  "a.c:12 dynamic,chunk=0\n" // bad schedule
                                  "app+0xZZ static\n"       // bad hex
                                  "* guided\n",             // fine
                                  "my.rules", rules, errors));
    ASSERT_EQ(errors.size(), 4u);
    EXPECT_NE(errors[0].find("my.rules:1:"), std::string::npos) << errors[0];
    EXPECT_NE(errors[1].find("my.rules:2: site 'nonsense'"), std::string::npos) << errors[1];
    EXPECT_NE(errors[2].find("my.rules:3:"), std::string::npos) << errors[2];
    EXPECT_NE(errors[3].find("my.rules:4:"), std::string::npos) << errors[3];
    EXPECT_EQ(rules.rules.size(), 1u);
}

TEST(LoopRules, AnUnreadableFileIsOneError) {
    loop_rules rules;
    std::vector<std::string> errors;
    EXPECT_FALSE(load_loop_rules("/nonexistent/aloe.rules", rules, errors));
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_NE(errors[0].find("/nonexistent/aloe.rules"), std::string::npos);
}

}  // namespace
}  // namespace aloe::omp

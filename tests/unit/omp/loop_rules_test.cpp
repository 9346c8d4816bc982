// omp::loop_rules: the rules file of `aloe run --rules` and the --schedule choice.
#include "omp/loop_rules.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

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

TEST(LoopRules, ASourceLineMustBeALineThatCanExist) {
    loop_rules rules;
    std::vector<std::string> errors;
    EXPECT_FALSE(parse_loop_rules("where.c:0 static\n"                      // no line 0
                                  "where.c:99999999999999999999 static\n"   // beyond any file
                                  "where.c:4294967296 static\n"             // one past 32 bits
                                  "where.c:+7 static\n"                     // a sign is not a line
                                  "where.c:7 static\n",                     // fine
                                  "s.rules", rules, errors));
    ASSERT_EQ(errors.size(), 4u);
    for (std::size_t i = 0; i < errors.size(); ++i)
        EXPECT_NE(errors[i].find("s.rules:" + std::to_string(i + 1) + ": site"), std::string::npos) << errors[i];
    ASSERT_EQ(rules.rules.size(), 1u);
    EXPECT_EQ(rules.rules[0].site, "where.c:7");
}

TEST(LoopRules, AnUnreadableFileIsOneError) {
    loop_rules rules;
    std::vector<std::string> errors;
    EXPECT_FALSE(load_loop_rules("/nonexistent/aloe.rules", rules, errors));
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_NE(errors[0].find("/nonexistent/aloe.rules"), std::string::npos);
    EXPECT_NE(errors[0].find("No such file or directory"), std::string::npos) << errors[0];
}

// A scratch folder for one test, removed with everything in it.
class scratch_dir {
public:
    scratch_dir() {
        std::string pattern = ::testing::TempDir() + "aloe-rules-XXXXXX";
        if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
        path_ = pattern;
    }
    ~scratch_dir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    scratch_dir(const scratch_dir&) = delete;
    scratch_dir& operator=(const scratch_dir&) = delete;

    std::string file(const std::string& name, std::string_view text) const {
        const std::string p = path_ + "/" + name;
        std::ofstream(p, std::ios::binary) << text;
        return p;
    }
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

// The one error load_loop_rules gives for `path`, which must name the file.
std::string refusal(const std::string& path) {
    loop_rules rules;
    std::vector<std::string> errors;
    EXPECT_FALSE(load_loop_rules(path, rules, errors));
    EXPECT_EQ(errors.size(), 1u);
    EXPECT_TRUE(rules.rules.empty());
    if (errors.empty()) return {};
    EXPECT_NE(errors[0].find("the rules file '" + path + "'"), std::string::npos) << errors[0];
    return errors[0];
}

TEST(LoopRules, ADirectoryIsRefusedByName) {
    const scratch_dir dir;
    EXPECT_NE(refusal(dir.path()).find("is a directory"), std::string::npos);
}

// /dev/zero is endless: it must be refused before a byte is read, not read until memory
// runs out.
TEST(LoopRules, ACharacterDeviceIsRefusedUnread) {
    EXPECT_NE(refusal("/dev/zero").find("is a character device"), std::string::npos);
    const scratch_dir dir;
    const std::string link = dir.path() + "/zero.rules";
    ASSERT_EQ(::symlink("/dev/zero", link.c_str()), 0);
    EXPECT_NE(refusal(link).find("is a character device"), std::string::npos);
}

// Opening a FIFO for reading waits for a writer: the loader must neither wait nor read it.
TEST(LoopRules, AFifoIsRefusedWithoutWaitingForAWriter) {
    const scratch_dir dir;
    const std::string fifo = dir.path() + "/rules.fifo";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    EXPECT_NE(refusal(fifo).find("is a FIFO"), std::string::npos);
}

TEST(LoopRules, ASymlinkToARegularFileIsFollowed) {
    const scratch_dir dir;
    const std::string target = dir.file("real.rules", "* dynamic,chunk=2\n");
    const std::string link = dir.path() + "/link.rules";
    ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
    loop_rules rules;
    std::vector<std::string> errors;
    ASSERT_TRUE(load_loop_rules(link, rules, errors)) << errors.front();
    ASSERT_EQ(rules.rules.size(), 1u);
    EXPECT_EQ(rules.rules[0].choice.text(), "dynamic,chunk=2");
}

TEST(LoopRules, AFileLargerThanTheLimitIsRefusedAndOneAtTheLimitIsRead) {
    const scratch_dir dir;
    // Comment lines of 64 bytes up to exactly the limit: read, no rules, no errors.
    std::string text;
    const std::string line = "#" + std::string(62, '-') + "\n";
    while (text.size() + line.size() <= max_rules_file_bytes) text += line;
    text += std::string(max_rules_file_bytes - text.size(), '\n');
    ASSERT_EQ(text.size(), max_rules_file_bytes);
    loop_rules rules;
    std::vector<std::string> errors;
    EXPECT_TRUE(load_loop_rules(dir.file("limit.rules", text), rules, errors)) << errors.front();
    text += "\n";
    EXPECT_NE(refusal(dir.file("over.rules", text)).find("is larger than 1 MiB"), std::string::npos);
}

TEST(LoopRules, AByteOrderMarkAndCrlfLineEndsAreAccepted) {
    const scratch_dir dir;
    loop_rules rules;
    std::vector<std::string> errors;
    ASSERT_TRUE(load_loop_rules(dir.file("windows.rules", "\xEF\xBB\xBF* adaptive\r\n"
                                                           "app+0x10   forward   # by address\r\n"
                                                           "\r\n"
                                                           "stencil.c:42 dynamic,chunk=4\r\n"),
                                rules, errors))
        << errors.front();
    ASSERT_EQ(rules.rules.size(), 3u);
    EXPECT_EQ(rules.rules[0].site, "*");
    EXPECT_EQ(rules.rules[1].choice.text(), "forward");
    EXPECT_EQ(rules.rules[2].site, "stencil.c:42");
    EXPECT_EQ(rules.rules[2].line, 4);
}

TEST(LoopRules, AnOverlongLineIsOneErrorAndTheRestIsRead) {
    loop_rules rules;
    std::vector<std::string> errors;
    EXPECT_FALSE(parse_loop_rules("* static\n" + std::string(max_rules_line_bytes + 1, 'a') + "\napp+0x1 forward\n",
                                  "r", rules, errors));
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0], "r:2: the line is longer than 4096 bytes");
    EXPECT_EQ(rules.rules.size(), 2u);
}

TEST(LoopRules, ErrorsAreCappedWithACountOfTheRest) {
    std::string text;
    for (int i = 0; i < 100; ++i) text += "nonsense static\n";
    loop_rules rules;
    std::vector<std::string> errors;
    EXPECT_FALSE(parse_loop_rules(text, "many.rules", rules, errors));
    ASSERT_EQ(errors.size(), max_rules_errors + 1);
    EXPECT_EQ(errors[max_rules_errors - 1].rfind("many.rules:20: ", 0), 0u) << errors[max_rules_errors - 1];
    EXPECT_EQ(errors.back(), "many.rules: \xE2\x80\xA6 and 80 more errors");
}

TEST(LoopRules, MessagesEscapeWhatTheFileHolds) {
    loop_rules rules;
    std::vector<std::string> errors;
    const std::string text = std::string("bad") + '\0' + "site\x1b[2J static\n* dyn\xff" "amic\n";
    EXPECT_FALSE(parse_loop_rules(text, "r\nname", rules, errors));
    ASSERT_EQ(errors.size(), 2u);
    EXPECT_EQ(errors[0].rfind("r\\nname:1: site 'bad\\x00site\\x1b[2J'", 0), 0u) << errors[0];
    EXPECT_NE(errors[1].find("'dyn\\xffamic'"), std::string::npos) << errors[1];
}

}  // namespace
}  // namespace aloe::omp

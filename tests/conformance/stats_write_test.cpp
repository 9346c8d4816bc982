// Writing the statistics file (aloe_stats_write, aloe::write_stats_json) as a user's program
// meets it: a full disk is an error the caller hears about, and a symbolic link at the target
// is replaced, never written through.
//
// Before issue 12 both wrote through an std::ofstream checked only before its buffer was
// flushed: /dev/full "succeeded" (the ENOSPC came at close, unseen), and a link's target was
// truncated and overwritten.
#include <aloe/aloe.h>
#include <aloe/aloe.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>

namespace {
namespace fs = std::filesystem;

std::string read_text(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// A fresh folder under the temporary directory, removed at the end of the test.
class scratch_folder {
public:
    scratch_folder() {
        std::string pattern = (fs::temp_directory_path() / "aloe-stats-write-XXXXXX").string();
        if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
    }
    ~scratch_folder() {
        std::error_code ec;
        if (!path_.empty()) fs::remove_all(path_, ec);
    }
    scratch_folder(const scratch_folder&) = delete;
    scratch_folder& operator=(const scratch_folder&) = delete;
    const fs::path& path() const { return path_; }

private:
    fs::path path_;
};

// Something to write: one site with statistics.
void run_a_loop() {
    aloe::team t(2);
    aloe::parallel_for(t, 0, 100, "dynamic,chunk=7", [](std::int64_t) {}, aloe::loop_site("conformance/stats_write"));
}

TEST(ConformanceStatsWrite, FullDiskIsAnErrorNamingENOSPC) {
    // No loop has run in this process yet (CTest runs each test alone; it is also the first in
    // the file): the document is a few dozen bytes, which a buffered stream holds until close,
    // where the old writer never looked. A large one failed already at the write.
    if (!fs::exists("/dev/full")) GTEST_SKIP() << "this system has no /dev/full";
    ASSERT_LT(aloe::stats_json().size(), 1024u) << "no site should be recorded yet";
    EXPECT_NE(aloe_stats_write("/dev/full"), ALOE_OK);
    const std::string message = aloe_last_error();
    EXPECT_NE(message.find("No space left on device"), std::string::npos) << message;
    EXPECT_NE(message.find("/dev/full"), std::string::npos) << message;

    std::string error;
    EXPECT_FALSE(aloe::write_stats_json("/dev/full", &error));
    EXPECT_NE(error.find("No space left on device"), std::string::npos) << error;

    run_a_loop();  // and a document with a site
    error.clear();
    EXPECT_FALSE(aloe::write_stats_json("/dev/full", &error));
    EXPECT_NE(error.find("No space left on device"), std::string::npos) << error;
}

TEST(ConformanceStatsWrite, MissingFolderIsAnError) {
    scratch_folder dir;
    ASSERT_FALSE(dir.path().empty());
    const std::string target = (dir.path() / "no-such-folder" / "stats.json").string();
    EXPECT_NE(aloe_stats_write(target.c_str()), ALOE_OK);
    EXPECT_NE(std::string(aloe_last_error()).find("no-such-folder"), std::string::npos) << aloe_last_error();
    EXPECT_FALSE(fs::exists(dir.path() / "no-such-folder"));
}

TEST(ConformanceStatsWrite, SymbolicLinkIsReplacedNotWrittenThrough) {
    scratch_folder dir;
    ASSERT_FALSE(dir.path().empty());
    run_a_loop();
    const fs::path victim = dir.path() / "victim.txt";
    const fs::path link = dir.path() / "stats.json";
    std::ofstream(victim) << "the victim's text\n";
    fs::create_symlink(victim.filename(), link);

    std::string error;
    ASSERT_TRUE(aloe::write_stats_json(link.string(), &error)) << error;
    EXPECT_EQ(read_text(victim), "the victim's text\n") << "written through the link";
    EXPECT_FALSE(fs::is_symlink(link));
    const std::string written = read_text(link);
    EXPECT_NE(written.find("conformance/stats_write"), std::string::npos) << written;
    EXPECT_EQ(written, aloe::stats_json());

    // The C API alike, and over a link that points nowhere.
    const fs::path dangling = dir.path() / "dangling.json";
    fs::create_symlink(dir.path() / "nowhere" / "file", dangling);
    ASSERT_EQ(aloe_stats_write(dangling.string().c_str()), ALOE_OK) << aloe_last_error();
    EXPECT_FALSE(fs::is_symlink(dangling));
    EXPECT_FALSE(fs::exists(dir.path() / "nowhere"));
}

TEST(ConformanceStatsWrite, ReplacesAnOlderFileAndLeavesNoTemporaryFile) {
    scratch_folder dir;
    ASSERT_FALSE(dir.path().empty());
    run_a_loop();
    const fs::path target = dir.path() / "stats.json";
    std::ofstream(target) << std::string(100000, 'x');  // longer than the statistics
    ASSERT_EQ(aloe_stats_write(target.string().c_str()), ALOE_OK) << aloe_last_error();
    EXPECT_EQ(read_text(target), aloe::stats_json()) << "the old text was not replaced in full";
    std::size_t entries = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path())) ++entries;
    EXPECT_EQ(entries, 1u) << "a temporary file was left next to the target";
}

}  // namespace

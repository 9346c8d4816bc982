// The tuning file (ALOE_TUNING): round trip, the key (build, team size, machine), a corrupt
// file left as it was, two processes writing at once, an unwritable folder, a planted link.
#include "adapt/tuning_file.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

namespace aloe::adapt {
namespace {

namespace fs = std::filesystem;

std::string build_a(std::string_view) { return "aaaa"; }
std::string build_b(std::string_view) { return "bbbb"; }

site_memory sample_memory(double scale = 1.0) {
    site_memory m;
    m.converged = true;
    m.chosen = "guided,chunk=4";
    m.invocations = 57;
    m.candidates = {{"static", false, 3, 2.5e-7 * scale, 1e-16, true},
                    {"guided,chunk=4", false, 40, 1.25e-7 * scale, 3.5e-16, false},
                    {"replay", true, 4, 1.5e-7 * scale, 2e-16, false}};
    m.weights = {1.25, 0.75};
    return m;
}

struct temp_folder {
    fs::path dir;
    temp_folder() {
        char tmpl[] = "/tmp/aloe-tuning-test-XXXXXX";
        dir = mkdtemp(tmpl);
    }
    ~temp_folder() {
        std::error_code ec;
        fs::permissions(dir, fs::perms::owner_all, ec);
        fs::remove_all(dir, ec);
    }
};

std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

TEST(TuningFile, RoundTripRecallsWhatWasKept) {
    temp_folder t;
    const std::string path = (t.dir / "tuning.txt").string();
    {
        tuning_file f(path, "cpu X / 2 cpus", &build_a);
        f.keep("prog+0x10", 2, sample_memory());
        f.keep("a site with spaces and % signs", 2, sample_memory(2.0));
        std::string error;
        ASSERT_TRUE(f.write(error)) << error;
    }
    tuning_file g(path, "cpu X / 2 cpus", &build_a);
    const std::optional<site_memory> m = g.recall("prog+0x10", 2);
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(*m, sample_memory());  // doubles printed with 17 digits come back exactly
    const std::optional<site_memory> n = g.recall("a site with spaces and % signs", 2);
    ASSERT_TRUE(n.has_value());
    EXPECT_EQ(*n, sample_memory(2.0));
}

TEST(TuningFile, AnotherBuildAnotherTeamSizeOrAnotherMachineRecallsNothing) {
    temp_folder t;
    const std::string path = (t.dir / "tuning.txt").string();
    {
        tuning_file f(path, "cpu X / 2 cpus", &build_a);
        f.keep("prog+0x10", 2, sample_memory());
        std::string error;
        ASSERT_TRUE(f.write(error)) << error;
    }
    EXPECT_FALSE(tuning_file(path, "cpu X / 2 cpus", &build_b).recall("prog+0x10", 2)) << "stale build-id";
    EXPECT_FALSE(tuning_file(path, "cpu X / 2 cpus", &build_a).recall("prog+0x10", 4)) << "other team size";
    EXPECT_FALSE(tuning_file(path, "cpu Y / 64 cpus", &build_a).recall("prog+0x10", 2)) << "foreign machine";
    EXPECT_TRUE(tuning_file(path, "cpu X / 2 cpus", &build_a).recall("prog+0x10", 2));

    // A new build's run replaces its entry; the other machine's entries stay in the file.
    {
        tuning_file other(path, "cpu Y / 64 cpus", &build_a);
        other.keep("prog+0x10", 2, sample_memory(3.0));
        std::string error;
        ASSERT_TRUE(other.write(error)) << error;
        tuning_file rebuilt(path, "cpu X / 2 cpus", &build_b);
        rebuilt.keep("prog+0x10", 2, sample_memory(5.0));
        ASSERT_TRUE(rebuilt.write(error)) << error;
    }
    std::map<tuning_file::key, tuning_file::entry> all;
    std::string error;
    ASSERT_TRUE(tuning_file::parse(slurp(path), all, error)) << error;
    EXPECT_EQ(all.size(), 3u);  // build a and b on X, build a on Y
    EXPECT_EQ(*tuning_file(path, "cpu X / 2 cpus", &build_b).recall("prog+0x10", 2), sample_memory(5.0));
    EXPECT_EQ(*tuning_file(path, "cpu Y / 64 cpus", &build_a).recall("prog+0x10", 2), sample_memory(3.0));
}

TEST(TuningFile, ACorruptFileIsIgnoredNamedAndLeftByteForByte) {
    temp_folder t;
    const fs::path path = t.dir / "tuning.txt";
    const std::string good = tuning_file::format({{{"m", "aaaa", "prog+0x10", 2}, {sample_memory()}}});
    const std::vector<std::pair<std::string, std::string>> bad = {
        {good.substr(0, good.size() - 7), "no newline"},                        // truncated
        {"garbage\n", "expected 'aloe-tuning 1'"},                             // not ours
        {"aloe-tuning 2\n", "expected 'aloe-tuning 1'"},                       // another version
        {"aloe-tuning 1\ncand static 0 1 1e-7 0 0\n", "before any 'site'"},    // orphan
        {"aloe-tuning 1\nsite m aaaa 2 s 5 1 static 1,2,3\n", "one per thread"},
        {"aloe-tuning 1\nsite m aaaa 0 s 5 1 static -\n", "team size"},
        {"aloe-tuning 1\nsite m aaaa 2 s 5 1 static -\ncand static 0 1 nan 0 0\n", "mean"},
        {"aloe-tuning 1\nsite m aaaa 2 s%G1 5 1 static -\n", "escape"},
    };
    for (const auto& [text, why] : bad) {
        {
            std::ofstream out(path, std::ios::trunc);
            out << text;
        }
        tuning_file f(path.string(), "m", &build_a);
        std::string error;
        EXPECT_FALSE(f.load(error)) << why;
        EXPECT_NE(error.find(why), std::string::npos) << error;
        EXPECT_NE(error.find("tuning.txt"), std::string::npos) << "names the file: " << error;
        EXPECT_FALSE(f.recall("s", 2));
        f.keep("s", 2, sample_memory());
        EXPECT_FALSE(f.write(error)) << why;
        EXPECT_EQ(slurp(path), text) << "a corrupt file is never overwritten";
    }
}

TEST(TuningFile, TwoProcessesWritingAtOnceLoseNothing) {
    temp_folder t;
    const std::string path = (t.dir / "tuning.txt").string();
    constexpr int rounds = 40;
    pid_t kids[2];
    for (int k = 0; k < 2; ++k) {
        kids[k] = fork();
        ASSERT_GE(kids[k], 0);
        if (kids[k] == 0) {
            for (int r = 0; r < rounds; ++r) {
                tuning_file f(path, "m", &build_a);
                f.keep("rank" + std::to_string(k) + "+0x" + std::to_string(r), 2, sample_memory());
                std::string error;
                if (!f.write(error)) _exit(1);
            }
            _exit(0);
        }
    }
    for (const pid_t kid : kids) {
        int status = 0;
        ASSERT_EQ(waitpid(kid, &status, 0), kid);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    std::map<tuning_file::key, tuning_file::entry> all;
    std::string error;
    ASSERT_TRUE(tuning_file::parse(slurp(path), all, error)) << error;
    EXPECT_EQ(all.size(), 2u * rounds) << "every site of both processes";
}

TEST(TuningFile, ForSameKeyTheEntryWithMoreInvocationsWins) {
    temp_folder t;
    const std::string path = (t.dir / "tuning.txt").string();
    site_memory long_run = sample_memory(), short_run = sample_memory(9.0);
    long_run.invocations = 1000;
    short_run.invocations = 10;
    std::string error;
    tuning_file a(path, "m", &build_a), b(path, "m", &build_a);
    a.keep("s", 2, long_run);
    b.keep("s", 2, short_run);
    ASSERT_TRUE(a.write(error)) << error;
    ASSERT_TRUE(b.write(error)) << error;  // later, but with less behind it
    EXPECT_EQ(*tuning_file(path, "m", &build_a).recall("s", 2), long_run);
}

TEST(TuningFile, AnUnwritableFolderFailsWithAReasonAndLeavesNothing) {
    if (geteuid() == 0) {
        // root ignores folder permissions: a missing folder is the unwritable path here.
        tuning_file f("/nonexistent-aloe-folder/tuning.txt", "m", &build_a);
        f.keep("s", 2, sample_memory());
        std::string error;
        EXPECT_FALSE(f.write(error));
        EXPECT_NE(error.find("nonexistent-aloe-folder"), std::string::npos) << error;
        EXPECT_FALSE(fs::exists("/nonexistent-aloe-folder"));
        return;
    }
    temp_folder t;
    fs::permissions(t.dir, fs::perms::owner_read | fs::perms::owner_exec);
    tuning_file f((t.dir / "tuning.txt").string(), "m", &build_a);
    f.keep("s", 2, sample_memory());
    std::string error;
    EXPECT_FALSE(f.write(error));
    EXPECT_FALSE(error.empty());
    EXPECT_FALSE(fs::exists(t.dir / "tuning.txt"));
}

TEST(TuningFile, APlantedLinkIsReplacedNotWrittenThrough) {
    temp_folder t;
    const fs::path victim = t.dir / "victim.txt";
    {
        std::ofstream out(victim);
        out << "precious\n";
    }
    const fs::path path = t.dir / "tuning.txt";
    fs::create_symlink(victim, path);
    tuning_file f(path.string(), "m", &build_a);
    f.keep("s", 2, sample_memory());
    std::string error;
    // The link's target is no tuning file: the read fails to parse, so nothing is written
    // at all; either way the victim keeps its bytes.
    (void)f.write(error);
    EXPECT_EQ(slurp(victim), "precious\n");
    // An empty planted target: the write replaces the link, never the target.
    { std::ofstream(victim, std::ios::trunc); }
    tuning_file g(path.string(), "m", &build_a);
    g.keep("s", 2, sample_memory());
    ASSERT_TRUE(g.write(error)) << error;
    EXPECT_EQ(slurp(victim), "");
    EXPECT_FALSE(fs::is_symlink(path));
    EXPECT_TRUE(tuning_file(path.string(), "m", &build_a).recall("s", 2));
}

TEST(TuningFile, AChildOfForkForgetsWhatItsParentKept) {
    temp_folder t;
    tuning_file f((t.dir / "tuning.txt").string(), "m", &build_a);
    f.keep("s", 2, sample_memory());
    EXPECT_EQ(f.kept_count(), 1u);
    f.forget_kept();
    EXPECT_EQ(f.kept_count(), 0u);
}

TEST(TuningFile, TheMachineAndTheBuildIdAreRead) {
    const std::string m = machine_fingerprint();
    EXPECT_NE(m.find(" cpus"), std::string::npos) << m;
    // The test binary is linked with a build-id (GCC and Debian's binutils default to one).
    const std::string id = module_build_id("file.cpp:1:1");  // a native site: the main program
    EXPECT_FALSE(id.empty());
    EXPECT_EQ(id, module_build_id("another.cpp:2:2")) << "one program, one build";
    EXPECT_EQ(module_build_id("no-such-module.so+0x10"), "") << "an unknown module has none";
}

}  // namespace
}  // namespace aloe::adapt

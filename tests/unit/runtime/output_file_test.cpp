// runtime/output_file and runtime/output_path: output files are written whole or not at
// all, never through a planted link, and every process of a job gets its own name.
#include "runtime/config.hpp"
#include "runtime/output_file.hpp"
#include "runtime/output_path.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>

namespace fs = std::filesystem;
using namespace aloe::runtime;

namespace {

// A fresh folder per test, removed afterwards.
class OutputFile : public ::testing::Test {
protected:
    void SetUp() override {
        std::string pattern = (fs::temp_directory_path() / "aloe-output-test-XXXXXX").string();
        ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
        dir_ = pattern;
    }
    void TearDown() override { fs::remove_all(dir_); }

    std::string path(const std::string& name) const { return (dir_ / name).string(); }

    static std::string read(const std::string& p) {
        std::ifstream in(p, std::ios::binary);
        std::ostringstream s;
        s << in.rdbuf();
        return s.str();
    }

    // Names in the folder other than those expected: a leftover temporary file shows here.
    std::vector<std::string> entries() const {
        std::vector<std::string> out;
        for (const auto& e : fs::directory_iterator(dir_)) out.push_back(e.path().filename().string());
        std::sort(out.begin(), out.end());
        return out;
    }

    fs::path dir_;
};

TEST_F(OutputFile, WritesANewFileWithTheSharedMode) {
    std::string error;
    const mode_t mask = ::umask(022);
    ASSERT_TRUE(write_output_file(path("stats.json"), "{\"a\": 1}\n", error)) << error;
    ::umask(mask);
    EXPECT_EQ(read(path("stats.json")), "{\"a\": 1}\n");
    struct stat st {};
    ASSERT_EQ(::stat(path("stats.json").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0644u);
    EXPECT_EQ(entries(), std::vector<std::string>{"stats.json"});
}

TEST_F(OutputFile, PrivateModeIsOwnerOnly) {
    std::string error;
    ASSERT_TRUE(write_output_file(path("report.json"), "x", error, private_file_mode)) << error;
    struct stat st {};
    ASSERT_EQ(::stat(path("report.json").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0077, 0u);
}

TEST_F(OutputFile, ReplacesAnExistingFileByRenameNotInPlace) {
    std::string error;
    ASSERT_TRUE(write_output_file(path("f"), "old text that is longer", error));
    struct stat before {};
    ASSERT_EQ(::stat(path("f").c_str(), &before), 0);
    // A reader holding the old file keeps reading the old text: the file was not truncated.
    std::ifstream reader(path("f"));
    ASSERT_TRUE(write_output_file(path("f"), "new", error)) << error;
    struct stat after {};
    ASSERT_EQ(::stat(path("f").c_str(), &after), 0);
    EXPECT_NE(before.st_ino, after.st_ino);
    std::string old_text;
    std::getline(reader, old_text);
    EXPECT_EQ(old_text, "old text that is longer");
    EXPECT_EQ(read(path("f")), "new");
}

TEST_F(OutputFile, ASymlinkIsReplacedNeverWrittenThrough) {
    std::ofstream(path("victim.txt")) << "precious";
    ASSERT_EQ(::symlink(path("victim.txt").c_str(), path("link.json").c_str()), 0);
    std::string error;
    ASSERT_TRUE(write_output_file(path("link.json"), "stats", error)) << error;
    EXPECT_EQ(read(path("victim.txt")), "precious");
    struct stat st {};
    ASSERT_EQ(::lstat(path("link.json").c_str(), &st), 0);
    EXPECT_TRUE(S_ISREG(st.st_mode));
    EXPECT_EQ(read(path("link.json")), "stats");
}

TEST_F(OutputFile, ALinkAnotherUserOwnsInAStickySharedFolderIsPlanted) {
    constexpr mode_t tmp_mode = S_IFDIR | S_ISVTX | 0777;
    EXPECT_TRUE(planted_link(1000, tmp_mode, 0));
    EXPECT_TRUE(planted_link(0, tmp_mode, 1000));
    EXPECT_FALSE(planted_link(1000, tmp_mode, 1000));                // one's own link
    EXPECT_FALSE(planted_link(1000, S_IFDIR | 0777, 0));              // not sticky
    EXPECT_FALSE(planted_link(1000, S_IFDIR | S_ISVTX | 0755, 0));    // not world-writable
}

TEST_F(OutputFile, RefusesAPlantedLinkInAStickyFolder) {
    if (::geteuid() != 0) {
        // Planting a link as another user needs root; the rule itself is tested above.
        GTEST_SKIP() << "needs root to create a link owned by another user (planted_link is tested without it)";
    }
    ASSERT_EQ(::chmod(dir_.c_str(), S_ISVTX | 0777), 0);
    std::ofstream(path("victim.txt")) << "precious";
    ASSERT_EQ(::symlink(path("victim.txt").c_str(), path("planted.json").c_str()), 0);
    ASSERT_EQ(::lchown(path("planted.json").c_str(), 65534, 65534), 0);
    std::string error;
    EXPECT_FALSE(write_output_file(path("planted.json"), "stats", error));
    EXPECT_NE(error.find("not followed"), std::string::npos) << error;
    EXPECT_EQ(read(path("victim.txt")), "precious");
}

TEST_F(OutputFile, AFullDeviceIsAnErrorNamingTheCause) {
    std::string error;
    EXPECT_FALSE(write_output_file("/dev/full", "a small document", error));
    EXPECT_NE(error.find(std::strerror(ENOSPC)), std::string::npos) << error;
    EXPECT_NE(error.find("/dev/full"), std::string::npos) << error;
}

TEST_F(OutputFile, ARegularFileUnderDevIsReplacedNotAppended) {
    // /dev/shm holds ordinary files: they are outputs like any other (before: written in
    // place, appending, so a second run left two documents in one file).
    if (!fs::is_directory("/dev/shm")) GTEST_SKIP() << "no /dev/shm on this machine";
    const std::string target = "/dev/shm/aloe-output-test-" + std::to_string(::getpid()) + ".json";
    std::string error;
    ASSERT_TRUE(write_output_file(target, "first", error)) << error;
    ASSERT_TRUE(write_output_file(target, "second", error)) << error;
    EXPECT_EQ(read(target), "second");
    fs::remove(target);
}

TEST_F(OutputFile, TheSystemsLinksAreFollowedAndAppendedTo) {
    // /proc/self/fd/N of a regular file: the program's redirected output, never replaced.
    const std::string file = path("stdout.txt");
    const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, "program output\n", 15), 15);
    std::string error;
    EXPECT_TRUE(write_output_file("/proc/self/fd/" + std::to_string(fd), "summary\n", error)) << error;
    ::close(fd);
    EXPECT_EQ(read(file), "program output\nsummary\n");
}

TEST_F(OutputFile, DevNullIsWrittenInPlace) {
    std::string error;
    EXPECT_TRUE(write_output_file("/dev/null", "gone", error)) << error;
}

TEST_F(OutputFile, WhatIsWrittenInPlaceIsNamedForCheckingBeforehand) {
    // aloe run checks, before the program starts, the file itself for these and the folder
    // for the others (before: /dev/full was refused for a non-root user, "cannot be created
    // in '/dev'").
    EXPECT_TRUE(written_in_place("/dev/null"));
    EXPECT_TRUE(written_in_place("/dev/full"));
    ASSERT_EQ(::mkfifo(path("pipe").c_str(), 0600), 0);
    EXPECT_TRUE(written_in_place(path("pipe")));
    fs::create_symlink("/dev/null", path("to-null"));
    EXPECT_TRUE(written_in_place(path("to-null")));
    EXPECT_TRUE(written_in_place("/proc/self/fd/2")) << "a system link, whatever it points to";
    std::string error;
    ASSERT_TRUE(write_output_file(path("plain.json"), "{}", error)) << error;
    EXPECT_FALSE(written_in_place(path("plain.json")));
    fs::create_symlink(path("plain.json"), path("to-plain"));
    EXPECT_FALSE(written_in_place(path("to-plain"))) << "a link to a regular file is replaced";
    EXPECT_FALSE(written_in_place(path("missing.json")));
    EXPECT_FALSE(written_in_place(dir_.string()));
}

TEST_F(OutputFile, AFolderOrAMissingFolderIsAnError) {
    std::string error;
    EXPECT_FALSE(write_output_file(dir_.string(), "x", error));
    EXPECT_NE(error.find("folder"), std::string::npos) << error;
    EXPECT_FALSE(write_output_file(path("no/such/folder/f.json"), "x", error));
    EXPECT_NE(error.find(std::strerror(ENOENT)), std::string::npos) << error;
    EXPECT_FALSE(write_output_file("", "x", error));
    EXPECT_TRUE(entries().empty());
}

TEST_F(OutputFile, AFifoWithoutReaderFailsInsteadOfHanging) {
    ASSERT_EQ(::mkfifo(path("pipe").c_str(), 0600), 0);
    std::string error;
    EXPECT_FALSE(write_output_file(path("pipe"), "x", error));
    EXPECT_NE(error.find("no reader"), std::string::npos) << error;
}

TEST_F(OutputFile, AFifoWithAReaderGetsTheText) {
    ASSERT_EQ(::mkfifo(path("pipe").c_str(), 0600), 0);
    std::string got;
    std::thread reader([&] { got = read(path("pipe")); });
    // The reader opens the FIFO in a moment; until then the open fails with ENXIO: retry.
    std::string error;
    bool ok = false;
    for (int attempt = 0; attempt < 2000 && !ok; ++attempt) {
        ok = write_output_file(path("pipe"), "through the pipe", error);
        if (!ok) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    reader.join();
    EXPECT_TRUE(ok) << error;
    EXPECT_EQ(got, "through the pipe");
}

TEST_F(OutputFile, StreamedTextArrivesWholeAndInOrder) {
    std::string expected;
    for (int i = 0; i < 100000; ++i) expected += std::to_string(i) + ",";
    std::string error;
    ASSERT_TRUE(write_output_file(
        path("trace.json"),
        [](const output_sink& sink) {
            for (int i = 0; i < 100000; ++i)
                if (!sink(std::to_string(i) + ",")) return;
        },
        error))
        << error;
    EXPECT_EQ(read(path("trace.json")), expected);
}

TEST_F(OutputFile, AWriteFailingHalfwayLeavesTheOldFileAndNoTemporary) {
    std::string error;
    ASSERT_TRUE(write_output_file(path("f"), "old", error));
    // A child limited to 4 KiB files: the 1 MiB document's writes fail with EFBIG after the
    // temporary file exists, which is the case that must clean up.
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        ::signal(SIGXFSZ, SIG_IGN);
        const rlimit small{4096, 4096};
        ::setrlimit(RLIMIT_FSIZE, &small);
        std::string e;
        const bool ok = write_output_file(path("f"), std::string(1 << 20, 'n'), e);
        ::_exit(!ok && e.find(std::strerror(EFBIG)) != std::string::npos ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the write did not fail with EFBIG";
    EXPECT_EQ(read(path("f")), "old");
    EXPECT_EQ(entries(), std::vector<std::string>{"f"});
}

// Two processes write different documents to one path over and over while this one reads:
// every read is one whole document, never a mix or a truncated one.
TEST_F(OutputFile, ConcurrentWritersNeverLeaveATornFile) {
    const std::string target = path("shared.json");
    const auto document = [](char c) { return std::string(1 << 16, c); };
    std::string error;
    ASSERT_TRUE(write_output_file(target, document('a'), error));
    pid_t writers[2];
    for (int w = 0; w < 2; ++w) {
        writers[w] = ::fork();
        ASSERT_GE(writers[w], 0);
        if (writers[w] == 0) {
            std::string e;
            const std::string text = document(w == 0 ? 'b' : 'c');
            for (int i = 0; i < 200; ++i)
                if (!write_output_file(target, text, e)) ::_exit(1);
            ::_exit(0);
        }
    }
    int torn = 0, reads = 0;
    for (bool running = true; running;) {
        const std::string text = read(target);
        ++reads;
        if (text.size() != (1u << 16) || text.find_first_not_of(text[0]) != std::string::npos) ++torn;
        int status = 0;
        running = ::waitpid(writers[0], &status, WNOHANG) == 0 || ::waitpid(writers[1], &status, WNOHANG) == 0;
    }
    for (pid_t w : writers) {
        int status = 0;
        ::waitpid(w, &status, 0);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    EXPECT_EQ(torn, 0) << "of " << reads << " reads";
    EXPECT_EQ(entries(), std::vector<std::string>{"shared.json"});
}

// --- output names ---------------------------------------------------------------------

process_identity who(long pid, int rank, int size) {
    process_identity w;
    w.pid = pid;
    w.rank = rank;
    w.job_size = size;
    w.host = "node7";
    return w;
}

TEST(OutputPath, ExpandsTheEscapes) {
    EXPECT_EQ(expand_output_path("s.%p.json", who(42, -1, 0)), "s.42.json");
    EXPECT_EQ(expand_output_path("%h/r%r-%p%%.json", who(42, 3, 4)), "node7/r3-42%.json");
    EXPECT_EQ(expand_output_path("r%r.json", who(42, -1, 0)), "r0.json");
    EXPECT_EQ(expand_output_path("100%x%", who(42, -1, 0)), "100%x%");  // not escapes: kept
    EXPECT_EQ(expand_output_path("", who(42, -1, 0)), "");
}

TEST(OutputPath, SeveralRanksGetTheirOwnNameUnlessThePatternNamesThem) {
    EXPECT_EQ(expand_output_path("out/stats.json", who(42, 3, 4)), "out/stats.rank3.json");
    EXPECT_EQ(expand_output_path("out.d/stats", who(42, 3, 4)), "out.d/stats.rank3");
    EXPECT_EQ(expand_output_path(".hidden", who(42, 1, 2)), ".hidden.rank1");
    EXPECT_EQ(expand_output_path("s.%p.json", who(42, 3, 4)), "s.42.json");
    EXPECT_EQ(expand_output_path("s.%r.json", who(42, 3, 4)), "s.3.json");
    EXPECT_EQ(expand_output_path("stats.json", who(42, 0, 1)), "stats.json");   // a job of one
    EXPECT_EQ(expand_output_path("stats.json", who(42, 2, 0)), "stats.json");   // size unknown
    EXPECT_EQ(expand_output_path("-", who(42, 3, 4)), "-");                     // stderr stays stderr
    // Unset stays unset: an empty setting (no trace, no summary file) must not become a
    // `.rank3` file on every rank of the job (it did, under `mpirun … aloe run`).
    EXPECT_EQ(expand_output_path("", who(42, 3, 4)), "");
}

TEST(OutputPath, RanksOfOneJobNeverShareAName) {
    std::map<std::string, int> seen;
    for (int r = 0; r < 64; ++r) ++seen[expand_output_path("trace.json", who(1000 + r, r, 64))];
    EXPECT_EQ(seen.size(), 64u);
}

TEST(OutputPath, TheJobPlaceComesFromTheLaunchersVariables) {
    const auto place = [](std::map<std::string, std::string> vars) {
        return load_config([&](std::string_view name) -> std::optional<std::string> {
            const auto it = vars.find(std::string(name));
            if (it == vars.end()) return std::nullopt;
            return it->second;
        });
    };
    config c = place({{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "8"}});
    EXPECT_EQ(c.job_rank, 3);
    EXPECT_EQ(c.job_size, 8);
    EXPECT_EQ(c.job_rank_from, "OMPI_COMM_WORLD_RANK");
    c = place({{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}});
    EXPECT_EQ(c.job_rank, 1);
    EXPECT_EQ(c.job_size, 2);
    c = place({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "16"}});  // a batch script: one process
    EXPECT_EQ(c.job_rank, 0);
    EXPECT_EQ(c.job_size, 0);
    c = place({{"SLURM_PROCID", "5"}, {"SLURM_STEP_NUM_TASKS", "16"}});
    EXPECT_EQ(c.job_size, 16);
    c = place({{"OMPI_COMM_WORLD_RANK", "x"}, {"PMI_RANK", "2"}});  // malformed: next launcher
    EXPECT_EQ(c.job_rank, 2);
    EXPECT_EQ(c.job_rank_from, "PMI_RANK");
    c = place({{"OMPI_COMM_WORLD_RANK", "4"}, {"OMPI_COMM_WORLD_SIZE", "4"}});  // size must exceed rank
    EXPECT_EQ(c.job_size, 0);
    c = place({});
    EXPECT_EQ(c.job_rank, -1);
}

}  // namespace

// ALOE_PRINT_COUNTER in whole processes (runtime/counter_printer.hpp): counter_print_probe.cpp
// runs with the variables set, and what it printed is checked: HPX's text lines at exit on
// stdout (derived counters per worker and in total), a name that matches nothing and bad
// settings reported, CSV into a file named for the process, a fork child printing its own
// counts and an exec'd child nothing, interval prints whose changes add up to the total, an
// exit while threads count, and the library preloaded into a program that knows nothing of it.
// No timing is asserted: a run that hangs fails at a generous bound instead.
#include "fork_safe_allocator.hpp"
#include "unit/scratch_folder.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <regex>
#include <string>
#include <vector>

extern char** environ;

namespace {

namespace fs = std::filesystem;
using aloe::testing::read_text;
using aloe::testing::split_text;

struct outcome {
    int status = -1;  // exit status; -1: killed or hung
    std::string out, err;
};

// Runs `argv` with the environment of this process minus every ALOE_* variable, plus `env`,
// and collects its output. Killed after two minutes (it would have hung).
outcome run(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env) {
    std::vector<std::string> vars;
    for (char** e = environ; *e != nullptr; ++e)
        if (std::strncmp(*e, "ALOE_", 5) != 0) vars.emplace_back(*e);
    for (const auto& [name, value] : env) vars.push_back(name + "=" + value);
    std::vector<char*> envp, args;
    for (std::string& v : vars) envp.push_back(v.data());
    envp.push_back(nullptr);
    std::vector<std::string> words = argv;
    for (std::string& w : words) args.push_back(w.data());
    args.push_back(nullptr);

    int out_pipe[2], err_pipe[2];
    if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0) return {};
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::dup2(out_pipe[1], 1);
        ::dup2(err_pipe[1], 2);
        ::execve(args[0], args.data(), envp.data());
        ::_exit(127);
    }
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
    outcome result;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(2);
    pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
    std::string* into[2] = {&result.out, &result.err};
    int open_pipes = 2;
    bool hung = false;
    while (open_pipes > 0) {
        if (std::chrono::steady_clock::now() > give_up) {
            hung = true;
            ::kill(pid, SIGKILL);
            break;
        }
        if (::poll(fds, 2, 200) <= 0) continue;
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || fds[i].revents == 0) continue;
            char buffer[4096];
            const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
            if (n > 0) {
                into[i]->append(buffer, static_cast<std::size_t>(n));
            } else {
                ::close(fds[i].fd);
                fds[i].fd = -1;
                --open_pipes;
            }
        }
    }
    for (const pollfd& f : fds)
        if (f.fd >= 0) ::close(f.fd);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!hung && WIFEXITED(status)) result.status = WEXITSTATUS(status);
    if (hung) result.err += "\n(killed: it hung)";
    return result;
}

outcome probe(const std::string& scenario, const std::map<std::string, std::string>& env) {
    return run({ALOE_COUNTER_PRINT_PROBE, scenario}, env);
}

std::size_t count(const std::string& text, const std::string& needle) {
    std::size_t n = 0;
    for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
    return n;
}

const std::string seconds = "[0-9]+\\.[0-9]{6}";

// A fresh folder per test for the files the probe writes.
class ProcessCounterPrint : public ::testing::Test {
protected:
    std::vector<std::string> files() const { return dir_.entries(); }
    const fs::path& folder() const { return dir_.path(); }

    aloe::testing::scratch_folder dir_{"aloe-counter-print"};
};

TEST_F(ProcessCounterPrint, TextLinesAtExitOnStdout) {
    const outcome o = probe("counts", {{"ALOE_PRINT_COUNTER", "/probe{locality#0/total}/idle-rate, "
                                                              "/probe{locality#0/worker-thread#*}/idle-rate"}});
    ASSERT_EQ(o.status, 0) << o.err;
    const std::regex expected("/probe\\{locality#0/total\\}/idle-rate,1," + seconds + ",\\[s\\],583333,\\[ppm\\]\n"
                              "/probe\\{locality#0/worker-thread#0\\}/idle-rate,1," + seconds + ",\\[s\\],250000,\\[ppm\\]\n"
                              "/probe\\{locality#0/worker-thread#1\\}/idle-rate,1," + seconds + ",\\[s\\],750000,\\[ppm\\]\n");
    EXPECT_TRUE(std::regex_match(o.out, expected)) << o.out;
    EXPECT_EQ(o.err, "");
}

TEST_F(ProcessCounterPrint, ANameThatMatchesNothingIsReportedOnce) {
    const outcome o = probe("counts", {{"ALOE_PRINT_COUNTER", "/probe{locality#0/total}/hits,/probe{locality#0/total}/idle-rat"}});
    ASSERT_EQ(o.status, 0) << o.err;
    EXPECT_EQ(count(o.err, "aloe: warning W016 [runtime]: ALOE_PRINT_COUNTER names no counter: "
                           "'/probe{locality#0/total}/idle-rat' (nothing is printed for it)\n"),
              1u)
        << o.err;
    EXPECT_TRUE(std::regex_match(o.out, std::regex("/probe\\{locality#0/total\\}/hits,1," + seconds + ",\\[s\\],42,\\[count\\]\n")))
        << o.out;
}

TEST_F(ProcessCounterPrint, BadSettingsAreNamedWithTheValueUsed) {
    const outcome o = probe("counts", {{"ALOE_PRINT_COUNTER", "/probe{locality#0/total}/hits"},
                                       {"ALOE_PRINT_COUNTER_INTERVAL", "soon"},
                                       {"ALOE_PRINT_COUNTER_FORMAT", "xml"}});
    ASSERT_EQ(o.status, 0) << o.err;
    EXPECT_EQ(count(o.err, "aloe: warning W121 [config]: ALOE_PRINT_COUNTER_INTERVAL='soon' is not a whole number of "
                           "milliseconds in 0..86400000; using 0 (at exit only)\n"),
              1u)
        << o.err;
    EXPECT_EQ(count(o.err, "aloe: warning W123 [config]: ALOE_PRINT_COUNTER_FORMAT='xml' is not one of text, csv; using text\n"), 1u)
        << o.err;
    EXPECT_EQ(count(o.out, "/probe{locality#0/total}/hits,1,"), 1u) << "printed as text, at exit: " << o.out;

    const outcome empty_name = probe("counts", {{"ALOE_PRINT_COUNTER", "/probe{locality#0/total}/hits,,"}});
    ASSERT_EQ(empty_name.status, 0) << empty_name.err;
    EXPECT_EQ(count(empty_name.err, "W120 [config]: ALOE_PRINT_COUNTER='/probe{locality#0/total}/hits,,' is not a "
                                    "comma-separated list of counter names: name 2 is empty; using (none)"),
              1u)
        << empty_name.err;
    EXPECT_EQ(empty_name.out, "") << "nothing to print";
}

TEST_F(ProcessCounterPrint, CsvIntoAFileNamedForTheProcess) {
    const outcome o = probe("counts", {{"ALOE_PRINT_COUNTER", "/probe{locality#0/total}/hits,/probe{locality#0/total}/idle-rate"},
                                       {"ALOE_PRINT_COUNTER_FORMAT", "csv"},
                                       {"ALOE_PRINT_COUNTER_DESTINATION", (folder() / "c-%p.csv").string()}});
    ASSERT_EQ(o.status, 0) << o.err;
    EXPECT_EQ(o.out, "");
    const std::vector<std::string> names = files();
    ASSERT_EQ(names.size(), 1u);
    EXPECT_TRUE(std::regex_match(names[0], std::regex("c-[0-9]+\\.csv"))) << names[0];
    EXPECT_TRUE(std::regex_match(read_text(folder() / names[0]),
                                 std::regex("sample,seconds,/probe\\{locality#0/total\\}/hits,/probe\\{locality#0/total\\}/idle-rate\n"
                                            "1," + seconds + ",42,583333\n")))
        << read_text(folder() / names[0]);
}

TEST_F(ProcessCounterPrint, AForkChildPrintsItsOwnAndAnExecdChildNothing) {
    // The probe forks while its printing thread runs (and may still be starting, allocating).
#if defined(ALOE_ALLOCATOR_NOT_FORK_SAFE)
    GTEST_SKIP() << ALOE_ALLOCATOR_NOT_FORK_SAFE_WHY;
#endif
    const outcome o = probe("fork", {{"ALOE_PRINT_COUNTER", "/probe{locality#0/total}/hits"},
                                     {"ALOE_PRINT_COUNTER_INTERVAL", "1"},  // the thread runs across the forks
                                     {"ALOE_PRINT_COUNTER_DESTINATION", (folder() / "f-%p.txt").string()}});
    ASSERT_EQ(o.status, 0) << o.err;
    std::smatch pids;
    ASSERT_TRUE(std::regex_search(o.err, pids, std::regex("children ([0-9]+) ([0-9]+)"))) << o.err;
    const fs::path child = folder() / ("f-" + pids[1].str() + ".txt"), exec_child = folder() / ("f-" + pids[2].str() + ".txt");
    ASSERT_TRUE(fs::exists(child)) << "the child's own file";
    EXPECT_TRUE(std::regex_match(read_text(child), std::regex("/probe\\{locality#0/total\\}/hits,1," + seconds + ",\\[s\\],7,\\[count\\]\n")))
        << "its own counts, its own numbering: " << read_text(child);
    EXPECT_FALSE(fs::exists(exec_child)) << "a child that exec'd prints nothing";
    ASSERT_EQ(files().size(), 2u) << "the parent's and the child's";
    const std::string parent_name = files()[0] == child.filename().string() ? files()[1] : files()[0];
    const std::vector<std::string> lines = split_text(read_text(folder() / parent_name), '\n');
    ASSERT_FALSE(lines.empty());
    EXPECT_NE(lines.back().find(",[s],42,[count]"), std::string::npos) << "the parent's own total: " << lines.back();
}

TEST_F(ProcessCounterPrint, IntervalChangesAddUpToTheTotal) {
    const outcome o = probe("steps", {{"ALOE_PRINT_COUNTER", "/probe{locality#0/total}/hits"},
                                      {"ALOE_PRINT_COUNTER_INTERVAL", "5"},
                                      {"ALOE_PRINT_COUNTER_RESET", "1"},
                                      {"ALOE_PRINT_COUNTER_FORMAT", "csv"},
                                      {"ALOE_PRINT_COUNTER_DESTINATION", (folder() / "steps.csv").string()}});
    ASSERT_EQ(o.status, 0) << o.err;
    const std::vector<std::string> rows = split_text(read_text(folder() / "steps.csv"), '\n');
    ASSERT_GE(rows.size(), 2u);
    EXPECT_EQ(rows[0], "sample,seconds,/probe{locality#0/total}/hits");
    std::uint64_t sum = 0;
    for (std::size_t i = 1; i < rows.size(); ++i) {
        const std::vector<std::string> cells = split_text(rows[i], ',');
        ASSERT_EQ(cells.size(), 3u) << rows[i];
        EXPECT_EQ(cells[0], std::to_string(i)) << "numbered in order, none lost";
        sum += std::stoull(cells[2]);
    }
    EXPECT_EQ(sum, 50u) << "each print shows what changed since the previous one";
}

TEST_F(ProcessCounterPrint, ExitWhileThreadsCountEnds) {
    const outcome o = probe("busy-exit", {{"ALOE_PRINT_COUNTER", "/probe{locality#0/total}/hits"},
                                          {"ALOE_PRINT_COUNTER_INTERVAL", "1"}});
    ASSERT_EQ(o.status, 0) << o.err;
    const std::vector<std::string> lines = split_text(o.out, '\n');
    ASSERT_FALSE(lines.empty());
    for (std::size_t i = 0; i < lines.size(); ++i)
        EXPECT_TRUE(std::regex_match(lines[i], std::regex("/probe\\{locality#0/total\\}/hits," + std::to_string(i + 1) + "," +
                                                          seconds + ",\\[s\\],[0-9]+,\\[count\\]")))
            << lines[i];
}

TEST_F(ProcessCounterPrint, PreloadedIntoAProgramThatKnowsNothingOfIt) {
#ifndef ALOE_GOMP_LIBRARY
    GTEST_SKIP() << "a preload cannot precede a sanitizer's runtime";
#else
    const outcome o = run({"/bin/true"}, {{"LD_PRELOAD", ALOE_GOMP_LIBRARY},
                                          {"ALOE_PRINT_COUNTER", "/probe{locality#0/total}/hits"},
                                          {"ALOE_PRINT_COUNTER_INTERVAL", "1"}});
    ASSERT_EQ(o.status, 0) << o.err;
    EXPECT_EQ(count(o.err, "W016 [runtime]: ALOE_PRINT_COUNTER names no counter: '/probe{locality#0/total}/hits'"), 1u)
        << "armed at load, finished at exit, once: " << o.err;
    EXPECT_EQ(o.out, "");
#endif
}

}  // namespace

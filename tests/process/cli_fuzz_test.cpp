// The aloe command line under seeded random arguments: `aloe run`, `aloe noise` and `aloe
// info` with option names, `--opt=value` forms, empty and huge values, signs, NaN, `--`,
// control bytes and broken UTF-8 mixed at random. Whatever the words, the tool must end by
// itself with a documented status (0, 1, 2, or the program's own 127), never by a signal,
// and every line it writes to stderr must be printable UTF-8 (user text escaped).
//
// The programs `aloe run` may start are /bin/true and /bin/false, so a run that is accepted
// ends at once; `aloe noise` gets only values it must refuse, so it never measures for long.
#include "runtime/utf8_text.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

struct outcome {
    bool signalled = false;
    int status = -1;
    std::string err;
    bool timed_out = false;
};

// Runs `aloe words...` in `tmpdir` (also its TMPDIR) with stdout discarded and stderr
// captured; killed after 30 s.
outcome run_aloe(const std::vector<std::string>& words, const std::string& tmpdir) {
    int err_pipe[2];
    if (::pipe(err_pipe) != 0) return {};
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::dup2(err_pipe[1], STDERR_FILENO);
        const int null = ::open("/dev/null", O_RDWR);
        ::dup2(null, STDIN_FILENO);
        ::dup2(null, STDOUT_FILENO);
        ::close(err_pipe[0]);
        // Relative names among the random words (--stats nul) land in the test's folder.
        if (::chdir(tmpdir.c_str()) != 0) ::_exit(125);
        ::setenv("TMPDIR", tmpdir.c_str(), 1);
        std::vector<char*> argv;
        static std::string tool = ALOE_TOOL;
        argv.push_back(tool.data());
        for (const std::string& w : words) argv.push_back(const_cast<char*>(w.c_str()));
        argv.push_back(nullptr);
        ::execv(tool.c_str(), argv.data());
        ::_exit(126);
    }
    ::close(err_pipe[1]);
    outcome out;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    ::fcntl(err_pipe[0], F_SETFL, O_NONBLOCK);
    char buf[4096];
    int status = 0;
    for (;;) {
        const ssize_t n = ::read(err_pipe[0], buf, sizeof buf);
        if (n > 0) {
            out.err.append(buf, static_cast<std::size_t>(n));
            continue;
        }
        const pid_t r = ::waitpid(pid, &status, WNOHANG);
        if (r == pid) break;
        if (std::chrono::steady_clock::now() > deadline) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &status, 0);
            out.timed_out = true;
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    while (true) {
        const ssize_t n = ::read(err_pipe[0], buf, sizeof buf);
        if (n <= 0) break;
        out.err.append(buf, static_cast<std::size_t>(n));
    }
    ::close(err_pipe[0]);
    out.signalled = WIFSIGNALED(status);
    out.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return out;
}

// A value chosen from what users mistype and what attackers send.
std::string random_value(std::mt19937& rng) {
    static const std::vector<std::string> values = {
        "", "0", "1", "2", "-1", "-0", "+3", "4096", "4097", "99999999999999999999", "1e400", "1e-400",
        "nan", "inf", "0x10", " 5", "5 ", "program", "forward", "adaptive", "staggered,fs=0.5",
        "dynamic,chunk=0", "dynamic,chunk=-3", "hybrid,fs=1.5", "tasklets,n=0", "static,chunk=2,chunk=3",
        "=", ",", "--", "-", "%p", "%r%h%%", "%", "/dev/full", "/dev/null", "/dev/zero", "/", ".",
        "/nonexistent/dir/file.json", "a\nb", "tab\there", "\x1b[31mred", std::string("nul\0byte", 8),
        "\xff\xfe", "\xc0\xaf", "\xed\xa0\x80", "\xef\xbb\xbf" "bom", std::string(5000, 'x'),
    };
    std::string v = values[rng() % values.size()];
    if (rng() % 4 == 0) v += static_cast<char>(rng() % 256);
    return v;
}

std::vector<std::string> random_words(std::mt19937& rng, const std::vector<std::string>& options,
                                      bool with_program) {
    std::vector<std::string> words;
    const int n = static_cast<int>(rng() % 6);
    for (int i = 0; i < n; ++i) {
        const std::string& name = options[rng() % options.size()];
        switch (rng() % 4) {
            case 0: words.push_back(name + "=" + random_value(rng)); break;
            case 1: words.push_back(name); break;  // perhaps with no value
            default:
                words.push_back(name);
                words.push_back(random_value(rng));
        }
    }
    if (with_program && rng() % 8 != 0) {
        if (rng() % 2 == 0) words.push_back("--");
        words.push_back(rng() % 2 == 0 ? "/bin/true" : "/bin/false");
    }
    return words;
}

// Every line printable: no control byte but the line end, valid UTF-8.
bool printable_lines(const std::string& text) {
    for (const char c : text) {
        const auto b = static_cast<unsigned char>(c);
        if ((b < 0x20 && b != '\n') || b == 0x7f) return false;
    }
    return aloe::runtime::is_valid_utf8(text);
}

std::string shown(const std::vector<std::string>& words) {
    std::string out;
    for (const std::string& w : words) {
        out += " '";
        for (const char c : w) {
            const auto b = static_cast<unsigned char>(c);
            if (b < 0x20 || b >= 0x7f) {
                char hex[8];
                std::snprintf(hex, sizeof hex, "\\x%02x", b);
                out += hex;
            } else {
                out += c;
            }
        }
        out += "'";
    }
    return out.size() > 600 ? out.substr(0, 600) + "..." : out;
}

class CliFuzz : public ::testing::Test {
protected:
    void SetUp() override {
        std::string pattern = (std::filesystem::temp_directory_path() / "aloe-cli-fuzz-XXXXXX").string();
        ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
        dir_ = pattern;
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }

    // Runs `cases` random command lines of `subcommand` from `seed`; `allowed` statuses only.
    void fuzz(const std::string& subcommand, const std::vector<std::string>& options, bool with_program,
              unsigned seed, int cases, const std::vector<int>& allowed) {
        std::mt19937 rng(seed);
        for (int c = 0; c < cases; ++c) {
            std::vector<std::string> words = random_words(rng, options, with_program);
            words.insert(words.begin(), subcommand);
            const outcome o = run_aloe(words, dir_);
            const std::string what = "case " + std::to_string(c) + ": aloe" + shown(words);
            ASSERT_FALSE(o.timed_out) << what << ": did not end within 30 s";
            ASSERT_FALSE(o.signalled) << what << ": killed by a signal\n" << o.err;
            ASSERT_NE(std::find(allowed.begin(), allowed.end(), o.status), allowed.end())
                << what << ": exit status " << o.status << "\n" << o.err;
            EXPECT_TRUE(printable_lines(o.err)) << what << ": stderr is not printable UTF-8";
        }
        // Runs that ended leave no report folder behind (output files the words named may
        // be there: the runs work in this folder).
        for (const auto& e : std::filesystem::directory_iterator(dir_))
            if (e.path().filename().string().starts_with("aloe-run-"))
                ADD_FAILURE() << "left in TMPDIR: " << e.path().filename();
    }

    std::filesystem::path dir_;
};

TEST_F(CliFuzz, RunEndsWithADocumentedStatusAndPrintableMessages) {
    // 0/1: /bin/true or /bin/false ran (or an output failed); 2: refused; 127 cannot happen with
    // these programs but is the documented "could not start".
    fuzz("run",
         {"--schedule", "--threads", "--rules", "--stats", "--trace", "--summary", "--library", "--bogus",
          "--help"},
         true, 12, 160, {0, 1, 2, 127});
}

TEST_F(CliFuzz, NoiseRefusesWhatItCannotMeasure) {
    // Only option names with random values, never a plain run: refused (2) or help (0).
    std::mt19937 rng(7);
    for (int c = 0; c < 80; ++c) {
        std::vector<std::string> words = {"noise"};
        const std::vector<std::string> options = {"--seconds", "--quantum-us", "--slice-us", "--method"};
        words.push_back(options[rng() % options.size()]);
        std::string v = random_value(rng);
        // A value that parses as a short, valid duration would start a measurement: make it
        // one that must be refused (a trailing letter).
        v += "x";
        words.push_back(v);
        const outcome o = run_aloe(words, dir_);
        const std::string what = "case " + std::to_string(c) + ": aloe" + shown(words);
        ASSERT_FALSE(o.timed_out || o.signalled) << what << "\n" << o.err;
        EXPECT_EQ(o.status, 2) << what << "\n" << o.err;
        EXPECT_TRUE(printable_lines(o.err)) << what;
    }
}

TEST_F(CliFuzz, UnknownSubcommandsAndOptionsAreNamedEscaped) {
    std::mt19937 rng(5);
    for (int c = 0; c < 40; ++c) {
        std::string first = random_value(rng);
        if (rng() % 2 == 0) first = "--" + first;
        if (first.empty() || first == "--") first += "x";
        const outcome o = run_aloe({first}, dir_);
        const std::string what = "case " + std::to_string(c) + ": aloe" + shown({first});
        ASSERT_FALSE(o.timed_out || o.signalled) << what << "\n" << o.err;
        EXPECT_EQ(o.status, 2) << what << "\n" << o.err;
        EXPECT_TRUE(printable_lines(o.err)) << what;
    }
}

TEST_F(CliFuzz, InfoRefusesUnknownWords) {
    fuzz("info", {"--json", "--settings-markdown", "--bogus", "-x"}, false, 3, 40, {0, 2});
}

}  // namespace

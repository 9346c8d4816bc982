// `aloe run [options] -- program args`: runs an unmodified OpenMP program (GCC, libgomp)
// with libaloe-gomp.so preloaded, passes its exit status through, and prints the
// interposer's per-site summary when it ends.
//
// The options become the interposer's environment (ALOE_SCHEDULE, ALOE_NUM_THREADS and
// OMP_NUM_THREADS, ALOE_OMP_RULES, ALOE_OMP_STATS, ALOE_TRACE, ALOE_OMP_SUMMARY); every
// option is checked here first, so a typo stops before the program starts.
#include "commands.hpp"
#include "omp/loop_rules.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace aloe::cli {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view help_text =
    R"(usage: aloe run [options] [--] program [args...]

Runs an OpenMP program built with GCC (-fopenmp; C, C++ or Fortran) unchanged, with aloe
scheduling the worksharing loops that reach the runtime: schedule(dynamic), guided, runtime,
nonmonotonic, and combined parallel-for loops. Loops compiled as schedule(static) (GCC's
default) never call the runtime; write schedule(runtime) to hand one to aloe.

options:
  --schedule S       the loops' schedule: an aloe schedule (adaptive, staggered,fs=0.8, ...),
                     'program' (each loop's own schedule, run by aloe; the default) or
                     'forward' (libgomp runs every loop; aloe only measures)
  --threads N        team size of parallel regions that leave it to the runtime (1..4096)
  --rules FILE       per-loop-site schedules: lines '<site> <schedule>', site as printed in
                     the summary (module+0xOFFSET), file:line, or * (see docs/openmp.md)
  --stats FILE       write region and loop sites as JSON at exit
  --trace FILE       write a Chrome trace-event JSON (open it in ui.perfetto.dev)
  --summary WHERE    '-' (stderr, the default), a file, or 'none'
  --library PATH     the interposer to preload (default: the one installed with aloe)

The program's exit status is passed through; death by a signal gives 128 + the signal.
)";

struct run_options {
    std::string schedule;
    std::string threads;
    std::string rules;
    std::string stats;
    std::string trace;
    std::string summary = "-";
    std::string library;
    std::vector<std::string> program;
};

fs::path default_library() {
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    const fs::path installed = self.parent_path().parent_path() / "lib" / "libaloe-gomp.so";
    if (fs::exists(installed, ec)) return installed;
    return fs::path(ALOE_BUILD_GOMP_LIBRARY);
}

std::string absolute(const std::string& path) {
    std::error_code ec;
    const fs::path p = fs::absolute(path, ec);
    return ec ? path : p.string();
}

// Parses the options; returns exit_ok or the usage error already printed.
int parse(arguments args, run_options& o, bool& help) {
    std::size_t i = 0;
    for (; i < args.size(); ++i) {
        const std::string_view a = args[i];
        if (a == "--") {
            ++i;
            break;
        }
        if (a == "--help" || a == "-h") {
            help = true;
            return exit_ok;
        }
        if (!a.starts_with("--")) break;
        std::string* target = a == "--schedule"  ? &o.schedule
                              : a == "--threads" ? &o.threads
                              : a == "--rules"   ? &o.rules
                              : a == "--stats"   ? &o.stats
                              : a == "--trace"   ? &o.trace
                              : a == "--summary" ? &o.summary
                              : a == "--library" ? &o.library
                                                 : nullptr;
        if (target == nullptr) return usage_error("run: unknown option '" + std::string(a) + "'", "run");
        if (i + 1 >= args.size()) return usage_error("run: " + std::string(a) + " needs a value", "run");
        *target = std::string(args[++i]);
    }
    for (; i < args.size(); ++i) o.program.emplace_back(args[i]);
    if (o.program.empty()) return usage_error("run: no program given (aloe run [options] -- program args)", "run");

    if (!o.schedule.empty()) {
        std::string error;
        if (!omp::parse_loop_choice(o.schedule, error)) return usage_error("run: --schedule " + error, "run");
    }
    if (!o.threads.empty()) {
        int n = 0;
        const auto [end, ec] = std::from_chars(o.threads.data(), o.threads.data() + o.threads.size(), n);
        if (ec != std::errc() || end != o.threads.data() + o.threads.size() || n < 1 || n > 4096)
            return usage_error("run: --threads '" + o.threads + "' is not an integer in 1..4096", "run");
    }
    if (!o.rules.empty()) {
        omp::loop_rules rules;
        std::vector<std::string> errors;
        if (!omp::load_loop_rules(o.rules, rules, errors)) {
            for (const std::string& e : errors) std::cerr << "aloe: run: " << e << '\n';
            return usage_error("run: --rules '" + o.rules + "' has errors", "run");
        }
        o.rules = absolute(o.rules);
    }
    for (std::string* path : {&o.stats, &o.trace}) {
        if (!path->empty()) *path = absolute(*path);
    }
    if (o.summary != "-" && o.summary != "none") o.summary = absolute(o.summary);
    o.library = o.library.empty() ? default_library().string() : absolute(o.library);
    std::error_code ec;
    if (!fs::exists(o.library, ec)) {
        std::cerr << "aloe: run: the interposer '" << o.library
                  << "' does not exist (build the aloe_gomp target, or pass --library)\n";
        return exit_failure;
    }
    return exit_ok;
}

// The child's environment: ours, with the interposer's variables set or replaced.
std::vector<std::string> child_environment(const run_options& o, const std::string& summary_file) {
    std::vector<std::pair<std::string, std::string>> set;
    std::string preload = o.library;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
        const std::string_view entry(*e);
        if (entry.starts_with("LD_PRELOAD=") && entry.size() > 11) preload += ":" + std::string(entry.substr(11));
    }
    set.emplace_back("LD_PRELOAD", preload);
    if (!o.schedule.empty()) set.emplace_back("ALOE_SCHEDULE", o.schedule);
    if (!o.threads.empty()) {
        set.emplace_back("ALOE_NUM_THREADS", o.threads);
        set.emplace_back("OMP_NUM_THREADS", o.threads);
    }
    if (!o.rules.empty()) set.emplace_back("ALOE_OMP_RULES", o.rules);
    if (!o.stats.empty()) set.emplace_back("ALOE_OMP_STATS", o.stats);
    if (!o.trace.empty()) set.emplace_back("ALOE_TRACE", o.trace);
    if (!summary_file.empty()) set.emplace_back("ALOE_OMP_SUMMARY", summary_file);

    std::vector<std::string> env;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
        const std::string_view entry(*e);
        bool replaced = false;
        for (const auto& [name, value] : set) replaced = replaced || entry.starts_with(name + "=");
        // A summary file left over from an outer aloe run must not be written twice.
        replaced = replaced || (summary_file.empty() && entry.starts_with("ALOE_OMP_SUMMARY="));
        if (!replaced) env.emplace_back(entry);
    }
    for (const auto& [name, value] : set) env.push_back(name + "=" + value);
    return env;
}

pid_t child_pid = 0;

void forward_signal(int signal) {
    if (child_pid > 0) kill(child_pid, signal);
}

std::string signal_name(int signal) {
    const char* d = sigdescr_np(signal);
    const char* a = sigabbrev_np(signal);
    return std::string(a != nullptr ? std::string("SIG") + a : "signal") + " (" + (d != nullptr ? d : "?") + ")";
}

// Starts the program; exit status as a shell reports it (127: could not be started).
int run_program(const run_options& o, const std::vector<std::string>& env) {
    std::vector<char*> argv;
    for (const std::string& a : o.program) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    std::vector<char*> envp;
    for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);

    // A close-on-exec pipe tells the parent why exec failed (nothing arrives when it worked).
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) {
        std::cerr << "aloe: run: pipe: " << std::strerror(errno) << '\n';
        return exit_failure;
    }
    // Like system(): the terminal's Ctrl-C reaches the program; aloe run waits to report.
    struct sigaction ignore {}, old_int {}, old_quit {}, forward {}, old_term {}, old_hup {};
    ignore.sa_handler = SIG_IGN;
    forward.sa_handler = forward_signal;
    sigaction(SIGINT, &ignore, &old_int);
    sigaction(SIGQUIT, &ignore, &old_quit);
    sigaction(SIGTERM, &forward, &old_term);
    sigaction(SIGHUP, &forward, &old_hup);
    const pid_t pid = fork();
    if (pid == 0) {
        sigaction(SIGINT, &old_int, nullptr);
        sigaction(SIGQUIT, &old_quit, nullptr);
        sigaction(SIGTERM, &old_term, nullptr);
        sigaction(SIGHUP, &old_hup, nullptr);
        close(report[0]);
        execvpe(argv[0], argv.data(), envp.data());
        const int error = errno;
        [[maybe_unused]] const ssize_t w = write(report[1], &error, sizeof error);
        _exit(127);
    }
    close(report[1]);
    if (pid < 0) {
        std::cerr << "aloe: run: fork: " << std::strerror(errno) << '\n';
        close(report[0]);
        return exit_failure;
    }
    child_pid = pid;
    int exec_error = 0;
    ssize_t got = 0;
    do got = read(report[0], &exec_error, sizeof exec_error);
    while (got < 0 && errno == EINTR);
    close(report[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    child_pid = 0;
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGQUIT, &old_quit, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
    sigaction(SIGHUP, &old_hup, nullptr);
    if (got == sizeof exec_error) {
        std::cerr << "aloe: run: cannot run '" << o.program[0] << "': " << std::strerror(exec_error) << '\n';
        return 127;
    }
    if (WIFSIGNALED(status)) {
        std::cerr << "aloe: run: '" << o.program[0] << "' was killed by " << signal_name(WTERMSIG(status)) << '\n';
        return 128 + WTERMSIG(status);
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : exit_failure;
}

}  // namespace

int run_command(arguments args) {
    run_options o;
    bool help = false;
    if (const int rc = parse(args, o, help); rc != exit_ok || help) {
        if (help) std::cout << help_text;
        return rc;
    }
    // The interposer writes the summary into a file of ours; we print it after the program,
    // so it never interleaves with the program's own output.
    std::string summary_file;
    if (o.summary == "-") {
        std::error_code ec;
        std::string pattern = (fs::temp_directory_path(ec) / "aloe-run-summary-XXXXXX").string();
        const int fd = mkstemp(pattern.data());
        if (fd < 0) {
            std::cerr << "aloe: run: cannot create a temporary file for the summary: " << std::strerror(errno)
                      << "; no summary\n";
        } else {
            close(fd);
            summary_file = pattern;
        }
    } else if (o.summary != "none") {
        summary_file = o.summary;
    }
    const int rc = run_program(o, child_environment(o, summary_file));
    if (o.summary == "-" && !summary_file.empty()) {
        std::ifstream in(summary_file);
        std::ostringstream text;
        text << in.rdbuf();
        std::error_code ec;
        fs::remove(summary_file, ec);
        if (!text.str().empty()) {
            std::cerr << '\n' << text.str();
        } else if (rc != 127) {
            std::cerr << "aloe: run: no summary: the program ended before exit handlers ran (a signal, _exit or "
                         "abort), or never loaded the interposer\n";
        }
    }
    return rc;
}

}  // namespace aloe::cli

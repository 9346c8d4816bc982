// `aloe bench`, `aloe report` and `aloe compare`: the harness itself is Python (bench/harness/aloe_harness);
// these commands find it, the workload programs and an interpreter with numpy and matplotlib,
// and hand over with exec, so the harness's exit status is the command's.
//
// Where things are: in a build tree, the paths CMake recorded (ALOE_BUILD_APPS_DIR, …); in an
// installed tree, <prefix>/libexec/aloe/apps and <prefix>/share/aloe/harness next to the binary.
#include "commands.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

namespace aloe::cli {
namespace fs = std::filesystem;
namespace {

struct harness_paths {
    fs::path self;
    fs::path apps;
    fs::path harness;
    std::string python;
};

harness_paths locate() {
    harness_paths p;
    std::error_code ec;
    p.self = fs::read_symlink("/proc/self/exe", ec);
    const fs::path prefix = p.self.parent_path().parent_path();
    if (fs::exists(prefix / "share/aloe/harness/aloe_harness", ec)) {
        p.apps = prefix / "libexec/aloe/apps";
        p.harness = prefix / "share/aloe/harness";
        p.python = "python3";
    } else {
        p.apps = ALOE_BUILD_APPS_DIR;
        p.harness = ALOE_SOURCE_HARNESS_DIR;
        // The project venv when it exists now (it may be made after the build was configured).
        p.python = ::access(ALOE_SOURCE_VENV_PYTHON, X_OK) == 0 ? ALOE_SOURCE_VENV_PYTHON : "python3";
    }
    return p;
}

int hand_over(std::string_view subcommand, arguments args) {
    harness_paths p = locate();
    std::vector<std::string> words;
    bool help = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "--python") {
            if (i + 1 >= args.size()) return usage_error(std::string(subcommand) + ": --python needs a path", subcommand);
            p.python = std::string(args[++i]);
        } else {
            help = help || args[i] == "--help" || args[i] == "-h";
            words.emplace_back(args[i]);
        }
    }
    std::error_code ec;
    if (!fs::exists(p.harness / "aloe_harness", ec)) {
        std::cerr << "aloe " << subcommand << ": the harness is not at '" << p.harness.string()
                  << "' (reinstall aloe, or run from its build tree)\n";
        return exit_failure;
    }
    std::vector<std::string> argv{p.python, "-m", "aloe_harness", std::string(subcommand)};
    if (subcommand == "bench" && !help) {
        if (!fs::exists(p.apps, ec)) {
            std::cerr << "aloe bench: no workload programs at '" << p.apps.string() << "' (build them: make build)\n";
            return exit_failure;
        }
        argv.insert(argv.end(), {"--apps-dir", p.apps.string(), "--aloe", p.self.string()});
    }
    argv.insert(argv.end(), words.begin(), words.end());
    setenv("PYTHONPATH", p.harness.c_str(), 1);
    // The line the user typed, for the results folder's command.txt.
    std::string typed = "aloe " + std::string(subcommand);
    for (const std::string_view a : args) typed += " " + std::string(a);
    setenv("ALOE_COMMAND_LINE", typed.c_str(), 1);
    std::vector<char*> raw;
    for (std::string& w : argv) raw.push_back(w.data());
    raw.push_back(nullptr);
    execvp(raw[0], raw.data());
    std::cerr << "aloe " << subcommand << ": cannot start '" << p.python << "': " << std::strerror(errno)
              << " (run scripts/install-deps.sh, or pass --python PATH)\n";
    return exit_failure;
}

}  // namespace

int run_harness(std::string_view subcommand, const std::vector<std::string>& words) {
    const harness_paths p = locate();
    std::error_code ec;
    if (!fs::exists(p.harness / "aloe_harness", ec)) return -1;
    std::vector<std::string> argv{p.python, "-m", "aloe_harness", std::string(subcommand)};
    argv.insert(argv.end(), words.begin(), words.end());
    const pid_t child = fork();
    if (child < 0) return -1;
    if (child == 0) {
        setenv("PYTHONPATH", p.harness.c_str(), 1);
        std::vector<char*> raw;
        for (std::string& w : argv) raw.push_back(w.data());
        raw.push_back(nullptr);
        execvp(raw[0], raw.data());
        _exit(127);
    }
    int status = 0;
    while (waitpid(child, &status, 0) < 0)
        if (errno != EINTR) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int bench_command(arguments args) { return hand_over("bench", args); }
int report_command(arguments args) { return hand_over("report", args); }
int compare_command(arguments args) { return hand_over("compare", args); }

}  // namespace aloe::cli

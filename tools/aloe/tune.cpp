// `aloe tune [--runs N] [--tuning FILE] [aloe run options] -- program args`: runs a program N
// times under `aloe run --schedule adaptive --tuning FILE --summary none`, so that each run
// starts from what the ones before it learnt (docs/tuning.md), and says after each run how
// long it took and how many adaptive loop sites the file holds, converged or not.
#include "commands.hpp"

#include "runtime/printable_text.hpp"

#include <chrono>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

namespace aloe::cli {

namespace {

constexpr std::string_view help_text =
    R"(usage: aloe tune [--runs N] [--tuning FILE] [aloe run options] [--] program [args...]

Runs the program N times (default 3) with every loop the runtime schedules on the adaptive
schedule, keeping what each loop site learnt in FILE (default aloe-tuning.txt): each run
starts from the file the runs before it left. Then `aloe run --tuning FILE --schedule
adaptive -- program args` (or ALOE_TUNING=FILE) starts from the tuned schedules at once.
Run it with the inputs, team size and machine of the real runs: entries are kept per team
size, machine type and build of the program. Other options go to aloe run (--threads,
--rules, --library, ...). Stops at the first run that fails, with its exit status.
)";

// Sites in the file, and how many of them converged ('site' lines, 7th field).
std::pair<int, int> sites_in(const std::string& path) {
    std::ifstream in(path);
    int sites = 0, converged = 0;
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("site ", 0) != 0) continue;
        ++sites;
        std::size_t field = 0, at = 0;
        while (field < 6 && at != std::string::npos) {
            at = line.find(' ', at + 1);
            ++field;
        }
        if (at != std::string::npos && line.compare(at + 1, 2, "1 ") == 0) ++converged;
    }
    return {sites, converged};
}

}  // namespace

int tune_command(arguments args) {
    int runs = 3;
    std::string file = "aloe-tuning.txt";
    std::vector<std::string> passed;  // to aloe run
    std::size_t i = 0;
    for (; i < args.size(); ++i) {
        const std::string_view a = args[i];
        if (a == "--help" || a == "-h") {
            std::cout << help_text;
            return exit_ok;
        }
        if (a == "--") break;
        if (!a.starts_with("--")) break;
        const std::size_t eq = a.find('=');
        const std::string_view name = a.substr(0, eq);
        const auto value = [&]() -> std::optional<std::string> {
            if (eq != std::string_view::npos) return std::string(a.substr(eq + 1));
            if (i + 1 < args.size() && !args[i + 1].starts_with("--")) return std::string(args[++i]);
            return std::nullopt;
        };
        if (name == "--runs" || name == "--tuning") {
            const std::optional<std::string> v = value();
            if (!v || v->empty()) return usage_error("tune: " + std::string(name) + " needs a value", "tune");
            if (name == "--tuning") {
                file = *v;
                continue;
            }
            int n = 0;
            for (const char c : *v) n = c >= '0' && c <= '9' && n < 1000 ? n * 10 + (c - '0') : 100000;
            if (n < 1 || n > 1000)
                return usage_error("tune: --runs '" + runtime::printable(*v) + "' is not an integer in 1..1000", "tune");
            runs = n;
            continue;
        }
        if (name == "--schedule" || name == "--summary")
            return usage_error("tune: " + std::string(name) + " is set by aloe tune (adaptive; none)", "tune");
        // Anything else is aloe run's to judge: pass it on with its value.
        passed.emplace_back(a);
        if (eq == std::string_view::npos && i + 1 < args.size() && !args[i + 1].starts_with("--"))
            passed.emplace_back(args[++i]);
    }
    if (i < args.size() && args[i] == "--") ++i;
    if (i >= args.size()) return usage_error("tune: no program given (aloe tune [options] -- program args)", "tune");

    std::vector<std::string> words{"--schedule", "adaptive", "--tuning", file, "--summary", "none"};
    words.insert(words.end(), passed.begin(), passed.end());
    words.emplace_back("--");
    for (; i < args.size(); ++i) words.emplace_back(args[i]);
    const std::vector<std::string_view> view(words.begin(), words.end());

    for (int run = 1; run <= runs; ++run) {
        const auto t0 = std::chrono::steady_clock::now();
        const int status = run_command(arguments(view));
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (status != exit_ok) {
            std::cerr << "aloe: tune: run " << run << " of " << runs << " failed (exit status " << status
                      << "); stopping\n";
            return status;
        }
        const auto [sites, converged] = sites_in(file);
        std::cerr << "aloe: tune: run " << run << " of " << runs << ": " << seconds << " s; "
                  << runtime::printable(file) << " holds " << sites << " adaptive loop site" << (sites == 1 ? "" : "s")
                  << ", " << converged << " converged\n";
    }
    return exit_ok;
}

}  // namespace aloe::cli

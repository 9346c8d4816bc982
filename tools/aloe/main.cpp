// aloe: the command-line tool. `aloe <subcommand> [options]`; one table row per subcommand.
//
// Exit codes: 0 success, 1 the command failed, 2 the command line was wrong (an unknown
// subcommand or option is named in the message).
#include "runtime/counter_printer.hpp"
#include "commands.hpp"

#include "runtime/printable_text.hpp"

#include <aloe/version.hpp>

#include <algorithm>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

namespace aloe::cli {
namespace {

struct subcommand {
    std::string_view name;
    std::string_view summary;
    int (*run)(arguments args);
};

constexpr subcommand subcommands[] = {
    {"info", "show version, topology, the team aloe would start, capabilities and settings",
     info_command},
    {"run", "run an unmodified OpenMP program (GCC) with aloe scheduling its loops", run_command},
    {"daemon", "start, stop or ask the node daemon that shares cores between programs", daemon_command},
    {"top", "the node daemon's programs, their threads and efficiency, live", top_command},
    {"tune", "run a program a few times on the adaptive schedule, keeping its tuning in a file", tune_command},
    {"noise", "measure this machine's own noise (fixed-work and fixed-time quanta)", noise_command},
    {"sim", "predict what schedules do on 1 to 100,000 nodes, from a machine profile", sim_command},
    {"bench", "run workloads on aloe and its peers, interleaved; CSV, Markdown, plots", bench_command},
    {"report", "turn a results folder into one HTML page with plots and tables", report_command},
    {"compare", "do two results folders of the same matrix agree within their spreads?", compare_command},
};

void print_usage(std::ostream& out) {
    out << "usage: aloe <subcommand> [options]\n"
           "       aloe --help | --version\n\nsubcommands:\n";
    std::size_t width = 0;
    for (const subcommand& s : subcommands) width = std::max(width, s.name.size());
    for (const subcommand& s : subcommands) {
        out << "  " << s.name << std::string(width - s.name.size() + 2, ' ') << s.summary
            << '\n';
    }
    out << "\n'aloe <subcommand> --help' describes a subcommand's options.\n";
}

int run(const std::vector<std::string_view>& words) {
    if (words.empty()) {
        print_usage(std::cerr);
        return exit_usage;
    }
    const std::string_view first = words.front();
    if (first == "--help" || first == "-h" || first == "help") {
        print_usage(std::cout);
        return exit_ok;
    }
    if (first == "--version") {
        std::cout << "aloe " << aloe::version() << '\n';
        return exit_ok;
    }
    if (first.starts_with('-')) {
        return usage_error("unknown option '" + runtime::printable(first) + "'");
    }
    for (const subcommand& s : subcommands) {
        if (s.name == first) return s.run(arguments(words).subspan(1));
    }
    return usage_error("unknown subcommand '" + runtime::printable(first) + "'");
}

}  // namespace

int usage_error(std::string_view message, std::string_view help_topic) {
    std::cerr << "aloe: " << message << " (see 'aloe "
              << (help_topic.empty() ? std::string_view("") : help_topic)
              << (help_topic.empty() ? "" : " ") << "--help')\n";
    return exit_usage;
}

}  // namespace aloe::cli

int main(int argc, char** argv) {
    // ALOE_PRINT_COUNTER is for the programs aloe runs, not for the CLI's own copy of libaloe.
    aloe::runtime::disarm_counter_printer();
    std::vector<std::string_view> words;
    for (int i = 1; i < argc; ++i) words.emplace_back(argv[i]);
    try {
        return aloe::cli::run(words);
    } catch (const std::exception& e) {
        std::cerr << "aloe: error: " << e.what() << '\n';
        return aloe::cli::exit_failure;
    }
}

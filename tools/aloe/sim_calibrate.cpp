// `aloe sim calibrate`: writes a machine profile from this machine's measurements
// (tools/sim/calibration.hpp says which file gives which number).
#include "commands.hpp"

#include "runtime/config.hpp"
#include "runtime/output_file.hpp"
#include "runtime/output_path.hpp"
#include "runtime/printable_text.hpp"
#include "sim/calibration.hpp"

#include <charconv>
#include <cmath>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace aloe::cli {
namespace {
namespace rt = aloe::runtime;

void print_help() {
    std::cout << "usage: aloe sim calibrate --noise F [--overhead F] [--workload F] [--costs F [--site S]]\n"
                 "                          [--iterations N] [--cores C] [--alpha-us A] [--beta-ns-per-byte B]\n"
                 "                          [--t1-from mean|quiet] [--poisson] [--name TEXT] [--out PROFILE]\n\n"
                 "  --noise F          aloe noise --json output (with --trace its events are replayed)\n"
                 "  --overhead F       overhead.csv of the overhead benchmark (q, steal, fork-join)\n"
                 "  --workload F       a workload's --json record: the iteration cost, so that the simulated\n"
                 "                     mean step is the run's (its mean less the noise's share of time)\n"
                 "  --t1-from R        mean (default) or quiet: the 10th-percentile step as it is\n"
                 "  --costs F          a workload's --record-costs file: iterations and, when uneven, costs\n"
                 "  --site S           which loop of the costs file (default: the one of most iterations)\n"
                 "  --iterations N     the loop's iterations per step in the --workload run (not the\n"
                 "                     simulated node's: aloe sim --iterations sets that), when no\n"
                 "                     costs file says it\n"
                 "  --cores C          cores per node (default: the CPUs in the noise file)\n"
                 "  --alpha-us A       network latency per message (default 1.5)\n"
                 "  --beta-ns-per-byte B  inverse bandwidth (default 0.1)\n"
                 "  --poisson          model the noise as Poisson events even when the file has a trace\n"
                 "  --name TEXT        the machine's name in the profile\n"
                 "  --out PROFILE      where to write the profile (default: standard output); %p, %r, %h\n"
                 "                     name the process, rank and host\n";
}

// A whole input file, at most 256 MiB (a long noise trace is tens of MB).
std::optional<std::string> slurp(const std::string& path, std::string& error) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        error = "cannot read '" + rt::printable(path) + "'";
        return std::nullopt;
    }
    std::ostringstream s;
    s << in.rdbuf();
    if (s.str().size() > (std::size_t{256} << 20)) {
        error = "'" + rt::printable(path) + "' is larger than 256 MiB";
        return std::nullopt;
    }
    return s.str();
}

}  // namespace

int sim_calibrate_command(arguments args) {
    aloe::sim::calibration_inputs in;
    std::optional<std::string> out;
    std::vector<std::string> seen;
    std::string command = "aloe sim calibrate";
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::size_t eq = args[i].starts_with("--") ? args[i].find('=') : std::string_view::npos;
        const std::string flag(args[i].substr(0, eq));
        if (flag == "--help" || flag == "-h") {
            print_help();
            return exit_ok;
        }
        static const char* const files[] = {"--noise", "--overhead", "--workload", "--costs"};
        static const char* const valued[] = {"--noise", "--overhead", "--workload", "--costs", "--site", "--iterations", "--t1-from",
                                             "--cores", "--alpha-us", "--beta-ns-per-byte", "--name", "--out"};
        const auto in_list = [&](const auto& list) {
            for (const char* f : list)
                if (flag == f) return true;
            return false;
        };
        if (!in_list(valued) && flag != "--poisson")
            return usage_error("sim calibrate: unknown option '" + rt::printable(args[i]) + "'", "sim calibrate");
        for (const std::string& s : seen)
            if (s == flag) return usage_error("sim calibrate: " + flag + " given twice", "sim calibrate");
        seen.push_back(flag);
        if (flag == "--poisson") {
            in.replay_trace = false;
            command += " --poisson";
            continue;
        }
        std::string v;
        if (eq != std::string_view::npos) {
            v = std::string(args[i].substr(eq + 1));
        } else if (i + 1 < args.size()) {
            v = std::string(args[++i]);
        } else {
            return usage_error("sim calibrate: " + flag + " needs a value", "sim calibrate");
        }
        command += " " + flag + " " + rt::printable(v);
        const std::string shown = flag + " '" + rt::printable(v) + "'";
        if (in_list(files)) {
            std::string error;
            const auto text = slurp(v, error);
            if (!text) return usage_error("sim calibrate: " + flag + ": " + error, "sim calibrate");
            if (flag == "--noise") in.noise_json = *text;
            if (flag == "--overhead") in.overhead_csv = *text;
            if (flag == "--workload") in.workload_json = *text;
            if (flag == "--costs") in.costs_json = *text;
        } else if (flag == "--t1-from") {
            if (v != "mean" && v != "quiet") return usage_error("sim calibrate: " + shown + ": expected mean or quiet", "sim calibrate");
            in.t1_from = v == "mean" ? aloe::sim::calibration_inputs::t1_rule::mean : aloe::sim::calibration_inputs::t1_rule::quiet;
        } else if (flag == "--site") {
            in.site = v;
        } else if (flag == "--name") {
            in.name = v;
        } else if (flag == "--out") {
            if (v.empty()) return usage_error("sim calibrate: --out needs a file", "sim calibrate");
            out = rt::expand_output_path(v, rt::process_identity::of_this_process(rt::current_config()));
        } else if (flag == "--iterations" || flag == "--cores") {
            std::int64_t n = 0;
            const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
            const std::int64_t hi = flag == "--cores" ? 4096 : (std::int64_t{1} << 40);
            if (ec != std::errc() || end != v.data() + v.size() || v.empty() || n < 1 || n > hi)
                return usage_error("sim calibrate: " + shown + " is not an integer in [1, " + std::to_string(hi) + "]", "sim calibrate");
            if (flag == "--cores") in.cores = static_cast<int>(n);
            else in.iterations = n;
        } else {
            double x = 0;
            const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
            if (ec != std::errc() || end != v.data() + v.size() || v.empty() || !std::isfinite(x) || x < 0 || x > 1e6)
                return usage_error("sim calibrate: " + shown + " is not a number in [0, 1e6]", "sim calibrate");
            if (flag == "--alpha-us") in.alpha_s = x * 1e-6;
            else in.beta_s_per_byte = x * 1e-9;
        }
    }
    if (in.noise_json.empty()) return usage_error("sim calibrate: --noise is required (aloe noise --json --trace > F)", "sim calibrate");
    in.made_by = command;
    std::vector<std::string> notes;
    aloe::sim::machine_profile p;
    try {
        p = aloe::sim::calibrate(in, notes);
    } catch (const std::exception& e) {
        std::cerr << "aloe sim calibrate: " << e.what() << "\n";
        return exit_usage;
    }
    for (const std::string& n : notes) std::cerr << "aloe sim calibrate: I801 " << n << "\n";
    const std::string text = aloe::sim::to_json(p);
    if (!out) {
        std::cout << text;
        return exit_ok;
    }
    std::string error;
    if (!rt::write_output_file(*out, text, error)) {
        std::cerr << "aloe sim calibrate: " << error << "\n";
        return exit_failure;
    }
    std::cerr << "aloe sim calibrate: wrote '" << rt::printable(*out) << "'\n";
    return exit_ok;
}

}  // namespace aloe::cli

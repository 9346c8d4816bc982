// `aloe sim`: runs the simulator (tools/sim) over node counts × schedules, prints the table
// (time, efficiency against the ideal, amplification against one node, the best hybrid fs at
// each scale) and writes a results folder (CSV, the profile used, the command, plots drawn by
// the harness). With --ranks-per-node it runs issue 19's model instead: several ranks per
// node lending cores under each --lend policy (tools/sim/lending_simulation.hpp).
// `aloe sim calibrate` is in sim_calibrate.cpp.
#include "commands.hpp"

#include "runtime/json_text.hpp"
#include "runtime/config.hpp"
#include "runtime/output_file.hpp"
#include "runtime/output_path.hpp"
#include "runtime/printable_text.hpp"
#include "sim/lending_report.hpp"
#include "sim/lending_simulation.hpp"
#include "sim/machine_profile.hpp"
#include "sim/report_text.hpp"
#include "sim/node_policy.hpp"
#include "sim/simulation.hpp"

#include <aloe/version.hpp>

#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace aloe::cli {
int sim_calibrate_command(arguments args);

namespace {
namespace rt = aloe::runtime;
using aloe::sim::fixed;
using aloe::sim::percentile;
using aloe::sim::split;

// Writes each (name, text) into `dir`, atomically; false at the first that fails (said).
template <std::size_t N>
bool write_files(const std::string& dir, const std::pair<std::string, std::string> (&files)[N]) {
    for (const auto& [name, text] : files) {
        std::string error;
        if (!rt::write_output_file(dir + "/" + name, text, error)) {
            std::cerr << "aloe sim: " << error << "\n";
            return false;
        }
    }
    return true;
}

void print_help() {
    std::cout
        << "usage: aloe sim [--profile F] [--nodes LIST] [--cores C] [--schedules LIST] [--steps S]\n"
           "                [--iterations N] [--iteration-us T] [--seed K] [--best-fs GRID|off]\n"
           "                [--threads T] [--out DIR] [--json] [--quiet]\n"
           "       aloe sim --ranks-per-node R [--rank-work LIST] [--regions-per-step LIST] [--lend LIST]\n"
           "                [--rank-schedule S] [--rank-noise P:P...] [--rank-noise-us D]\n"
           "                [--rank-noise-delay-us T] [--latency-us KEY=US,...] [common options]\n"
           "       aloe sim calibrate --help\n\n"
           "Predicts what loop schedules do on many nodes: each of P nodes runs its threaded loop\n"
           "under the profile's noise, the schedule executed as aloe executes it, then the nodes\n"
           "meet in a collective (and halo exchange). docs/sim.md describes the model.\n\n"
           "  --profile F       machine profile (aloe sim calibrate writes one); default: the\n"
           "                    profile of the 2-core development VM compiled into aloe\n"
           "  --nodes LIST      node counts, comma-separated (default 1,16,256,4096)\n"
           "  --cores C         cores per node (default: the profile's); without --iterations the\n"
           "                    loop keeps the profile's work per core (weak scaling)\n"
           "  --schedules LIST  aloe schedules, comma-separated; key=value words belong to the\n"
           "                    schedule before them: static,guided,hybrid,fs=0.8,adaptive\n"
           "                    (default static,dynamic,guided,hybrid,fs=0.9,staggered,fs=0.9,\n"
           "                    adaptive,hybrid,fs=0.9,slack=on)\n"
           "  --steps S         timesteps (default 1000)\n"
           "  --iterations N    loop iterations per node and step (default: the profile's)\n"
           "  --iteration-us T  mean cost of one iteration (default: the profile's)\n"
           "  --seed K          seed of every random draw (default 1); a seed gives the same\n"
           "                    result bit for bit on any number of --threads\n"
           "  --best-fs GRID    also sweep hybrid,fs=f over LO:HI:STEP at every node count and\n"
           "                    report the best (default 0:1:0.1); off: no sweep\n"
           "  --threads T       simulation threads (default: the CPUs this process may use)\n"
           "  --out DIR         write summary.csv, steps.csv, best_fs.csv, table.md, profile.json,\n"
           "                    command.txt and plots/ (time vs nodes, step histograms, best fs);\n"
           "                    %p, %r, %h name the process, rank and host (under mpirun the rank\n"
           "                    is added when the name has neither)\n"
           "  --json            print the results as JSON instead of the table\n"
           "  --quiet           no progress line\n\n"
           "Ranks that lend cores (issue 19; docs/sim.md): R MPI ranks per node share its cores\n"
           "(cores/R each), each step every rank runs k parallel regions of its work, then all\n"
           "the job's ranks meet in the profile's collective; a policy moves waiting ranks' cores.\n"
           "  --ranks-per-node R     ranks per node (1 to the cores); turns this model on\n"
           "  --rank-work LIST       cases, comma-separated; each the ranks' work weights, ':'-\n"
           "                         separated, repeating across the node's ranks: 1:3 is\n"
           "                         1,3,1,3 on 4 ranks (default 1: balanced); the node's loop\n"
           "                         (--iterations) is shared out by weight\n"
           "  --regions-per-step LIST  k values: each rank's step cut into k loops (default 1)\n"
           "  --lend LIST            policies (default off,lewi,lewi,mpi=busy,reactive,predictive):\n"
           "                         off; lewi (DLB LeWI; mpi=busy: the lender spins on the core\n"
           "                         it lent); reactive (aloe, lends after the grace);\n"
           "                         predictive (aloe, lends when its last waits say it pays;\n"
           "                         sizing=on|renew|off: phase-start sizing; guard=F;\n"
           "                         ask=critical: only ranks whose next wait does not\n"
           "                         lend at the entry ask, the rule before 2026-11-28)\n"
           "  --rank-schedule S      the ranks' loops: static, dynamic[,chunk=c] or hybrid,fs=F\n"
           "                         (default dynamic,chunk=1); borrowed cores join a pool only\n"
           "  --rank-noise P:P...    per rank (repeating), the chance per step that one of its\n"
           "                         cores is taken for --rank-noise-us D (default 3000) at\n"
           "                         --rank-noise-delay-us T into the step (default 100)\n"
           "  --latency-us KEY=US,...  grace (50), least-slack (1000), poll (500), daemon (330),\n"
           "                         move (70), lewi (5), slice (auto: the kernel's base slice);\n"
           "                         'zero': every latency 0 (least-slack, a threshold, stays)\n";
}

bool parse_int(std::string_view t, std::int64_t lo, std::int64_t hi, std::int64_t& out) {
    std::int64_t x = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), x);
    if (ec != std::errc() || end != t.data() + t.size() || t.empty() || x < lo || x > hi) return false;
    out = x;
    return true;
}

bool parse_real(std::string_view t, double lo, double hi, double& out) {
    double x = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), x);
    if (ec != std::errc() || end != t.data() + t.size() || t.empty() || !std::isfinite(x) || x < lo || x > hi) return false;
    out = x;
    return true;
}


/// "static,guided,hybrid,fs=0.8,chunk=4,adaptive" → static | guided | hybrid,fs=0.8,chunk=4 |
/// adaptive: a word with '=' belongs to the schedule before it. ';' also separates.
std::vector<std::string> split_schedules(std::string_view list) {
    std::vector<std::string> out;
    for (std::string_view group : split(list, ';')) {
        for (std::string_view word : split(group, ',')) {
            if (word.find('=') != std::string_view::npos && !out.empty() && !out.back().empty())
                out.back() += "," + std::string(word);
            else
                out.emplace_back(word);
        }
    }
    return out;
}

struct options {
    std::optional<std::string> profile;
    std::vector<std::int64_t> nodes{1, 16, 256, 4096};
    int cores = 0;
    std::vector<aloe::schedule> schedules;
    int steps = 1000;
    std::int64_t iterations = 0;
    double iteration_us = 0;
    std::uint64_t seed = 1;
    std::optional<std::array<double, 3>> best_fs = std::array<double, 3>{0, 1, 0.1};
    int threads = 0;
    std::optional<std::string> out;
    bool json = false, quiet = false;
    // Ranks that lend cores (issue 19): on with --ranks-per-node.
    int ranks = 0;
    std::vector<std::vector<double>> rank_work{{1.0}};
    std::vector<int> regions{1};
    std::vector<aloe::sim::lending_policy> policies;
    aloe::schedule rank_schedule = aloe::schedule::dynamic(1);
    std::vector<double> rank_noise;
    double rank_noise_us = 3000, rank_noise_delay_us = 100;
    aloe::sim::lending_latencies latencies;
};

int allowed_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    return sched_getaffinity(0, sizeof set, &set) == 0 ? std::max(1, CPU_COUNT(&set)) : 1;
}

// Parses the options; returns an exit code when the command should stop (help, bad input).
std::optional<int> parse(arguments args, options& o) {
    std::vector<std::string> seen;
    std::string schedules_text = "static,dynamic,guided,hybrid,fs=0.9,staggered,fs=0.9,adaptive,hybrid,fs=0.9,slack=on";
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::size_t eq = args[i].starts_with("--") ? args[i].find('=') : std::string_view::npos;
        const std::string flag(args[i].substr(0, eq));
        const auto value = [&]() -> std::optional<std::string> {
            if (eq != std::string_view::npos) return std::string(args[i].substr(eq + 1));
            if (i + 1 >= args.size()) return std::nullopt;
            return std::string(args[++i]);
        };
        if (flag == "--help" || flag == "-h") {
            print_help();
            return exit_ok;
        }
        static const char* const valued[] = {"--profile", "--nodes", "--cores", "--schedules", "--steps", "--iterations",
                                             "--iteration-us", "--seed", "--best-fs", "--threads", "--out",
                                             "--ranks-per-node", "--rank-work", "--regions-per-step", "--lend",
                                             "--rank-schedule", "--rank-noise", "--rank-noise-us", "--rank-noise-delay-us",
                                             "--latency-us"};
        const bool takes = std::find_if(std::begin(valued), std::end(valued), [&](const char* f) { return flag == f; }) != std::end(valued);
        if (!takes && flag != "--json" && flag != "--quiet")
            return usage_error("sim: unknown option '" + rt::printable(args[i]) + "'", "sim");
        if (std::find(seen.begin(), seen.end(), flag) != seen.end())
            return usage_error("sim: " + flag + " given twice", "sim");
        seen.push_back(flag);
        if (!takes) {
            if (eq != std::string_view::npos) return usage_error("sim: " + flag + " takes no value", "sim");
            (flag == "--json" ? o.json : o.quiet) = true;
            continue;
        }
        const std::optional<std::string> v = value();
        if (!v) return usage_error("sim: " + flag + " needs a value", "sim");
        const std::string shown = flag + " '" + rt::printable(*v) + "'";
        std::int64_t n = 0;
        if (flag == "--profile") {
            o.profile = *v;
        } else if (flag == "--nodes") {
            o.nodes.clear();
            for (std::string_view w : split(*v, ',')) {
                if (!parse_int(w, 1, 10'000'000, n)) return usage_error("sim: " + shown + ": '" + rt::printable(w) + "' is not a node count in [1, 10000000]", "sim");
                o.nodes.push_back(n);
            }
        } else if (flag == "--cores") {
            if (!parse_int(*v, 1, 4096, n)) return usage_error("sim: " + shown + " is not an integer in [1, 4096]", "sim");
            o.cores = static_cast<int>(n);
        } else if (flag == "--schedules") {
            schedules_text = *v;
        } else if (flag == "--steps") {
            if (!parse_int(*v, 1, 100'000'000, n)) return usage_error("sim: " + shown + " is not an integer in [1, 100000000]", "sim");
            o.steps = static_cast<int>(n);
        } else if (flag == "--iterations") {
            if (!parse_int(*v, 1, std::int64_t{1} << 40, n)) return usage_error("sim: " + shown + " is not an integer in [1, 2^40]", "sim");
            o.iterations = n;
        } else if (flag == "--iteration-us") {
            if (!parse_real(*v, 1e-6, 1e9, o.iteration_us)) return usage_error("sim: " + shown + " is not a number in [1e-6, 1e9]", "sim");
        } else if (flag == "--seed") {
            if (!parse_int(*v, 0, INT64_MAX, n)) return usage_error("sim: " + shown + " is not a non-negative integer", "sim");
            o.seed = static_cast<std::uint64_t>(n);
        } else if (flag == "--best-fs") {
            if (*v == "off") {
                o.best_fs.reset();
            } else {
                const auto parts = split(*v, ':');
                std::array<double, 3> g{};
                if (parts.size() != 3 || !parse_real(parts[0], 0, 1, g[0]) || !parse_real(parts[1], 0, 1, g[1]) ||
                    !parse_real(parts[2], 0.001, 1, g[2]) || g[1] < g[0])
                    return usage_error("sim: " + shown + ": expected LO:HI:STEP with 0 <= LO <= HI <= 1 and STEP in [0.001, 1], or off", "sim");
                o.best_fs = g;
            }
        } else if (flag == "--threads") {
            if (!parse_int(*v, 1, 1024, n)) return usage_error("sim: " + shown + " is not an integer in [1, 1024]", "sim");
            o.threads = static_cast<int>(n);
        } else if (flag == "--out") {
            if (v->empty()) return usage_error("sim: --out needs a folder", "sim");
            const rt::config& cfg = rt::current_config();
            o.out = rt::expand_output_path(*v, rt::process_identity::of_this_process(cfg));
        } else if (flag == "--ranks-per-node") {
            if (!parse_int(*v, 1, 4096, n)) return usage_error("sim: " + shown + " is not an integer in [1, 4096]", "sim");
            o.ranks = static_cast<int>(n);
        } else if (flag == "--rank-work") {
            o.rank_work.clear();
            for (std::string_view w : split(*v, ',')) {
                try {
                    o.rank_work.push_back(aloe::sim::parse_rank_pattern(w, 1e-6, 1e6, "--rank-work"));
                } catch (const std::exception& e) {
                    return usage_error("sim: " + rt::printable(e.what(), 240) + " (weights as 1:3, cases comma-separated)", "sim");
                }
            }
        } else if (flag == "--regions-per-step") {
            o.regions.clear();
            for (std::string_view w : split(*v, ',')) {
                if (!parse_int(w, 1, 1000, n)) return usage_error("sim: " + shown + ": '" + rt::printable(w) + "' is not a region count in [1, 1000]", "sim");
                o.regions.push_back(static_cast<int>(n));
            }
        } else if (flag == "--lend") {
            try {
                o.policies = aloe::sim::parse_lending_policies(*v);
            } catch (const std::exception& e) {  // the message quotes one word of the value
                return usage_error("sim: " + shown + ": " + rt::printable(e.what(), 240), "sim");
            }
        } else if (flag == "--rank-schedule") {
            std::string error;
            if (!aloe::schedule::try_parse(*v, o.rank_schedule, error)) return usage_error("sim: --rank-schedule: " + error, "sim");
            const aloe::schedule_kind k = o.rank_schedule.kind();
            if (!(k == aloe::schedule_kind::dynamic || k == aloe::schedule_kind::hybrid ||
                  (k == aloe::schedule_kind::static_block && o.rank_schedule.chunk() == 0)))
                return usage_error("sim: " + shown + ": the ranks' loops are static, dynamic or hybrid", "sim");
        } else if (flag == "--rank-noise") {
            try {
                o.rank_noise = aloe::sim::parse_rank_pattern(*v, 0, 1, "--rank-noise");
            } catch (const std::exception& e) {
                return usage_error("sim: " + rt::printable(e.what(), 240) + " (chances per step, as 0:0.5)", "sim");
            }
        } else if (flag == "--rank-noise-us") {
            if (!parse_real(*v, 0, 1e9, o.rank_noise_us)) return usage_error("sim: " + shown + " is not a number in [0, 1e9]", "sim");
        } else if (flag == "--rank-noise-delay-us") {
            if (!parse_real(*v, 0, 1e9, o.rank_noise_delay_us)) return usage_error("sim: " + shown + " is not a number in [0, 1e9]", "sim");
        } else if (flag == "--latency-us") {
            try {
                aloe::sim::parse_lending_latencies(*v, o.latencies);
            } catch (const std::exception& e) {
                return usage_error("sim: " + shown + ": " + rt::printable(e.what(), 240), "sim");
            }
        }
    }
    // The ranks' model has its own loop options; the others belong to the one-rank model.
    static const char* const ranks_only[] = {"--rank-work", "--regions-per-step", "--lend", "--rank-schedule",
                                             "--rank-noise", "--rank-noise-us", "--rank-noise-delay-us", "--latency-us"};
    const auto given = [&](const char* f) { return std::find(seen.begin(), seen.end(), f) != seen.end(); };
    if (o.ranks == 0) {
        for (const char* f : ranks_only)
            if (given(f)) return usage_error("sim: " + std::string(f) + " needs --ranks-per-node (the model of ranks that lend cores)", "sim");
    } else {
        for (const char* f : {"--schedules", "--best-fs"})
            if (given(f)) return usage_error("sim: " + std::string(f) + " does not apply with --ranks-per-node (the ranks' loops take --rank-schedule)", "sim");
        if (given("--rank-noise-us") && !given("--rank-noise")) return usage_error("sim: --rank-noise-us needs --rank-noise (which ranks, how often)", "sim");
        if (o.policies.empty()) o.policies = aloe::sim::parse_lending_policies("off,lewi,lewi,mpi=busy,reactive,predictive");
        if (o.threads == 0) o.threads = allowed_cpus();
        return std::nullopt;
    }
    for (const std::string& text : split_schedules(schedules_text)) {
        std::string error;
        aloe::schedule s;
        if (text.empty()) return usage_error("sim: --schedules has an empty entry", "sim");
        if (!aloe::schedule::try_parse(text, s, error)) return usage_error("sim: --schedules: " + error, "sim");
        o.schedules.push_back(s);
    }
    if (o.threads == 0) o.threads = allowed_cpus();
    return std::nullopt;
}



struct row {
    aloe::sim::sim_result r;
    bool sweep = false;  // a best-fs sweep point, not a listed schedule
};

// Creates DIR (one level; its parent must exist) or accepts an existing folder, never a
// link to one: the files go in with write_output_file, each by rename.
bool make_folder(const std::string& dir, std::string& error) {
    struct stat st {};
    if (lstat(dir.c_str(), &st) == 0) {
        if (S_ISDIR(st.st_mode)) return true;
        error = "'" + rt::printable(dir) + "' exists and is not a folder";
        return false;
    }
    if (mkdir(dir.c_str(), 0755) != 0) {
        error = "cannot create '" + rt::printable(dir) + "': " + std::string(std::strerror(errno));
        return false;
    }
    return true;
}

// Issue 19's model: every node count × work case × k × policy, then one report.
int run_ranks(const options& o, const aloe::sim::machine_profile& profile, arguments args) {
    const int cores = o.cores > 0 ? o.cores : profile.cores;
    if (o.ranks > cores)
        return usage_error("sim: --ranks-per-node " + std::to_string(o.ranks) + ": more ranks than the node's " + std::to_string(cores) +
                               " cores (--cores, or the profile's)", "sim");
    std::string error;
    if (o.out && !make_folder(*o.out, error)) {
        std::cerr << "aloe sim: --out: " << error << "\n";
        return exit_failure;
    }
    const std::size_t runs = o.nodes.size() * o.rank_work.size() * o.regions.size() * o.policies.size();
    const bool show_progress = !o.quiet && isatty(STDERR_FILENO);
    std::vector<aloe::sim::lending_result> results;
    double simulated_node_steps = 0, wall = 0;
    for (std::int64_t nodes : o.nodes)
        for (const auto& work : o.rank_work)
            for (int k : o.regions)
                for (const aloe::sim::lending_policy& policy : o.policies) {
                    aloe::sim::lending_options lo;
                    lo.nodes = nodes;
                    lo.cores = o.cores;
                    lo.ranks = o.ranks;
                    lo.rank_work = work;
                    lo.regions = k;
                    lo.iterations = o.iterations;
                    lo.iteration_s = o.iteration_us * 1e-6;
                    lo.steps = o.steps;
                    lo.seed = o.seed;
                    lo.policy = policy;
                    lo.latencies = o.latencies;
                    lo.rank_schedule = o.rank_schedule;
                    lo.rank_noise_p = o.rank_noise;
                    lo.rank_noise_s = o.rank_noise_us * 1e-6;
                    lo.rank_noise_delay_s = o.rank_noise_delay_us * 1e-6;
                    lo.threads = o.threads;
                    const std::string label = policy.to_string() + ", work " + aloe::sim::rank_pattern_text(work) + ", k " + std::to_string(k);
                    const std::size_t done = results.size();
                    if (show_progress)
                        lo.progress = [&, label, nodes, done](int step) {
                            std::fprintf(stderr, "\r[%zu/%zu] %lld nodes, %s: step %d/%d   ", done + 1, runs,
                                         static_cast<long long>(nodes), label.c_str(), step, o.steps);
                        };
                    try {
                        results.push_back(aloe::sim::simulate_lending(profile, lo));
                    } catch (const std::exception& e) {
                        if (show_progress) std::fprintf(stderr, "\n");
                        std::cerr << "aloe sim: " << label << " on " << nodes << " nodes: " << e.what() << "\n";
                        return exit_usage;
                    }
                    simulated_node_steps += static_cast<double>(nodes) * o.steps;
                    wall += results.back().wall_s;
                }
    if (show_progress) std::fprintf(stderr, "\r%*s\r", 90, "");
    const aloe::sim::lending_report report = aloe::sim::report_lending(results, profile.name, o.seed);
    const aloe::sim::lending_latencies& l = o.latencies;
    const auto us = [](double s) { return fixed(s * 1e6, s * 1e6 < 10 && s > 0 ? 1 : 0); };
    std::string sizes;  // each case's iterations per rank, once
    for (const auto& r : results) {
        std::string case_text = "; work " + r.rank_work + " = ";
        if (sizes.find(case_text) != std::string::npos) continue;
        for (std::size_t i = 0; i < r.rank_iterations.size(); ++i) {
            if (i > 0) case_text += ':';
            case_text += std::to_string(r.rank_iterations[i]);
        }
        sizes += case_text;
    }
    const std::string header =
        "aloe sim: profile '" + profile.name + "', ranks that lend cores: " + std::to_string(o.ranks) + " ranks per node of " +
        std::to_string(cores) + " cores, " + std::to_string(o.steps) + " steps, seed " + std::to_string(o.seed) + "\n" +
        "each step: " + (results.empty() ? std::string("-") : fixed(results[0].iteration_s * 1e6, 3)) + " us iterations per rank" +
        sizes + ", loops " + o.rank_schedule.to_string() +
        (o.rank_noise.empty() ? std::string() : ", injected noise " + aloe::sim::rank_pattern_text(o.rank_noise) + " × " + us(o.rank_noise_us * 1e-6) + " us") +
        "\nlatencies (us): grace " + us(l.grace_s) + ", least slack " + us(l.least_slack_s) + ", poll " + us(l.poll_s) + ", daemon " +
        us(l.daemon_s) + ", move " + us(l.move_s) + ", lewi " + us(l.lewi_s) + ", busy slice " + us(aloe::sim::busy_slice_s(l, cores)) + "\n";
    const std::string footer = "simulated " + fixed(simulated_node_steps / 1e6, 3) + " M node-steps in " + fixed(wall, 2) + " s (" +
                               std::to_string(o.threads) + " threads); efficiency = ideal (work / all cores) / time\n";
    if (o.json) std::cout << report.json;
    else std::cout << header << "\n" << report.table << "\n" << footer;
    if (o.out) {
        std::string command = "aloe sim";  // whole: a policy list is longer than a quoted value
        for (std::string_view a : args) command += " " + rt::printable(a, rt::printable_path_limit);
        const std::string dir = *o.out;
        const std::pair<std::string, std::string> files[] = {
            {"summary.csv", report.summary_csv},
            {"steps.csv", report.steps_csv},
            {"table.md", header + "\n" + report.table + "\n" + footer},
            {"results.json", report.json},
            {"profile.json", aloe::sim::to_json(profile)},
            {"command.txt", command + "\naloe " + std::string(aloe::version()) + "\n"},
        };
        if (!write_files(dir, files)) return exit_failure;
    }
    return exit_ok;
}

}  // namespace

int sim_command(arguments args) {
    if (!args.empty() && args[0] == "calibrate") return sim_calibrate_command(args.subspan(1));
    options o;
    if (const auto stop = parse(args, o)) return *stop;
    aloe::sim::machine_profile profile;
    try {
        profile = o.profile ? aloe::sim::read_profile(*o.profile) : aloe::sim::builtin_profile();
    } catch (const std::exception& e) {
        std::cerr << "aloe sim: " << e.what() << "\n";
        return exit_usage;
    }
    // What the largest run would hold: per node its cores' noise streams and schedule state,
    // per step two doubles. Refused beyond three quarters of this machine's memory, before
    // anything runs, rather than killed by the OOM killer hours in.
    {
        const int cores = o.cores > 0 ? o.cores : profile.cores;
        const double per_node = 640.0 + cores * (48.0 + 80.0 * static_cast<double>(std::max<std::size_t>(profile.noise.size(), 1)));
        const double nodes = static_cast<double>(*std::max_element(o.nodes.begin(), o.nodes.end()));
        const double runs_per_count = o.ranks > 0 ? static_cast<double>(o.policies.size() * o.rank_work.size() * o.regions.size())
                                                  : static_cast<double>(o.schedules.size() + 1);
        const double need = nodes * per_node + 16.0 * o.steps * runs_per_count * static_cast<double>(o.nodes.size());
        const double have = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
        if (have > 0 && need > 0.75 * have) {
            std::cerr << "aloe sim: about " << fixed(need / (1 << 30), 1) << " GiB needed for " << static_cast<long long>(nodes)
                      << " nodes of " << cores << " cores and " << o.steps << " steps; this machine has "
                      << fixed(have / (1 << 30), 1) << " GiB (fewer nodes, cores or steps)\n";
            return exit_usage;
        }
    }
    if (o.ranks > 0) return run_ranks(o, profile, args);
    // A schedule the simulator does not model is refused before anything runs.
    for (const aloe::schedule& s : o.schedules) {
        try {
            aloe::sim::schedule_model(s, profile, o.cores > 0 ? o.cores : profile.cores, 1, 1e-6);
        } catch (const std::exception& e) {
            return usage_error("sim: --schedules: " + std::string(e.what()), "sim");
        }
    }
    std::string error;
    if (o.out && !make_folder(*o.out, error)) {
        std::cerr << "aloe sim: --out: " << error << "\n";
        return exit_failure;
    }
    // Every run: node counts × (schedules, then the fs sweep).
    std::vector<aloe::schedule> sweep;
    if (o.best_fs) {
        std::int64_t chunk = 1;
        for (const auto& s : o.schedules)
            if (s.kind() == aloe::schedule_kind::hybrid) {
                chunk = std::max<std::int64_t>(s.chunk(), 1);
                break;
            }
        const auto& g = *o.best_fs;
        for (int k = 0;; ++k) {
            const double f = g[0] + k * g[2];
            if (f > g[1] + 1e-9) break;
            sweep.push_back(aloe::schedule::hybrid(std::min(1.0, std::round(f * 1000) / 1000), chunk));
        }
    }
    const std::size_t runs = o.nodes.size() * (o.schedules.size() + sweep.size());
    const bool show_progress = !o.quiet && isatty(STDERR_FILENO);
    std::vector<row> rows;
    std::size_t done = 0;
    double simulated_node_steps = 0, wall = 0;
    for (std::int64_t nodes : o.nodes) {
        std::vector<std::pair<aloe::schedule, bool>> todo;
        for (const auto& s : o.schedules) todo.emplace_back(s, false);
        for (const auto& s : sweep) todo.emplace_back(s, true);
        for (const auto& [s, is_sweep] : todo) {
            aloe::sim::sim_options so;
            so.nodes = nodes;
            so.cores = o.cores;
            so.iterations = o.iterations;
            so.iteration_s = o.iteration_us * 1e-6;
            so.steps = o.steps;
            so.seed = o.seed;
            so.schedule = s;
            so.threads = o.threads;
            const std::string label = s.to_string();
            if (show_progress)
                so.progress = [&, label, nodes](int step) {
                    std::fprintf(stderr, "\r[%zu/%zu] %lld nodes, %s: step %d/%d   ", done + 1, runs, static_cast<long long>(nodes),
                                 label.c_str(), step, o.steps);
                };
            try {
                rows.push_back({aloe::sim::simulate(profile, so), is_sweep});
            } catch (const std::exception& e) {
                if (show_progress) std::fprintf(stderr, "\n");
                std::cerr << "aloe sim: " << label << " on " << nodes << " nodes: " << e.what() << "\n";
                return exit_usage;
            }
            simulated_node_steps += static_cast<double>(nodes) * o.steps;
            wall += rows.back().r.wall_s;
            ++done;
        }
    }
    if (show_progress) std::fprintf(stderr, "\r%*s\r", 90, "");

    // Amplification: time on P nodes / time on the smallest node count, per schedule.
    std::map<std::string, double> base_time;
    const std::int64_t smallest = *std::min_element(o.nodes.begin(), o.nodes.end());
    for (const row& x : rows)
        if (x.r.nodes == smallest) base_time[x.r.schedule] = x.r.total_s;
    std::map<std::int64_t, std::pair<double, double>> best;  // nodes → (fs, time)
    for (const row& x : rows) {
        if (!x.sweep) continue;
        const double fs = std::round(x.r.mean_fs * 1000) / 1000;  // the sweep's fs, without the sum's rounding
        auto [it, fresh] = best.try_emplace(x.r.nodes, fs, x.r.total_s);
        if (!fresh && x.r.total_s < it->second.second) it->second = {fs, x.r.total_s};
    }

    std::ostringstream csv, steps_csv, best_csv, table, json;
    csv << "nodes,cores,schedule,steps,iterations,iteration_s,total_s,mean_step_s,p50_step_s,p95_step_s,max_step_s,"
           "ideal_s,efficiency,amplification,network_s,busy_share,schedule_share,idle_share,wait_s_per_node,"
           "claims_per_node_step,steals_per_node_step,mean_fs,slack_spent_fraction,noise_events,sweep,wall_s\n";
    steps_csv << "nodes,schedule,step,step_s,watch_loop_s\n";
    best_csv << "nodes,best_fs,best_total_s\n";
    table << "| nodes | schedule | time (s) | step p50 / p95 / max (ms) | efficiency | amplification | best fs |\n"
             "|---:|---|---:|---|---:|---:|---:|\n";
    json << "{\"tool\": \"aloe sim\", \"version\": \"" << aloe::version() << "\", \"profile\": " << rt::json_quote(profile.name)
         << ", \"steps\": " << o.steps << ", \"seed\": " << o.seed << ", \"runs\": [";
    bool first_json = true;
    for (const row& x : rows) {
        const auto& r = x.r;
        const double p50 = percentile(r.step_s, 0.5), p95 = percentile(r.step_s, 0.95);
        const double mx = r.step_s.empty() ? 0 : *std::max_element(r.step_s.begin(), r.step_s.end());
        const double core_s = r.total_s * static_cast<double>(r.nodes) * r.cores;
        const double amp = base_time.count(r.schedule) && base_time[r.schedule] > 0 ? r.total_s / base_time[r.schedule] : 0;
        const double node_steps = static_cast<double>(r.nodes) * r.steps;
        csv << r.nodes << ',' << r.cores << ",\"" << r.schedule << "\"," << r.steps << ',' << r.iterations << ','
            << rt::json_number(r.iteration_s) << ',' << rt::json_number(r.total_s) << ',' << rt::json_number(r.total_s / r.steps) << ','
            << rt::json_number(p50) << ',' << rt::json_number(p95) << ',' << rt::json_number(mx) << ',' << rt::json_number(r.ideal_s)
            << ',' << rt::json_number(r.ideal_s / r.total_s) << ',' << rt::json_number(amp) << ',' << rt::json_number(r.network_s) << ','
            << rt::json_number(r.tally.busy_s / core_s) << ',' << rt::json_number(r.tally.schedule_s / core_s) << ','
            << rt::json_number(r.idle_s / core_s) << ',' << rt::json_number(r.wait_s / static_cast<double>(r.nodes)) << ','
            << rt::json_number(static_cast<double>(r.tally.claims) / node_steps) << ','
            << rt::json_number(static_cast<double>(r.tally.steals) / node_steps) << ',' << rt::json_number(r.mean_fs) << ','
            << rt::json_number(r.slack_spent_fraction) << ',' << r.noise_events << ',' << (x.sweep ? 1 : 0) << ','
            << rt::json_number(r.wall_s) << '\n';
        if (!x.sweep) {
            for (std::size_t k = 0; k < r.step_s.size(); ++k)
                steps_csv << r.nodes << ",\"" << r.schedule << "\"," << k << ',' << rt::json_number(r.step_s[k]) << ','
                          << rt::json_number(r.watch_loop_s[k]) << '\n';
            const auto b = best.find(r.nodes);
            table << "| " << r.nodes << " | " << r.schedule << " | " << fixed(r.total_s, 4) << " | " << fixed(p50 * 1e3, 3) << " / "
                  << fixed(p95 * 1e3, 3) << " / " << fixed(mx * 1e3, 3) << " | " << fixed(r.ideal_s / r.total_s, 3) << " | "
                  << fixed(amp, 3) << " | " << (b != best.end() ? fixed(b->second.first, 2) : std::string("-")) << " |\n";
        }
        json << (first_json ? "" : ", ") << "{\"nodes\": " << r.nodes << ", \"cores\": " << r.cores << ", \"schedule\": "
             << rt::json_quote(r.schedule) << ", \"sweep\": " << (x.sweep ? "true" : "false") << ", \"total_s\": "
             << rt::json_number(r.total_s) << ", \"ideal_s\": " << rt::json_number(r.ideal_s) << ", \"efficiency\": "
             << rt::json_number(r.ideal_s / r.total_s) << ", \"amplification\": " << rt::json_number(amp) << ", \"p50_step_s\": "
             << rt::json_number(p50) << ", \"p95_step_s\": " << rt::json_number(p95) << ", \"max_step_s\": " << rt::json_number(mx)
             << ", \"mean_fs\": " << rt::json_number(r.mean_fs) << ", \"noise_events\": " << r.noise_events
             << ", \"wall_s\": " << rt::json_number(r.wall_s) << "}";
        first_json = false;
    }
    for (const auto& [nodes, b] : best) best_csv << nodes << ',' << rt::json_number(b.first) << ',' << rt::json_number(b.second) << '\n';
    json << "], \"best_fs\": [";
    bool first_best = true;
    for (const auto& [nodes, b] : best) {
        json << (first_best ? "" : ", ") << "{\"nodes\": " << nodes << ", \"fs\": " << rt::json_number(b.first)
             << ", \"total_s\": " << rt::json_number(b.second) << "}";
        first_best = false;
    }
    json << "], \"node_steps_per_s\": " << rt::json_number(wall > 0 ? simulated_node_steps / wall : 0) << "}\n";

    const std::string header = "aloe sim: profile '" + profile.name + "', " + std::to_string(o.steps) + " steps, seed " +
                               std::to_string(o.seed) + ", " + std::to_string(rows.empty() ? 0 : rows[0].r.cores) +
                               " cores per node, " + std::to_string(rows.empty() ? 0 : rows[0].r.iterations) +
                               " iterations of " + fixed(rows.empty() ? 0 : rows[0].r.iteration_s * 1e6, 3) + " us per node-step\n";
    const std::string footer = "simulated " + fixed(simulated_node_steps / 1e6, 3) + " M node-steps in " + fixed(wall, 2) + " s (" +
                               fixed(wall > 0 ? simulated_node_steps / wall / 1e6 : 0, 2) + " M node-steps/s, " +
                               std::to_string(o.threads) + " threads)\n";
    if (o.json) {
        std::cout << json.str();
    } else {
        std::cout << header << "\n" << table.str() << "\n" << footer;
    }
    if (o.out) {
        std::string command = "aloe sim";
        for (std::string_view a : args) command += " " + rt::printable(a);
        const std::string dir = *o.out;
        const std::pair<std::string, std::string> files[] = {
            {"summary.csv", csv.str()},
            {"steps.csv", steps_csv.str()},
            {"best_fs.csv", best_csv.str()},
            {"table.md", header + "\n" + table.str() + "\n" + footer},
            {"results.json", json.str()},
            {"profile.json", aloe::sim::to_json(profile)},
            {"command.txt", command + "\naloe " + std::string(aloe::version()) + "\n"},
        };
        if (!write_files(dir, files)) return exit_failure;
        const int plots = run_harness("sim-plots", {dir});
        if (plots != 0)
            std::cerr << "aloe sim: W801 no plots in '" << rt::printable(dir) << "/plots' (the harness "
                      << (plots < 0 ? "could not be started" : "failed") << "; the CSV files are written)\n";
    }
    return exit_ok;
}

}  // namespace aloe::cli

// `aloe noise`: measures this machine's own noise with fixed-work (FWQ) and fixed-time (FTQ)
// quanta, one pinned thread per CPU, all CPUs at once by default (that is how a parallel loop
// meets the noise). The benchmark harness records its JSON beside every result.
#include "commands.hpp"

#include "runtime/cpu_mask.hpp"
#include "runtime/json_text.hpp"
#include "runtime/noise_probe.hpp"

#include <pthread.h>
#include <sched.h>

#include <charconv>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace aloe::cli {
namespace rt = aloe::runtime;
namespace {

struct noise_options {
    double quantum_us = 10;
    double slice_us = 1000;  // FTQ: a slice must outlast a preemption, or every event fills whole slices
    double seconds = 2;
    bool json = false;
    bool one_at_a_time = false;
    std::string method = "both";
};

void print_help() {
    std::cout << "usage: aloe noise [--quick] [--seconds S] [--quantum-us Q] [--slice-us T]\n"
                 "                  [--method fwq|ftq|both] [--one-at-a-time] [--json]\n\n"
                 "Measures the machine's own noise on every CPU this process may use: FWQ repeats a\n"
                 "quantum of work and reports how much longer some repetitions take; FTQ counts the\n"
                 "work done in fixed time slices. Events are quanta delayed by more than half a\n"
                 "quantum (FWQ) or slices that lost more than 5% (FTQ); their mean length is the\n"
                 "delta a schedule must absorb.\n\n"
                 "  --seconds S       time per method and CPU (default 2)\n"
                 "  --quantum-us Q    FWQ work quantum in microseconds (default 10)\n"
                 "  --slice-us T      FTQ time slice in microseconds (default 1000)\n"
                 "  --quick           0.5 s per method (what `aloe bench` records)\n"
                 "  --method M        fwq, ftq or both (default both)\n"
                 "  --one-at-a-time   measure the CPUs one after another (default: all at once)\n"
                 "  --json            one JSON object on stdout\n";
}

bool parse_positive(std::string_view text, double& out) {
    const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && p == text.data() + text.size() && out > 0;
}

// One CPU's measurement, on a thread pinned there.
std::vector<rt::noise_summary> measure_cpu(int cpu, const noise_options& o) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    std::vector<rt::noise_summary> out;
    if (o.method != "ftq") {
        const std::uint64_t units = rt::calibrate_work_units(o.quantum_us);
        const auto samples = static_cast<std::size_t>(o.seconds * 1e6 / o.quantum_us);
        out.push_back(rt::summarize_fwq(rt::run_fwq(units, samples), cpu));
    }
    if (o.method != "fwq") {
        const auto slices = static_cast<std::size_t>(o.seconds * 1e6 / o.slice_us);
        out.push_back(rt::summarize_ftq(rt::run_ftq(o.slice_us, slices), o.slice_us, cpu));
    }
    return out;
}

void print_json(const std::vector<rt::noise_summary>& all, const noise_options& o, std::ostream& out) {
    out << "{\"tool\": \"aloe noise\", \"mode\": " << rt::json_quote(o.one_at_a_time ? "one-at-a-time" : "all-cpus-at-once")
        << ", \"quantum_us\": " << rt::json_number(o.quantum_us)
        << ", \"slice_us\": " << rt::json_number(o.slice_us) << ", \"seconds\": " << rt::json_number(o.seconds)
        << ", \"cpus\": [";
    for (std::size_t i = 0; i < all.size(); ++i) {
        const rt::noise_summary& s = all[i];
        out << (i ? ",\n  " : "\n  ") << "{\"method\": " << rt::json_quote(s.method) << ", \"cpu\": " << s.cpu
            << ", \"samples\": " << s.samples << ", \"quantum_us\": " << rt::json_number(s.quantum_us)
            << ", \"p50_us\": " << rt::json_number(s.p50_us) << ", \"p99_us\": " << rt::json_number(s.p99_us)
            << ", \"max_us\": " << rt::json_number(s.max_us) << ", \"lost_fraction\": " << rt::json_number(s.lost_fraction)
            << ", \"events\": " << s.events << ", \"events_per_s\": " << rt::json_number(s.events_per_s)
            << ", \"event_mean_us\": " << rt::json_number(s.event_mean_us)
            << ", \"event_max_us\": " << rt::json_number(s.event_max_us) << "}";
    }
    out << "\n]}\n";
}

void print_text(const std::vector<rt::noise_summary>& all, const noise_options& o, std::ostream& out) {
    out << "machine noise, " << o.quantum_us << " us quanta, " << o.seconds << " s per method and CPU, "
        << (o.one_at_a_time ? "one CPU at a time" : "all CPUs at once") << "\n";
    out << "method  cpu  quantum_us    p50_us    p99_us     max_us   lost%  events/s  event_mean_us\n";
    char line[160];
    for (const rt::noise_summary& s : all) {
        std::snprintf(line, sizeof line, "%-6s %4d %11.2f %9.2f %9.2f %10.1f %7.2f %9.1f %14.1f\n", s.method.c_str(),
                      s.cpu, s.quantum_us, s.p50_us, s.p99_us, s.max_us, 100 * s.lost_fraction, s.events_per_s,
                      s.event_mean_us);
        out << line;
    }
}

}  // namespace

int noise_command(arguments args) {
    noise_options o;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string_view a = args[i];
        // The word after a flag; empty when the flag is last (then rejected as not a value).
        const auto value = [&]() -> std::string_view { return i + 1 < args.size() ? args[++i] : std::string_view(); };
        if (a == "--help" || a == "-h") {
            print_help();
            return exit_ok;
        } else if (a == "--json") {
            o.json = true;
        } else if (a == "--quick") {
            o.seconds = 0.5;
        } else if (a == "--one-at-a-time") {
            o.one_at_a_time = true;
        } else if (a == "--seconds") {
            const std::string_view v = value();
            if (!parse_positive(v, o.seconds) || o.seconds > 600)
                return usage_error("noise: --seconds '" + std::string(v) + "' is not in (0, 600]", "noise");
        } else if (a == "--quantum-us") {
            const std::string_view v = value();
            if (!parse_positive(v, o.quantum_us) || o.quantum_us < 1 || o.quantum_us > 1e6)
                return usage_error("noise: --quantum-us '" + std::string(v) + "' is not in [1, 1000000]", "noise");
        } else if (a == "--slice-us") {
            const std::string_view v = value();
            if (!parse_positive(v, o.slice_us) || o.slice_us < 10 || o.slice_us > 1e6)
                return usage_error("noise: --slice-us '" + std::string(v) + "' is not in [10, 1000000]", "noise");
        } else if (a == "--method") {
            const std::string_view v = value();
            if (v != "fwq" && v != "ftq" && v != "both")
                return usage_error("noise: --method '" + std::string(v) + "': expected fwq, ftq or both", "noise");
            o.method = std::string(v);
        } else {
            return usage_error("noise: unknown option '" + std::string(a) + "'", "noise");
        }
    }
    const std::vector<int> cpus = rt::cpus_in_affinity_mask();
    std::vector<std::vector<rt::noise_summary>> per_cpu(cpus.size());
    if (o.one_at_a_time) {
        for (std::size_t i = 0; i < cpus.size(); ++i) {
            std::thread t([&, i] { per_cpu[i] = measure_cpu(cpus[i], o); });
            t.join();
        }
    } else {
        std::vector<std::thread> threads;
        for (std::size_t i = 0; i < cpus.size(); ++i)
            threads.emplace_back([&, i] { per_cpu[i] = measure_cpu(cpus[i], o); });
        for (std::thread& t : threads) t.join();
    }
    std::vector<rt::noise_summary> all;
    for (const std::string_view m : {"fwq", "ftq"})
        for (const auto& list : per_cpu)
            for (const rt::noise_summary& s : list)
                if (s.method == m) all.push_back(s);
    if (o.json) print_json(all, o, std::cout);
    else print_text(all, o, std::cout);
    return exit_ok;
}

}  // namespace aloe::cli

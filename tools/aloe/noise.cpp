// `aloe noise`: measures this machine's own noise with fixed-work (FWQ) and fixed-time (FTQ)
// quanta, one pinned thread per CPU, all CPUs at once by default (that is how a parallel loop
// meets the noise). The benchmark harness records its JSON beside every result.
#include "commands.hpp"

#include "runtime/cpu_mask.hpp"
#include "runtime/json_text.hpp"
#include "runtime/noise_probe.hpp"
#include "runtime/printable_text.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>
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
    bool trace = false;  // with json: each CPU's events themselves
    bool one_at_a_time = false;
    std::string method = "both";
};

void print_help() {
    std::cout << "usage: aloe noise [--quick] [--seconds S] [--quantum-us Q] [--slice-us T]\n"
                 "                  [--method fwq|ftq|both] [--one-at-a-time] [--json [--trace]]\n\n"
                 "Measures the machine's own noise on every CPU this process may use: FWQ repeats a\n"
                 "quantum of work and reports how much longer some repetitions take; FTQ counts the\n"
                 "work done in fixed time slices. Events are quanta delayed by more than half a\n"
                 "quantum (FWQ) or slices that lost more than 5% (FTQ); their mean length is the\n"
                 "delta a schedule must absorb.\n\n"
                 "  --seconds S       time per method and CPU (default 2); at least one quantum\n"
                 "                    and slice, at most 4194304 of either per CPU\n"
                 "  --quantum-us Q    FWQ work quantum in microseconds (default 10)\n"
                 "  --slice-us T      FTQ time slice in microseconds (default 1000)\n"
                 "  --quick           0.5 s per method (what `aloe bench` records)\n"
                 "  --method M        fwq, ftq or both (default both)\n"
                 "  --one-at-a-time   measure the CPUs one after another (default: all at once)\n"
                 "  --json            one JSON object on stdout\n"
                 "  --trace           with --json: the events themselves as well, in each CPU's\n"
                 "                    entry \"events_us\": [[start_us, length_us], ...] by start\n"
                 "                    (start: time since that CPU's measurement began; length: the\n"
                 "                    delay beyond the quiet quantum), and \"format\":\n"
                 "                    \"aloe-noise-trace/1\" at the top: the noise trace `aloe sim`\n"
                 "                    reads\n";
}

// Shortest decimal that reads back as `x`, for messages: fixed notation as a user types it
// (0.0005, 1000000), scientific only for extremes such as 1e-300.
std::string decimal(double x) {
    char buf[64];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::fixed);
    if (ec != std::errc()) end = std::to_chars(buf, buf + sizeof buf, x).ptr;
    return std::string(buf, end);
}

// A flag's number: plain decimal (as from_chars reads it: no sign but '-', no blanks, no
// hex) and finite. Out-of-range values are the caller's to refuse, with the range.
enum class number_check { ok, not_a_number, out_of_range };
number_check parse_number(std::string_view text, double lo, double hi, double& out) {
    double x = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), x);
    if (end != text.data() + text.size() || text.empty() || std::isnan(x) ||
        (ec != std::errc() && ec != std::errc::result_out_of_range))
        return number_check::not_a_number;
    if (ec == std::errc::result_out_of_range || !(x >= lo && x <= hi)) return number_check::out_of_range;
    out = x;
    return number_check::ok;
}

// Checked after every flag is read, since they limit one another: each method to be run
// must take at least one sample (the summaries have nothing to say about none) and at
// most rt::max_samples_per_cpu (the traces are kept whole). Empty when the plan is fine.
std::string check_plan(const noise_options& o) {
    struct method {
        std::string_view name, flag, unit, units;
        double quantum_us;
    };
    for (const method& m : {method{"fwq", "--quantum-us", "quantum", "quanta", o.quantum_us},
                           method{"ftq", "--slice-us", "slice", "slices", o.slice_us}}) {
        if (o.method != m.name && o.method != "both") continue;
        const std::size_t n = rt::samples_in(o.seconds, m.quantum_us);
        const std::string both = "--seconds " + decimal(o.seconds);
        const std::string each = std::string(m.flag) + " " + decimal(m.quantum_us);
        if (n == 0)
            return both + " is shorter than one " + each + " " + std::string(m.unit) + " (" + std::string(m.name) +
                   ")";
        if (n > rt::max_samples_per_cpu)
            return both + " is " + std::to_string(n) + " " + std::string(m.units) + " of " + each + " (" +
                   std::string(m.name) + "), more than " + std::to_string(rt::max_samples_per_cpu) +
                   " per CPU: lower --seconds or raise " + std::string(m.flag);
    }
    return {};
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
        const std::size_t samples = rt::samples_in(o.seconds, o.quantum_us);  // >= 1: check_plan
        out.push_back(rt::summarize_fwq(rt::run_fwq(units, samples), cpu));
    }
    if (o.method != "fwq") {
        const std::size_t slices = rt::samples_in(o.seconds, o.slice_us);
        out.push_back(rt::summarize_ftq(rt::run_ftq(o.slice_us, slices), o.slice_us, cpu));
    }
    return out;
}

void print_json(const std::vector<rt::noise_summary>& all, const noise_options& o, std::ostream& out) {
    out << "{";
    if (o.trace) out << "\"format\": \"aloe-noise-trace/1\", ";
    out << "\"tool\": \"aloe noise\", \"mode\": " << rt::json_quote(o.one_at_a_time ? "one-at-a-time" : "all-cpus-at-once")
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
            << ", \"event_max_us\": " << rt::json_number(s.event_max_us)
            << ", \"measured_s\": " << rt::json_number(s.measured_s);
        if (o.trace) {
            out << ", \"events_us\": [";
            for (std::size_t e = 0; e < s.event_list.size(); ++e)
                out << (e ? ", [" : "[") << rt::json_number(s.event_list[e].start_us) << ", "
                    << rt::json_number(s.event_list[e].length_us) << "]";
            out << "]";
        }
        out << "}";
    }
    out << "\n]}\n";
}

void print_text(const std::vector<rt::noise_summary>& all, const noise_options& o, std::ostream& out) {
    out << "machine noise, " << decimal(o.quantum_us) << " us quanta, " << decimal(o.seconds) << " s per method and CPU, "
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
    std::vector<std::string> given;  // each option once: a repeat is a mistake, not "the last wins"
    for (std::size_t i = 0; i < args.size(); ++i) {
        // `--flag value` or `--flag=value`, as `aloe run` takes them.
        const std::size_t eq = args[i].starts_with("--") ? args[i].find('=') : std::string_view::npos;
        const std::string_view a = args[i].substr(0, eq);
        const std::optional<std::string_view> inline_value =
            eq == std::string_view::npos ? std::nullopt : std::optional(args[i].substr(eq + 1));
        const auto value = [&]() -> std::optional<std::string_view> {
            if (inline_value) return inline_value;
            if (i + 1 >= args.size()) return std::nullopt;
            return args[++i];
        };
        // A number flag's value, checked against [lo, hi]; the message when it is not one.
        std::string_view seen;
        const auto number = [&](double lo, double hi, std::string_view range, double& out) -> std::string {
            const std::optional<std::string_view> v = value();
            if (!v) return std::string(a) + " needs a value";
            seen = *v;
            const std::string shown = std::string(a) + " '" + rt::printable(*v) + "'";
            switch (parse_number(*v, lo, hi, out)) {
            case number_check::ok: return {};
            case number_check::not_a_number: return shown + " is not a number";
            case number_check::out_of_range: return shown + " is not in " + std::string(range);
            }
            return shown;
        };
        const bool known = a == "--json" || a == "--trace" || a == "--quick" || a == "--one-at-a-time" || a == "--seconds" ||
                           a == "--quantum-us" || a == "--slice-us" || a == "--method";
        if (known) {
            if (std::find(given.begin(), given.end(), a) != given.end())
                return usage_error("noise: " + std::string(a) + " is given twice", "noise");
            given.emplace_back(a);
            const bool takes_value = a == "--seconds" || a == "--quantum-us" || a == "--slice-us" || a == "--method";
            if (inline_value && !takes_value)
                return usage_error("noise: " + std::string(a) + " takes no value", "noise");
        }
        std::string bad;
        if (a == "--help" || a == "-h") {
            print_help();
            return exit_ok;
        } else if (a == "--json") {
            o.json = true;
        } else if (a == "--trace") {
            o.trace = true;
        } else if (a == "--quick") {
            o.seconds = 0.5;
        } else if (a == "--one-at-a-time") {
            o.one_at_a_time = true;
        } else if (a == "--seconds") {
            // (0, 600]: from_chars gives no open bound, so 0 is refused by hand below.
            bad = number(0, 600, "(0, 600]", o.seconds);
            if (bad.empty() && !(o.seconds > 0)) bad = "--seconds '" + rt::printable(seen) + "' is not in (0, 600]";
        } else if (a == "--quantum-us") {
            bad = number(1, 1e6, "[1, 1000000]", o.quantum_us);
        } else if (a == "--slice-us") {
            bad = number(10, 1e6, "[10, 1000000]", o.slice_us);
        } else if (a == "--method") {
            const std::optional<std::string_view> v = value();
            if (!v) return usage_error("noise: --method needs a value", "noise");
            std::string method(*v);
            for (char& c : method) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            if (method != "fwq" && method != "ftq" && method != "both")
                return usage_error("noise: --method '" + rt::printable(*v) + "': expected fwq, ftq or both", "noise");
            o.method = method;
        } else {
            return usage_error("noise: unknown option '" + rt::printable(a) + "'", "noise");
        }
        if (!bad.empty()) return usage_error("noise: " + bad, "noise");
    }
    const auto has = [&](std::string_view flag) { return std::find(given.begin(), given.end(), flag) != given.end(); };
    if (o.trace && !o.json)
        return usage_error("noise: --trace adds the events to the JSON: give it with --json", "noise");
    if (has("--quick") && has("--seconds"))
        return usage_error("noise: --quick and --seconds both set the time per method; give one", "noise");
    if (const std::string bad = check_plan(o); !bad.empty()) return usage_error("noise: " + bad, "noise");
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

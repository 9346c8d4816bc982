#include "sim/lending_policy.hpp"
#include "sim/report_text.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <stdexcept>

namespace aloe::sim {
namespace {


bool parse_number(std::string_view t, double lo, double hi, double& out) {
    double x = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), x);
    if (t.empty() || ec != std::errc() || end != t.data() + t.size() || !std::isfinite(x) || x < lo || x > hi)
        return false;
    out = x;
    return true;
}


std::string kind_name(lending_policy::kind k) {
    switch (k) {
        case lending_policy::kind::off: return "off";
        case lending_policy::kind::lewi: return "lewi";
        case lending_policy::kind::reactive: return "reactive";
        case lending_policy::kind::predictive: return "predictive";
    }
    return "?";
}

void apply_key(lending_policy& p, std::string_view word) {
    const std::size_t eq = word.find('=');
    const std::string_view key = word.substr(0, eq), value = word.substr(eq + 1);
    std::string shown = "'";
    shown.append(word).append("'");
    if (p.type == lending_policy::kind::lewi && key == "mpi") {
        if (value != "busy" && value != "yield") throw std::invalid_argument(shown + ": mpi is busy or yield");
        p.busy_mpi = value == "busy";
    } else if (p.type == lending_policy::kind::predictive && key == "sizing") {
        using mode = lending_policy::sizing_mode;
        if (value == "on") p.sizing = mode::standing;
        else if (value == "renew") p.sizing = mode::renewed;
        else if (value == "off") p.sizing = mode::off;
        else throw std::invalid_argument(shown + ": sizing is on, renew or off");
    } else if (p.type == lending_policy::kind::predictive && key == "ask") {
        if (value != "critical" && value != "all") throw std::invalid_argument(shown + ": ask is critical or all");
        p.ask_critical = value == "critical";
    } else if (p.type == lending_policy::kind::predictive && key == "guard") {
        if (!parse_number(value, 0, 10, p.guard))
            throw std::invalid_argument(shown + ": guard is a fraction in [0, 10]");
    } else {
        throw std::invalid_argument(shown + " does not apply to " + kind_name(p.type) +
                                    " (lewi takes mpi=busy|yield; predictive takes sizing=on|renew|off, guard=F, "
                                    "ask=critical|all)");
    }
}

}  // namespace

std::string lending_policy::to_string() const {
    switch (type) {
        case kind::lewi: return busy_mpi ? "lewi,mpi=busy" : "lewi";
        case kind::predictive: {
            std::string s = "predictive";
            if (sizing == sizing_mode::off) s += ",sizing=off";
            if (sizing == sizing_mode::renewed) s += ",sizing=renew";
            if (guard != lending_policy{}.guard) s += ",guard=" + number_text(guard);
            if (ask_critical) s += ",ask=critical";
            return s;
        }
        default: return kind_name(type);
    }
}

std::vector<lending_policy> parse_lending_policies(std::string_view text) {
    std::vector<lending_policy> out;
    for (std::string_view group : split(text, ';')) {
        for (std::string_view word : split(group, ',')) {
            if (word.empty()) throw std::invalid_argument("an empty entry");
            if (word.find('=') != std::string_view::npos) {
                if (out.empty()) throw std::invalid_argument("'" + std::string(word) + "' names no policy before it");
                apply_key(out.back(), word);
                continue;
            }
            lending_policy p;
            if (word == "off") p.type = lending_policy::kind::off;
            else if (word == "lewi") p.type = lending_policy::kind::lewi;
            else if (word == "reactive") p.type = lending_policy::kind::reactive;
            else if (word == "predictive") p.type = lending_policy::kind::predictive;
            else
                throw std::invalid_argument("'" + std::string(word) + "' is not a policy (off, lewi, reactive, predictive)");
            out.push_back(p);
        }
    }
    return out;
}

void parse_lending_latencies(std::string_view text, lending_latencies& out) {
    if (text == "zero") {  // least-slack is a threshold of the prediction, not a latency: it stays
        out.grace_s = out.poll_s = out.daemon_s = out.move_s = out.lewi_s = out.slice_s = out.nap_max_s = 0;
        return;
    }
    for (std::string_view word : split(text, ',')) {
        const std::size_t eq = word.find('=');
        if (eq == std::string_view::npos)
            throw std::invalid_argument("'" + std::string(word) +
                                        "': expected key=microseconds (grace, least-slack, poll, daemon, move, lewi, "
                                        "slice) or zero");
        const std::string_view key = word.substr(0, eq), value = word.substr(eq + 1);
        double us = 0;
        if (key == "slice" && value == "auto") {
            out.slice_s = -1;
            continue;
        }
        if (!parse_number(value, 0, 1e7, us))
            throw std::invalid_argument("'" + std::string(word) + "': " + std::string(key) +
                                        " is microseconds in [0, 10000000]");
        const double s = us * 1e-6;
        if (key == "grace") out.grace_s = s;
        else if (key == "least-slack") out.least_slack_s = s;
        else if (key == "poll") out.poll_s = s;
        else if (key == "daemon") out.daemon_s = s;
        else if (key == "move") out.move_s = s;
        else if (key == "lewi") out.lewi_s = s;
        else if (key == "slice") out.slice_s = s;
        else
            throw std::invalid_argument("'" + std::string(key) +
                                        "' is not a latency (grace, least-slack, poll, daemon, move, lewi, slice)");
    }
}

double busy_slice_s(const lending_latencies& l, int cores) noexcept {
    if (l.slice_s >= 0) return l.slice_s;
    // sysctl_sched_base_slice (0.75 ms) scaled as the kernel scales it by default
    // (SCHED_TUNABLESCALING_LOG): 1 + ilog2 of the CPUs, counted up to 8.
    const unsigned counted = static_cast<unsigned>(std::clamp(cores, 1, 8));
    return 0.75e-3 * (1 + (std::bit_width(counted) - 1));
}

}  // namespace aloe::sim

#include "sim/calibration.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace aloe::sim {
namespace {

using json = nlohmann::json;

[[noreturn]] void fail(const std::string& what) { throw std::invalid_argument(what); }

json parse(const std::string& text, const char* what) {
    try {
        return json::parse(text);
    } catch (const json::exception& e) {
        fail(std::string(what) + ": not JSON: " + e.what());
    }
}

// A string field, or "" (json::value with a string default trips GCC 12's -Wnull-dereference).
std::string text_at(const json& j, const char* key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get_ref<const std::string&>() : std::string();
}

double number_at(const json& j, const char* key, const std::string& where) {
    if (!j.contains(key) || !j.at(key).is_number()) fail(where + ": no number '" + key + "'");
    return j.at(key).get<double>();
}

// One CSV line split at commas outside quotes.
std::vector<std::string> csv_fields(const std::string& line) {
    std::vector<std::string> out(1);
    bool quoted = false;
    for (char c : line) {
        if (c == '"') quoted = !quoted;
        else if (c == ',' && !quoted) out.emplace_back();
        else if (c != '\r') out.back() += c;
    }
    return out;
}

struct overhead_rows {
    std::vector<std::string> header;
    std::vector<std::vector<std::string>> rows;
    std::optional<double> per_unit_s(const std::string& variant, const std::string& test) const {
        const auto col = [&](const char* name) {
            return static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin());
        };
        const std::size_t v = col("variant"), t = col("test"), u = col("per_unit_us");
        if (u >= header.size() || v >= header.size() || t >= header.size()) return std::nullopt;
        for (const auto& r : rows)
            if (r.size() > u && r[v] == variant && r[t] == test) {
                try {
                    return std::stod(r[u]) * 1e-6;
                } catch (const std::exception&) {
                    return std::nullopt;
                }
            }
        return std::nullopt;
    }
};

}  // namespace

machine_profile calibrate(const calibration_inputs& in, std::vector<std::string>& notes) {
    machine_profile p;
    p.name = in.name.empty() ? "calibrated machine" : in.name;
    p.made_by = in.made_by;
    json measured = json::object();

    // Noise: the FWQ entries of aloe noise --json.
    const json noise = parse(in.noise_json, "--noise");
    if (!noise.contains("cpus") || !noise.at("cpus").is_array()) fail("--noise: no \"cpus\" array: is it `aloe noise --json` output?");
    std::vector<const json*> fwq;
    for (const json& c : noise.at("cpus"))
        if (c.is_object() && text_at(c, "method") == "fwq") fwq.push_back(&c);
    if (fwq.empty()) fail("--noise: no FWQ entry (run aloe noise with --method fwq or both)");
    double rate = 0, mean_len = 0, events = 0;
    bool traced = true;
    for (const json* c : fwq) {
        const double n = number_at(*c, "events", "--noise");
        rate += number_at(*c, "events_per_s", "--noise");
        mean_len += n * number_at(*c, "event_mean_us", "--noise") * 1e-6;
        events += n;
        traced = traced && c->contains("events_us") && c->contains("measured_s");
    }
    rate /= static_cast<double>(fwq.size());
    mean_len = events > 0 ? mean_len / events : 0;
    // The share of a core's time the modelled events take: what replaying (or drawing) them
    // adds on top of the work.
    double noise_share = rate * mean_len;
    p.cores = in.cores.value_or(static_cast<int>(fwq.size()));
    if (traced && in.replay_trace) {
        noise_source t;
        t.type = noise_source::kind::trace;
        double traced_s = 0, measured_total = 0;
        for (const json* c : fwq) {
            noise_source::cpu_trace ct;
            ct.measured_s = number_at(*c, "measured_s", "--noise");
            for (const json& e : c->at("events_us")) {
                if (!e.is_array() || e.size() != 2) fail("--noise: events_us holds something that is not [start, length]");
                ct.events_us.emplace_back(e[0].get<double>(), e[1].get<double>());
                traced_s += e[1].get<double>() * 1e-6;
            }
            measured_total += ct.measured_s;
            t.traces.push_back(std::move(ct));
        }
        if (measured_total > 0) noise_share = traced_s / measured_total;
        p.noise.push_back(std::move(t));
        notes.push_back("noise: the measured events are replayed (each simulated core from a drawn point of a measured CPU's trace)");
    } else if (rate > 0 && mean_len > 0) {
        noise_source s;
        s.type = noise_source::kind::poisson;
        s.rate_hz = rate;
        s.length.shape = length_distribution::kind::exponential;
        s.length.mean_s = mean_len;
        p.noise.push_back(s);
        notes.push_back(std::string("noise: Poisson events at the measured rate with exponential lengths of the measured mean") +
                        (traced ? "" : " (the file has no events: aloe noise --json --trace would let them be replayed)"));
    } else {
        notes.push_back("noise: no events were measured: a quiet profile");
    }
    measured["noise"] = {{"fwq_cpus", fwq.size()}, {"events_per_s", rate}, {"event_mean_s", mean_len},
                         {"replayed", traced && in.replay_trace}, {"share_of_time", noise_share}};

    // Scheduling costs.
    p.dequeue_s = 8e-9;
    p.steal_s = 2e-8;
    p.fork_join_s = 4e-7;
    if (in.overhead_csv) {
        overhead_rows o;
        std::istringstream lines(*in.overhead_csv);
        std::string line;
        if (!std::getline(lines, line)) fail("--overhead: empty file");
        o.header = csv_fields(line);
        while (std::getline(lines, line))
            if (!line.empty()) o.rows.push_back(csv_fields(line));
        const auto q = o.per_unit_s("aloe dynamic,chunk=1", "chunk");
        if (!q) fail("--overhead: no per_unit_us for 'aloe dynamic,chunk=1' in the chunk test: is it the overhead benchmark's overhead.csv?");
        p.dequeue_s = std::max(0.0, *q);
        const auto mutex = o.per_unit_s("aloe staggered,fs=0,chunk=1,queue=mutex", "chunk");
        p.steal_s = mutex ? std::max(p.dequeue_s, *mutex) : 2 * p.dequeue_s;
        if (!mutex) notes.push_back("overhead: no staggered mutex row: a steal costs 2 q (a guess)");
        if (const auto fj = o.per_unit_s("aloe static", "fork")) p.fork_join_s = std::max(0.0, *fj);
        measured["overhead"] = {{"dequeue_s", p.dequeue_s}, {"steal_s", p.steal_s}, {"fork_join_s", p.fork_join_s}};
    } else {
        notes.push_back("overhead: no file: q = 8 ns, steal 20 ns, fork-join 0.4 us (the 2-core VM's, MACHINE-NOTES.md)");
    }

    // The loop: its iterations and their costs.
    p.iterations = in.iterations.value_or(0);
    std::vector<double> recorded;
    if (in.costs_json) {
        const json c = parse(*in.costs_json, "--costs");
        if (!c.contains("loops") || !c.at("loops").is_array() || c.at("loops").empty())
            fail("--costs: no \"loops\": is it a workload's --record-costs file?");
        const json* pick = nullptr;
        for (const json& l : c.at("loops")) {
            if (!l.contains("cost_s") || !l.at("cost_s").is_array()) continue;
            if (in.site ? text_at(l, "site") == *in.site : (!pick || l.at("cost_s").size() > pick->at("cost_s").size())) pick = &l;
        }
        if (!pick) fail("--costs: no loop" + (in.site ? " named '" + *in.site + "'" : std::string()) + " with cost_s");
        for (const json& x : pick->at("cost_s")) recorded.push_back(x.get<double>());
        if (!in.iterations) p.iterations = static_cast<std::int64_t>(recorded.size());
        measured["costs"] = {{"site", text_at(*pick, "site")}, {"iterations", recorded.size()}};
    }
    if (p.iterations < 1) fail("the loop's iteration count is unknown: give --costs (a --record-costs file) or --iterations");
    double mean_cost = 0;
    if (!recorded.empty()) {
        double sum = 0, sq = 0;
        for (double x : recorded) sum += x, sq += x * x;
        mean_cost = sum / static_cast<double>(recorded.size());
        const double var = std::max(0.0, sq / static_cast<double>(recorded.size()) - mean_cost * mean_cost);
        const double cv = mean_cost > 0 ? std::sqrt(var) / mean_cost : 0;
        if (cv > 0.05) {
            p.costs.shape = iteration_costs_spec::kind::replay;
            p.costs.replay_s = recorded;
        }
        measured["costs"]["cv"] = cv;
    }
    p.iteration_s = mean_cost > 0 ? mean_cost : 1e-6;
    if (in.workload_json) {
        const json w = parse(*in.workload_json, "--workload");
        const json& rec = w.contains("record") ? w.at("record") : w;  // a harness runs.jsonl line or the record itself
        if (!rec.contains("step_s") || !rec.at("step_s").is_array() || rec.at("step_s").empty())
            fail("--workload: no step_s: is it a workload's --json record?");
        std::vector<double> steps;
        for (const json& x : rec.at("step_s")) steps.push_back(x.get<double>());
        std::sort(steps.begin(), steps.end());
        const double quiet = steps[static_cast<std::size_t>(0.1 * static_cast<double>(steps.size() - 1))];
        double mean = 0;
        for (double x : steps) mean += x;
        mean /= static_cast<double>(steps.size());
        const double threads = rec.contains("threads") && rec.at("threads").is_number() ? rec.at("threads").get<double>() : 1.0;
        const double f = std::clamp(noise_share, 0.0, 0.5);
        const bool by_mean = in.t1_from == calibration_inputs::t1_rule::mean;
        p.iteration_s = (by_mean ? mean * (1 - f) : quiet) * threads / static_cast<double>(p.iterations);
        measured["workload"] = {{"workload", text_at(rec, "workload")}, {"schedule", text_at(rec, "schedule")},
                                {"threads", threads}, {"mean_step_s", mean}, {"quiet_step_s", quiet},
                                {"noise_share", f}, {"t1_from", by_mean ? "mean" : "quiet"}, {"iteration_s", p.iteration_s}};
    } else if (recorded.empty()) {
        notes.push_back("loop: no workload and no costs: 1 us per iteration (a placeholder)");
    }
    p.collective = machine_profile::collective_kind::recursive_doubling;
    p.alpha_s = in.alpha_s;
    p.beta_s_per_byte = in.beta_s_per_byte;
    measured["notes"] = notes;
    p.measured_json = measured.dump();
    validate(p);
    return p;
}

}  // namespace aloe::sim

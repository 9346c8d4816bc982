#include "sim/machine_profile.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>

namespace aloe::sim {
namespace {

using json = nlohmann::json;
constexpr const char* profile_format = "aloe-sim-profile/1";
constexpr double inf = std::numeric_limits<double>::infinity();

[[noreturn]] void fail(const std::string& path, const std::string& what) {
    throw std::invalid_argument("profile: " + path + ": " + what);
}

// One JSON object being read: each key may be read once; at the end, any key nobody read
// is an error (a misspelt field must not fall back to its default).
class object_reader {
public:
    object_reader(const json& j, std::string path) : j_(j), path_(std::move(path)) {
        if (!j_.is_object()) fail(path_.empty() ? "(top)" : path_, "expected an object");
    }
    bool has(const char* key) const { return j_.contains(key); }
    const json& at(const char* key) {
        used_.insert(key);
        if (!j_.contains(key)) fail(sub(key), "missing");
        return j_.at(key);
    }
    double number(const char* key, double lo, double hi) {
        const json& v = at(key);
        if (!v.is_number()) fail(sub(key), "expected a number");
        const double x = v.get<double>();
        if (!std::isfinite(x) || x < lo || x > hi)
            fail(sub(key), "value " + v.dump() + " is outside [" + num(lo) + ", " + num(hi) + "]");
        return x;
    }
    double number_or(const char* key, double fallback, double lo, double hi) {
        return has(key) ? number(key, lo, hi) : fallback;
    }
    std::int64_t integer(const char* key, std::int64_t lo, std::int64_t hi) {
        const json& v = at(key);
        if (!v.is_number_integer()) fail(sub(key), "expected an integer");
        const std::int64_t x = v.get<std::int64_t>();
        if (x < lo || x > hi) fail(sub(key), "value " + v.dump() + " is outside [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
        return x;
    }
    std::int64_t integer_or(const char* key, std::int64_t fallback, std::int64_t lo, std::int64_t hi) {
        return has(key) ? integer(key, lo, hi) : fallback;
    }
    std::string text(const char* key) {
        const json& v = at(key);
        if (!v.is_string()) fail(sub(key), "expected a string");
        return v.get<std::string>();
    }
    std::string text_or(const char* key, std::string fallback) { return has(key) ? text(key) : fallback; }
    std::string sub(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
    void finish() const {
        for (auto it = j_.begin(); it != j_.end(); ++it)
            if (!used_.count(it.key())) fail(sub(it.key()), "unknown field");
    }

private:
    static std::string num(double x) {
        if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
        std::ostringstream s;
        s << x;
        return s.str();
    }
    const json& j_;
    std::string path_;
    std::set<std::string> used_;
};

template <class E, std::size_t N>
E choose(const std::string& path, const std::string& value, const std::pair<const char*, E> (&names)[N]) {
    std::string all;
    for (const auto& [name, e] : names) {
        if (value == name) return e;
        all += (all.empty() ? "" : ", ") + std::string(name);
    }
    fail(path, "'" + value + "' is not one of " + all);
}

constexpr std::pair<const char*, length_distribution::kind> length_names[] = {
    {"fixed", length_distribution::kind::fixed}, {"exponential", length_distribution::kind::exponential},
    {"lognormal", length_distribution::kind::lognormal}, {"bimodal", length_distribution::kind::bimodal},
    {"pareto", length_distribution::kind::pareto}};
constexpr std::pair<const char*, noise_source::kind> noise_names[] = {
    {"poisson", noise_source::kind::poisson}, {"periodic", noise_source::kind::periodic},
    {"per-step", noise_source::kind::per_step}, {"slow-core", noise_source::kind::slow_core},
    {"slow-node", noise_source::kind::slow_node}, {"trace", noise_source::kind::trace}};
constexpr std::pair<const char*, iteration_costs_spec::kind> cost_names[] = {
    {"uniform", iteration_costs_spec::kind::uniform}, {"ramp", iteration_costs_spec::kind::ramp},
    {"heavy-tail", iteration_costs_spec::kind::heavy_tail}, {"replay", iteration_costs_spec::kind::replay}};
constexpr std::pair<const char*, machine_profile::collective_kind> collective_names[] = {
    {"none", machine_profile::collective_kind::none},
    {"recursive-doubling", machine_profile::collective_kind::recursive_doubling},
    {"binomial", machine_profile::collective_kind::binomial}};

template <class E, std::size_t N>
const char* name_in(E e, const std::pair<const char*, E> (&names)[N]) noexcept {
    for (const auto& [name, k] : names)
        if (k == e) return name;
    return "?";
}

length_distribution read_length(const json& j, const std::string& path) {
    object_reader r(j, path);
    length_distribution d;
    d.shape = choose(r.sub("dist"), r.text("dist"), length_names);
    switch (d.shape) {
        case length_distribution::kind::fixed:
        case length_distribution::kind::exponential: d.mean_s = r.number("mean_s", 0, 1e3); break;
        case length_distribution::kind::lognormal:
            d.mean_s = r.number("mean_s", 0, 1e3);
            d.sigma = r.number("sigma", 0, 10);
            break;
        case length_distribution::kind::bimodal:
            d.short_s = r.number("short_s", 0, 1e3);
            d.long_s = r.number("long_s", 0, 1e3);
            d.long_fraction = r.number("long_fraction", 0, 1);
            break;
        case length_distribution::kind::pareto:
            d.mean_s = r.number("mean_s", 0, 1e3);
            d.alpha = r.number("alpha", 1.01, 100);
            break;
    }
    r.finish();
    return d;
}

json write_length(const length_distribution& d) {
    json j{{"dist", name_in(d.shape, length_names)}};
    switch (d.shape) {
        case length_distribution::kind::fixed:
        case length_distribution::kind::exponential: j["mean_s"] = d.mean_s; break;
        case length_distribution::kind::lognormal: j["mean_s"] = d.mean_s; j["sigma"] = d.sigma; break;
        case length_distribution::kind::bimodal:
            j["short_s"] = d.short_s; j["long_s"] = d.long_s; j["long_fraction"] = d.long_fraction;
            break;
        case length_distribution::kind::pareto: j["mean_s"] = d.mean_s; j["alpha"] = d.alpha; break;
    }
    return j;
}

std::vector<int> read_cores(object_reader& r) {
    std::vector<int> cores;
    if (!r.has("cores")) return cores;
    const json& v = r.at("cores");
    if (v.is_string() && v.get<std::string>() == "all") return cores;
    if (!v.is_array() || v.empty()) fail(r.sub("cores"), "expected \"all\" or a non-empty array of core indices");
    for (const json& c : v) {
        if (!c.is_number_integer() || c.get<std::int64_t>() < 0 || c.get<std::int64_t>() > 65535)
            fail(r.sub("cores"), "expected core indices in [0, 65535], got " + c.dump());
        cores.push_back(c.get<int>());
    }
    return cores;
}

// A trace: the CPUs of `aloe noise --json --trace` (or any object of that shape: format
// "aloe-noise-trace/1"), each with measured_s and events_us [[start, length], ...].
std::vector<noise_source::cpu_trace> read_traces(const json& j, const std::string& path) {
    if (!j.is_object() || !j.contains("cpus") || !j.at("cpus").is_array() || j.at("cpus").empty())
        fail(path, "a trace needs \"cpus\": a non-empty array (aloe noise --json --trace)");
    std::vector<noise_source::cpu_trace> out;
    std::size_t index = 0;
    for (const json& cpu : j.at("cpus")) {
        const std::string at = path + ".cpus[" + std::to_string(index++) + "]";
        if (!cpu.is_object()) fail(at, "expected an object");
        // aloe noise lists each CPU once per method; keep the FWQ entries (events of the
        // work itself) and anything without a method (a generated trace).
        if (cpu.contains("method") && cpu.at("method") != "fwq") continue;
        if (!cpu.contains("events_us") || !cpu.at("events_us").is_array())
            fail(at, "no events_us: was it written with aloe noise --json --trace?");
        if (!cpu.contains("measured_s") || !cpu.at("measured_s").is_number() || !(cpu.at("measured_s").get<double>() > 0))
            fail(at + ".measured_s", "expected a positive number of seconds");
        noise_source::cpu_trace t;
        t.measured_s = cpu.at("measured_s").get<double>();
        double last = -1;
        for (const json& e : cpu.at("events_us")) {
            if (!e.is_array() || e.size() != 2 || !e[0].is_number() || !e[1].is_number())
                fail(at + ".events_us", "expected [start_us, length_us] pairs, got " + e.dump());
            const double start = e[0].get<double>(), length = e[1].get<double>();
            if (!(start >= 0) || !(length >= 0) || !std::isfinite(start + length))
                fail(at + ".events_us", "negative or non-finite event " + e.dump());
            if (start < last) fail(at + ".events_us", "events are not sorted by start");
            if (start * 1e-6 >= t.measured_s) fail(at + ".events_us", "an event starts after measured_s");
            last = start;
            t.events_us.emplace_back(start, length);
        }
        out.push_back(std::move(t));
    }
    if (out.empty()) fail(path, "no FWQ CPU in the trace");
    return out;
}

noise_source read_noise(const json& j, const std::string& path, const std::string& base_dir) {
    object_reader r(j, path);
    noise_source n;
    n.type = choose(r.sub("kind"), r.text("kind"), noise_names);
    switch (n.type) {
        case noise_source::kind::poisson:
            n.rate_hz = r.number("rate_hz", 0, 1e7);
            n.length = read_length(r.at("length"), r.sub("length"));
            n.cores = read_cores(r);
            break;
        case noise_source::kind::periodic:
            n.period_s = r.number("period_s", 1e-9, 1e6);
            n.length = read_length(r.at("length"), r.sub("length"));
            n.cores = read_cores(r);
            {
                const std::string phase = r.text_or("phase", "random");
                if (phase != "random" && phase != "aligned") fail(r.sub("phase"), "'" + phase + "' is not random or aligned");
                n.aligned = phase == "aligned";
            }
            break;
        case noise_source::kind::per_step:
            n.probability = r.number("probability", 0, 1);
            n.length = read_length(r.at("length"), r.sub("length"));
            n.delay_s = r.number_or("delay_s", 0, 0, 1e3);
            break;
        case noise_source::kind::slow_core:
            n.core = static_cast<int>(r.integer("core", 0, 65535));
            n.factor = r.number("factor", 1, 1e3);
            break;
        case noise_source::kind::slow_node:
            n.fraction = r.number("fraction", 0, 1);
            n.factor = r.number("factor", 1, 1e3);
            break;
        case noise_source::kind::trace: {
            if (r.has("file") == r.has("cpus")) fail(path, "a trace source needs exactly one of \"file\" and \"cpus\"");
            if (r.has("file")) {
                std::string file = r.text("file");
                if (!file.empty() && file[0] != '/') file = base_dir + "/" + file;
                std::ifstream in(file);
                if (!in) fail(r.sub("file"), "cannot read '" + file + "'");
                json t;
                try {
                    t = json::parse(in);
                } catch (const json::exception& e) {
                    fail(r.sub("file"), "'" + file + "' is not JSON: " + e.what());
                }
                n.traces = read_traces(t, r.sub("file"));
            } else {
                json wrapper{{"cpus", r.at("cpus")}};
                n.traces = read_traces(wrapper, path);
            }
            const std::string offsets = r.text_or("offsets", "random");
            if (offsets != "random" && offsets != "zero") fail(r.sub("offsets"), "'" + offsets + "' is not random or zero");
            n.trace_offsets = offsets == "random";
            break;
        }
    }
    r.finish();
    return n;
}

json write_noise(const noise_source& n) {
    json j{{"kind", name_of(n.type)}};
    const auto cores = [&] { return n.cores.empty() ? json("all") : json(n.cores); };
    switch (n.type) {
        case noise_source::kind::poisson:
            j["rate_hz"] = n.rate_hz; j["length"] = write_length(n.length); j["cores"] = cores();
            break;
        case noise_source::kind::periodic:
            j["period_s"] = n.period_s; j["length"] = write_length(n.length); j["cores"] = cores();
            j["phase"] = n.aligned ? "aligned" : "random";
            break;
        case noise_source::kind::per_step:
            j["probability"] = n.probability; j["length"] = write_length(n.length); j["delay_s"] = n.delay_s;
            break;
        case noise_source::kind::slow_core: j["core"] = n.core; j["factor"] = n.factor; break;
        case noise_source::kind::slow_node: j["fraction"] = n.fraction; j["factor"] = n.factor; break;
        case noise_source::kind::trace: {
            json cpus = json::array();
            int index = 0;
            for (const auto& t : n.traces) {
                json events = json::array();
                for (const auto& [s, l] : t.events_us) events.push_back({s, l});
                cpus.push_back({{"cpu", index++}, {"measured_s", t.measured_s}, {"events_us", events}});
            }
            j["cpus"] = cpus;
            j["offsets"] = n.trace_offsets ? "random" : "zero";
            break;
        }
    }
    return j;
}

}  // namespace

double length_distribution::mean() const noexcept {
    switch (shape) {
        case kind::bimodal: return (1 - long_fraction) * short_s + long_fraction * long_s;
        default: return mean_s;
    }
}

const char* name_of(noise_source::kind k) noexcept { return name_in(k, noise_names); }
const char* name_of(machine_profile::collective_kind k) noexcept { return name_in(k, collective_names); }

machine_profile parse_profile(const std::string& json_text, const std::string& base_dir) {
    json j;
    try {
        j = json::parse(json_text);
    } catch (const json::exception& e) {
        throw std::invalid_argument(std::string("profile: not JSON: ") + e.what());
    }
    object_reader r(j, "");
    const std::string format = r.text("format");
    if (format != profile_format) fail("format", "'" + format + "' is not " + profile_format);
    machine_profile p;
    p.name = r.text_or("name", "");
    p.made_by = r.text_or("made_by", "");
    p.cores = static_cast<int>(r.integer("cores", 1, 4096));
    {
        object_reader l(r.at("loop"), "loop");
        p.iterations = l.integer("iterations", 1, std::int64_t{1} << 40);
        p.iteration_s = l.number("iteration_s", 1e-12, 1e3);
        object_reader c(l.at("costs"), "loop.costs");
        p.costs.shape = choose(c.sub("kind"), c.text("kind"), cost_names);
        switch (p.costs.shape) {
            case iteration_costs_spec::kind::uniform: break;
            case iteration_costs_spec::kind::ramp: p.costs.ratio = c.number("ratio", 1e-6, 1e6); break;
            case iteration_costs_spec::kind::heavy_tail: p.costs.alpha = c.number("alpha", 1.01, 100); break;
            case iteration_costs_spec::kind::replay: {
                const json& v = c.at("cost_s");
                if (!v.is_array() || v.empty()) fail("loop.costs.cost_s", "expected a non-empty array of seconds");
                for (const json& x : v) {
                    if (!x.is_number() || !(x.get<double>() >= 0) || !std::isfinite(x.get<double>()))
                        fail("loop.costs.cost_s", "expected non-negative seconds, got " + x.dump());
                    p.costs.replay_s.push_back(x.get<double>());
                }
                break;
            }
        }
        c.finish();
        l.finish();
    }
    {
        object_reader o(r.at("overheads"), "overheads");
        p.dequeue_s = o.number("dequeue_s", 0, 1);
        p.dequeue_per_thread_s = o.number_or("dequeue_per_thread_s", 0, 0, 1);
        p.steal_s = o.number_or("steal_s", p.dequeue_s, 0, 1);
        p.fork_join_s = o.number_or("fork_join_s", 0, 0, 1);
        p.locality_penalty = o.number_or("locality_penalty", 0, 0, 100);
        o.finish();
    }
    {
        const json& v = r.at("noise");
        if (!v.is_array()) fail("noise", "expected an array of sources (empty: a quiet machine)");
        for (std::size_t i = 0; i < v.size(); ++i)
            p.noise.push_back(read_noise(v[i], "noise[" + std::to_string(i) + "]", base_dir));
    }
    {
        object_reader n(r.at("network"), "network");
        p.collective = choose(n.sub("collective"), n.text("collective"), collective_names);
        p.alpha_s = n.number("alpha_s", 0, 1);
        p.beta_s_per_byte = n.number("beta_s_per_byte", 0, 1);
        p.collective_bytes = n.integer_or("bytes", 8, 0, std::int64_t{1} << 40);
        p.collective_every = static_cast<int>(n.integer_or("every", 1, 1, 1 << 20));
        if (n.has("halo")) {
            object_reader h(n.at("halo"), "network.halo");
            p.halo_dims = static_cast<int>(h.integer("dims", 0, 3));
            p.halo_bytes = h.integer_or("bytes", 0, 0, std::int64_t{1} << 40);
            h.finish();
        }
        n.finish();
    }
    if (r.has("measured")) p.measured_json = r.at("measured").dump();
    r.finish();
    validate(p);
    return p;
}

void validate(const machine_profile& p) {
    for (std::size_t i = 0; i < p.noise.size(); ++i) {
        const noise_source& n = p.noise[i];
        const std::string at = "noise[" + std::to_string(i) + "]";
        for (int c : n.cores)
            if (c >= p.cores) fail(at + ".cores", "core " + std::to_string(c) + " is not below cores = " + std::to_string(p.cores));
        if (n.type == noise_source::kind::slow_core && n.core >= p.cores)
            fail(at + ".core", "core " + std::to_string(n.core) + " is not below cores = " + std::to_string(p.cores));
        if (n.type == noise_source::kind::periodic && n.length.mean() >= n.period_s)
            fail(at, "a daemon whose length is not below its period never lets the core run");
    }
}

machine_profile read_profile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::invalid_argument("profile '" + path + "': cannot be read");
    std::ostringstream text;
    text << in.rdbuf();
    const std::size_t slash = path.find_last_of('/');
    try {
        return parse_profile(text.str(), slash == std::string::npos ? "." : path.substr(0, slash));
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument("'" + path + "': " + e.what());
    }
}

std::string to_json(const machine_profile& p) {
    json costs{{"kind", name_in(p.costs.shape, cost_names)}};
    if (p.costs.shape == iteration_costs_spec::kind::ramp) costs["ratio"] = p.costs.ratio;
    if (p.costs.shape == iteration_costs_spec::kind::heavy_tail) costs["alpha"] = p.costs.alpha;
    if (p.costs.shape == iteration_costs_spec::kind::replay) costs["cost_s"] = p.costs.replay_s;
    json noise = json::array();
    for (const noise_source& n : p.noise) noise.push_back(write_noise(n));
    json network{{"collective", name_of(p.collective)}, {"alpha_s", p.alpha_s}, {"beta_s_per_byte", p.beta_s_per_byte},
                 {"bytes", p.collective_bytes}, {"every", p.collective_every}};
    if (p.halo_dims > 0) network["halo"] = {{"dims", p.halo_dims}, {"bytes", p.halo_bytes}};
    json j{{"format", profile_format},
           {"name", p.name},
           {"made_by", p.made_by},
           {"cores", p.cores},
           {"loop", {{"iterations", p.iterations}, {"iteration_s", p.iteration_s}, {"costs", costs}}},
           {"overheads",
            {{"dequeue_s", p.dequeue_s},
             {"dequeue_per_thread_s", p.dequeue_per_thread_s},
             {"steal_s", p.steal_s},
             {"fork_join_s", p.fork_join_s},
             {"locality_penalty", p.locality_penalty}}},
           {"noise", noise},
           {"network", network}};
    if (!p.measured_json.empty()) j["measured"] = json::parse(p.measured_json);
    // Long number arrays (a trace's events, replayed costs) one line each: indented, a
    // measured trace would take four lines per event.
    std::vector<std::string> compact;
    const auto fold = [&](json& array) {
        compact.push_back(array.dump());
        array = "@@compact" + std::to_string(compact.size() - 1) + "@@";
    };
    if (j["loop"]["costs"].contains("cost_s")) fold(j["loop"]["costs"]["cost_s"]);
    for (json& n : j["noise"])
        if (n.contains("cpus"))
            for (json& cpu : n["cpus"]) fold(cpu["events_us"]);
    std::string text = j.dump(2);
    for (std::size_t i = 0; i < compact.size(); ++i) {
        const std::string mark = "\"@@compact" + std::to_string(i) + "@@\"";
        text.replace(text.find(mark), mark.size(), compact[i]);
    }
    return text + "\n";
}

}  // namespace aloe::sim

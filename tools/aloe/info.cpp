// `aloe info`: what aloe sees on this machine and what it would do, without starting it.
//
// The team is computed from the configuration and the topology exactly as the runtime
// would size and place it, but no thread is started. Text goes to stdout; warnings (bad
// settings, missing hwloc) go to stderr, so `--json` output stays parseable.
#include "commands.hpp"
#include "daemon_status.hpp"

#include "coord/instruction_counter.hpp"

#include "runtime/config.hpp"
#include "runtime/cpu_list.hpp"
#include "runtime/json_text.hpp"
#include "runtime/machine_caps.hpp"
#include "runtime/printable_text.hpp"
#include "runtime/topology.hpp"

#include <aloe/version.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

namespace aloe::cli {
namespace {

namespace rt = aloe::runtime;

struct worker_place {
    int worker;
    int core;  // -1: left to the OS
    std::vector<int> cpus;
};

// Everything `aloe info` shows, gathered once and printed as text or JSON.
struct info_report {
    std::string version;
    const rt::topology& topo;
    const rt::config& cfg;
    int team_size;
    std::string team_size_source;
    bool oversubscribed;  // more threads than allowed cores (an explicit count)
    std::vector<worker_place> workers;
    std::vector<rt::capability> caps;
    std::vector<rt::setting_row> settings;
};

// Which measure programs here would take their efficiency from (docs/daemon.md), in one clause.
std::string efficiency_measures() {
    const coord::instruction_probe probe = coord::probe_instructions(*coord::kernel_counter_source());
    if (probe.available) return "efficiency from instruction counts (perf_event_open), serial samples as the baseline";
    return "efficiency from serial samples (region time, loop progress): instruction counts unavailable, " + probe.reason;
}

info_report gather() {
    const rt::config& cfg = rt::current_config();
    const rt::topology& topo = rt::topology::machine();
    info_report r{aloe::version(), topo, cfg, 0, {}, false, {}, rt::probe_machine(), rt::describe_settings(cfg)};
    // The MPI layer is a build-time choice (CMakeLists.txt, ALOE_WITH_MPI), not a probe.
#ifdef ALOE_MPI_BUILT_AGAINST
    r.caps.push_back({"libaloe-mpi", true, "built against " ALOE_MPI_BUILT_AGAINST, ""});
#else
    r.caps.push_back({"libaloe-mpi", false, "not built (no MPI for C when aloe was configured)",
                      "no MPI call measurement; scripts/install-deps.sh installs OpenMPI"});
#endif
    // The node daemon: whether one answers where this user's programs would look.
    if (cfg.daemon == rt::daemon_mode::off) {
        r.caps.push_back({"node daemon", false, "ALOE_DAEMON=off", "programs run with their own thread count"});
    } else {
        std::string problem;
        if (const auto d = query_daemon(cfg.daemon_socket, problem)) {
            r.caps.push_back({"node daemon", true,
                              "aloed at " + d->socket + " (pid " + std::to_string(d->daemon_pid) + "): " +
                                  std::to_string(d->node.cores) + " cores, policy " +
                                  std::string(coord::policy_name(d->node.policy)) + ", " +
                                  std::to_string(d->node.clients) + " clients; " + efficiency_measures(),
                              ""});
        } else {
            r.caps.push_back({"node daemon", false, problem + "; with one, " + efficiency_measures(),
                              "programs run with their own thread count (docs/daemon.md)"});
        }
    }
    r.team_size = rt::resolved_num_threads(cfg, topo.default_threads());
    r.team_size_source = rt::describe_num_threads_source(cfg, topo);
    r.oversubscribed = r.team_size > topo.cores();
    for (int w = 0; w < r.team_size; ++w) {
        const int core = topo.core_for_worker(w, r.team_size, cfg.proc_bind);
        r.workers.push_back({w, core, core >= 0 ? topo.cpus_of_core(core) : std::vector<int>{}});
    }
    return r;
}

std::string join(const std::vector<int>& v) {
    std::string out;
    for (int x : v) {
        if (!out.empty()) out += ',';
        out += std::to_string(x);
    }
    return out;
}

std::string indent(const std::string& lines) {
    std::string out;
    std::size_t start = 0;
    while (start < lines.size()) {
        const std::size_t end = lines.find('\n', start);
        const std::size_t stop = end == std::string::npos ? lines.size() : end;
        out += "  " + lines.substr(start, stop - start) + '\n';
        start = stop + 1;
    }
    return out;
}

void print_text(const info_report& r, std::ostream& out) {
    out << "aloe " << r.version << "\n\ntopology\n" << indent(r.topo.describe());

    out << "\nteam (computed from the settings; not started)\n"
        << "  size         " << r.team_size << " (" << r.team_size_source;
    if (r.oversubscribed) {
        out << "; oversubscribed: this process may use " << r.topo.cores()
            << (r.topo.cores() == 1 ? " core" : " cores");
    }
    out << ")\n"
        << "  wait policy  " << rt::to_string(r.cfg.wait_policy);
    if (r.cfg.wait_policy == rt::wait_policy_kind::hybrid) {
        out << ", spin " << r.cfg.spin_us << " us";
    }
    out << "\n  binding      " << rt::to_string(r.cfg.proc_bind) << '\n';
    for (const worker_place& w : r.workers) {
        out << "  worker " << w.worker << "  ";
        if (w.core < 0) out << "OS placement\n";
        else out << "core " << w.core << " (CPUs " << join(w.cpus) << ")\n";
    }

    out << "\ncapabilities\n";
    std::size_t width = 0;
    for (const rt::capability& c : r.caps) width = std::max(width, c.name.size());
    for (const rt::capability& c : r.caps) {
        out << "  " << c.name << std::string(width - c.name.size() + 2, ' ')
            << (c.available ? "yes  " : "no   ") << c.detail;
        if (!c.available) out << "; using " << c.fallback;
        out << '\n';
    }

    out << "\nsettings\n" << rt::format_settings(r.cfg);
}

std::string quote(std::string_view s) { return rt::json_quote(s); }

const char* boolean(bool b) { return b ? "true" : "false"; }

void print_json(const info_report& r, std::ostream& out) {
    out << "{\n  \"version\": " << quote(r.version) << ",\n";

    const rt::hardware_counts machine = r.topo.whole_machine();
    out << "  \"topology\": {\"from_hwloc\": " << boolean(r.topo.from_hwloc())
        << ",\n    \"machine\": {\"packages\": " << machine.packages << ", \"numa_nodes\": " << machine.numa_nodes
        << ", \"cores\": " << machine.cores << ", \"processing_units\": " << machine.processing_units << "}"
        << ",\n    \"allowed\": {\"packages\": " << r.topo.packages() << ", \"numa_nodes\": " << r.topo.numa_nodes()
        << ", \"cores\": " << r.topo.cores() << ", \"processing_units\": " << r.topo.processing_units()
        << ", \"cpus\": " << quote(rt::format_cpu_list(r.topo.allowed_cpus())) << ", \"cpu_ids\": ["
        << join(r.topo.allowed_cpus()) << "], \"limited_by\": [";
    for (std::size_t i = 0; i < r.topo.limited_by().size(); ++i) out << (i == 0 ? "" : ", ") << quote(r.topo.limited_by()[i]);
    out << "]},\n    \"cgroups\": {\"layout\": " << quote(rt::to_string(r.topo.cgroups())) << ", \"cpu_quota\": ";
    if (const std::optional<rt::cpu_quota>& q = r.topo.quota()) {
        out << "{\"cpus\": " << q->cpus_text() << ", \"quota_us\": " << q->quota_us << ", \"period_us\": "
            << q->period_us << ", \"file\": " << quote(q->file) << "}";
    } else {
        out << "null";
    }
    out << "},\n    \"description\": " << quote(r.topo.describe()) << "},\n";

    out << "  \"team\": {\"started\": false, \"size\": " << r.team_size
        << ", \"size_source\": " << quote(r.team_size_source)
        << ", \"oversubscribed\": " << boolean(r.oversubscribed)
        << ", \"wait_policy\": " << quote(rt::to_string(r.cfg.wait_policy))
        << ", \"spin_us\": " << r.cfg.spin_us
        << ", \"proc_bind\": " << quote(rt::to_string(r.cfg.proc_bind)) << ",\n    \"workers\": [";
    for (std::size_t i = 0; i < r.workers.size(); ++i) {
        const worker_place& w = r.workers[i];
        out << (i == 0 ? "\n" : ",\n") << "      {\"worker\": " << w.worker
            << ", \"core\": " << w.core << ", \"cpus\": [" << join(w.cpus) << "]}";
    }
    out << "\n    ]},\n";

    out << "  \"capabilities\": [";
    for (std::size_t i = 0; i < r.caps.size(); ++i) {
        const rt::capability& c = r.caps[i];
        out << (i == 0 ? "\n" : ",\n") << "    {\"name\": " << quote(c.name)
            << ", \"available\": " << boolean(c.available) << ", \"detail\": " << quote(c.detail)
            << ", \"fallback\": " << quote(c.fallback) << "}";
    }
    out << "\n  ],\n";

    out << "  \"settings\": [";
    for (std::size_t i = 0; i < r.settings.size(); ++i) {
        const rt::setting_row& s = r.settings[i];
        out << (i == 0 ? "\n" : ",\n") << "    {\"name\": " << quote(s.name)
            << ", \"value\": " << quote(s.value) << ", \"source\": " << quote(rt::to_string(s.source))
            << ", \"type\": " << quote(s.type) << ", \"default\": " << quote(s.fallback)
            << ", \"range\": " << quote(s.range) << ", \"help\": " << quote(s.help) << "}";
    }
    out << "\n  ]\n}\n";
}

void print_info_usage(std::ostream& out) {
    out << "usage: aloe info [--json | --settings-markdown]\n\n"
           "Shows the version, the topology (the whole machine, and the cores and CPUs this\n"
           "process may use after the affinity mask, the cgroup cpuset and the cgroup CPU\n"
           "quota), the team aloe would start (size and its source, wait policy, binding\n"
           "of each worker; no thread is started), the machine's optional\n"
           "capabilities with the fallback used for each missing one, and the effective\n"
           "settings with their sources.\n\n"
           "  --json               the same, as one JSON object\n"
           "  --settings-markdown  the settings table as Markdown (docs/configuration.md)\n"
           "  --help               this text\n";
}

}  // namespace

int info_command(arguments args) {
    bool json = false;
    bool markdown = false;
    for (std::string_view a : args) {
        if (a == "--json") json = true;
        else if (a == "--settings-markdown") markdown = true;
        else if (a == "--help" || a == "-h") {
            print_info_usage(std::cout);
            return exit_ok;
        } else if (a.starts_with('-')) {
            return usage_error("info: unknown option '" + rt::printable(a) + "'", "info");
        } else {
            return usage_error("info: unexpected argument '" + rt::printable(a) + "'", "info");
        }
    }
    if (json && markdown) {
        return usage_error("info: --json and --settings-markdown cannot be combined", "info");
    }
    if (markdown) {
        std::cout << rt::format_settings_markdown();
        return exit_ok;
    }
    const info_report r = gather();
    if (json) print_json(r, std::cout);
    else print_text(r, std::cout);
    std::cout.flush();
    return std::cout ? exit_ok : exit_failure;
}

}  // namespace aloe::cli

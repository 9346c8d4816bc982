// The machine's cores through hwloc, with a one-core-per-CPU fallback.
//
// hwloc restricts a loaded topology to the process's allowed cpuset by default (no
// HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED), so every count here is what this process may
// use: a job confined by cgroups or taskset sees only its own cores. A machine (or XML
// file) with no Core objects counts each hardware thread as a core.
//
// Reports: W201 when hwloc fails and the fallback is used; W202 when a bind fails; W203 a
// bind to a core out of range; W204 a bind without hwloc; I201 (info) what was found.
#include "runtime/topology.hpp"

#include "runtime/config.hpp"
#include "runtime/report.hpp"

#include <hwloc.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>

namespace aloe::runtime {
namespace {

std::string plural(int n, std::string_view one, std::string_view many) {
    return std::to_string(n) + " " + std::string(n == 1 ? one : many);
}

// The hwloc release aloe was built against (HWLOC_VERSION, from hwloc/autogen/config.h);
// hwloc_get_api_version() gives only the API level, which lags releases.
std::string hwloc_version() {
#ifdef HWLOC_VERSION
    return HWLOC_VERSION;
#else
    const unsigned v = hwloc_get_api_version();
    return "API " + std::to_string(v >> 16) + "." + std::to_string((v >> 8) & 0xffu);
#endif
}

std::string cpu_list(const std::vector<int>& cpus) {
    std::string out;
    for (int c : cpus) {
        if (!out.empty()) out += ',';
        out += std::to_string(c);
    }
    return out;
}

}  // namespace

struct topology::impl {
    hwloc_topology_t hw = nullptr;            // null when the fallback is in use
    hwloc_obj_type_t core_type = HWLOC_OBJ_CORE;  // HWLOC_OBJ_PU when there are no cores
    int cores = 1;
    int pus = 1;
    int packages = 1;
    int numa_nodes = 1;
    std::string origin;   // "this machine" or the XML file
    std::string failure;  // why hwloc failed; empty when it did not

    impl() = default;
    impl(const impl&) = delete;
    impl& operator=(const impl&) = delete;
    ~impl() {
        if (hw != nullptr) hwloc_topology_destroy(hw);
    }

    hwloc_obj_t core(int index) const {
        if (hw == nullptr || index < 0 || index >= cores) return nullptr;
        return hwloc_get_obj_by_type(hw, core_type, static_cast<unsigned>(index));
    }
};

topology::topology(const std::string& xml_path) : impl_(std::make_unique<impl>()) {
    impl& m = *impl_;
    m.origin = xml_path.empty() ? "this machine" : "XML file " + xml_path;
    if (hwloc_topology_init(&m.hw) != 0) {
        m.hw = nullptr;
        m.failure = std::string("hwloc_topology_init: ") + std::strerror(errno);
    } else if (!xml_path.empty() && hwloc_topology_set_xml(m.hw, xml_path.c_str()) != 0) {
        m.failure = "cannot use " + xml_path + ": " + std::strerror(errno);
    } else if (hwloc_topology_load(m.hw) != 0) {
        m.failure = "cannot load " + m.origin + ": " + std::strerror(errno);
    }
    if (m.failure.empty()) {
        int cores = hwloc_get_nbobjs_by_type(m.hw, HWLOC_OBJ_CORE);
        m.pus = hwloc_get_nbobjs_by_type(m.hw, HWLOC_OBJ_PU);
        if (cores <= 0) {
            m.core_type = HWLOC_OBJ_PU;
            cores = m.pus;
        }
        m.cores = cores;
        m.packages = std::max(1, hwloc_get_nbobjs_by_type(m.hw, HWLOC_OBJ_PACKAGE));
        m.numa_nodes = std::max(1, hwloc_get_nbobjs_by_type(m.hw, HWLOC_OBJ_NUMANODE));
        if (m.cores <= 0 || m.pus <= 0) m.failure = m.origin + " has no usable processor";
    }
    if (!m.failure.empty()) {
        if (m.hw != nullptr) hwloc_topology_destroy(m.hw);
        m.hw = nullptr;
        m.core_type = HWLOC_OBJ_PU;
        m.cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
        m.pus = m.cores;
        m.packages = 1;
        m.numa_nodes = 1;
        report_once({report_level::warning, report_category::topology, "W201",
                     "hwloc could not discover the topology (" + m.failure + ")",
                     plural(m.cores, "core", "cores") + ", one per online CPU"});
    }
}

topology::~topology() = default;

int topology::cores() const noexcept { return impl_->cores; }
int topology::processing_units() const noexcept { return impl_->pus; }
int topology::packages() const noexcept { return impl_->packages; }
int topology::numa_nodes() const noexcept { return impl_->numa_nodes; }
bool topology::from_hwloc() const noexcept { return impl_->hw != nullptr; }

std::string topology::describe() const {
    const impl& m = *impl_;
    std::string out;
    if (from_hwloc()) {
        out += "source: " + m.origin + " (hwloc " + hwloc_version() + ", allowed cpuset)\n";
    } else {
        out += "source: fallback, one core per online CPU (" + m.failure + ")\n";
    }
    out += plural(m.packages, "package", "packages") + ", " +
           plural(m.numa_nodes, "NUMA node", "NUMA nodes") + ", " +
           plural(m.cores, "core", "cores") + ", " +
           plural(m.pus, "hardware thread", "hardware threads");
    if (from_hwloc() && m.core_type == HWLOC_OBJ_PU) out += " (no cores reported: one per thread)";
    out += '\n';
    return out;
}

int topology::core_for_worker(int worker, int team_size, proc_bind_kind bind) const noexcept {
    if (worker < 0 || team_size <= 0 || worker >= team_size) return -1;
    const std::int64_t cores = impl_->cores;
    switch (bind) {
    case proc_bind_kind::none:
        return -1;
    case proc_bind_kind::close:
        return static_cast<int>(worker % cores);
    case proc_bind_kind::spread:
        // Worker w gets floor(w * cores / team): evenly spaced over the cores in hwloc's
        // order (package by package) when the team is smaller, and consecutive workers
        // sharing a core when it is larger (OpenMP's spread with sub-partitions).
        return static_cast<int>(worker * cores / team_size);
    }
    return -1;
}

std::vector<int> topology::cpus_of_core(int core) const {
    std::vector<int> cpus;
    if (!from_hwloc()) {
        if (core >= 0 && core < impl_->cores) cpus.push_back(core);
        return cpus;
    }
    const hwloc_obj_t obj = impl_->core(core);
    if (obj == nullptr) return cpus;
    for (int i = hwloc_bitmap_first(obj->cpuset); i != -1;
         i = hwloc_bitmap_next(obj->cpuset, i)) {
        cpus.push_back(i);
    }
    return cpus;
}

bool topology::bind_current_thread(int core) const {
    if (!from_hwloc()) {
        report_once({report_level::warning, report_category::topology, "W204",
                     "cannot bind workers without hwloc", "OS placement"});
        return false;
    }
    const hwloc_obj_t obj = impl_->core(core);
    if (obj == nullptr) {
        report_once({report_level::warning, report_category::topology, "W203",
                     "cannot bind to core " + std::to_string(core) + ": the machine has " +
                         plural(impl_->cores, "core", "cores"),
                     "OS placement"});
        return false;
    }
    if (hwloc_set_cpubind(impl_->hw, obj->cpuset, HWLOC_CPUBIND_THREAD) != 0) {
        const int err = errno;
        report_once({report_level::warning, report_category::topology, "W202",
                     "cannot bind a thread to core " + std::to_string(core) + " (CPUs " +
                         cpu_list(cpus_of_core(core)) + "): " + std::strerror(err),
                     "OS placement"});
        return false;
    }
    return true;
}

const topology& topology::machine() {
    // Never destroyed: worker threads of the process team (itself never destroyed) may
    // still be starting, and binding, while the process exits.
    static const topology& discovered = *new topology();
    // Announced after construction, outside the static initialiser: the info line may load
    // the configuration, whose printers call machine() again.
    static std::atomic<bool> announced{false};
    if (!announced.load(std::memory_order_acquire) && !announced.exchange(true)) {
        std::string found = discovered.describe();
        found = found.substr(found.find('\n') + 1);
        if (!found.empty() && found.back() == '\n') found.pop_back();
        report_once({report_level::info, report_category::topology, "I201",
                     "found " + found + (discovered.from_hwloc() ? " (hwloc)" : " (fallback)"),
                     ""});
    }
    return discovered;
}

}  // namespace aloe::runtime

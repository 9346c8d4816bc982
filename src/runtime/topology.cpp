// The machine's cores through hwloc, restricted to what this process may use, with a
// one-core-per-CPU fallback.
//
// hwloc loads the whole machine (HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED), so `aloe info`
// can show it; then the topology is restricted (hwloc_topology_restrict) to the allowed
// CPUs: hwloc's allowed cpuset (on Linux the cgroup cpuset; for an XML file its
// allowed_cpuset) ∩ the cgroup cpuset aloe read ∩ the affinity mask captured at load. hwloc
// alone does not apply the mask: under `taskset -c 1` it still allows every CPU of the
// cgroup. After the restriction every count, core index and binding is within the allowed
// CPUs. A machine (or XML file) with no Core objects counts each hardware thread as a core.
//
// Reports: W201 when hwloc fails and the fallback is used; W202 when a bind fails; W203 a
// bind to a core out of range; W204 a bind without hwloc; W207 the limits leave no CPU of
// the machine (hwloc's allowed set is used); I201 (info) what was found and what is allowed.
#include "runtime/topology.hpp"

#include "runtime/config.hpp"
#include "runtime/cpu_allowance.hpp"
#include "runtime/cpu_list.hpp"
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

std::string join(const std::vector<std::string>& parts) {
    std::string out;
    for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
    return out;
}

std::string describe_counts(const hardware_counts& c) {
    return plural(c.packages, "package", "packages") + ", " + plural(c.numa_nodes, "NUMA node", "NUMA nodes") +
           ", " + plural(c.cores, "core", "cores") + ", " +
           plural(c.processing_units, "hardware thread", "hardware threads");
}

std::vector<int> cpus_of(hwloc_const_bitmap_t set) {
    std::vector<int> cpus;
    for (int i = hwloc_bitmap_first(set); i != -1; i = hwloc_bitmap_next(set, i)) cpus.push_back(i);
    return cpus;
}

// Owns an hwloc bitmap.
struct bitmap {
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    bitmap() = default;
    explicit bitmap(hwloc_const_bitmap_t from) : set(hwloc_bitmap_dup(from)) {}
    bitmap(const bitmap&) = delete;
    bitmap& operator=(const bitmap&) = delete;
    ~bitmap() { hwloc_bitmap_free(set); }
};

void fill(hwloc_bitmap_t set, const std::vector<int>& cpus) {
    hwloc_bitmap_zero(set);
    for (int c : cpus) hwloc_bitmap_set(set, static_cast<unsigned>(c));
}

}  // namespace

struct topology::impl {
    hwloc_topology_t hw = nullptr;            // null when the fallback is in use
    hwloc_obj_type_t core_type = HWLOC_OBJ_CORE;  // HWLOC_OBJ_PU when there are no cores
    hardware_counts machine;
    hardware_counts allowed;
    std::vector<int> allowed_cpus;
    std::vector<std::string> limited_by;
    std::optional<cpu_quota> quota;
    cgroup_layout cgroups = cgroup_layout::none;
    std::string origin;   // "this machine" or the XML file
    std::string failure;  // why hwloc failed; empty when it did not

    impl() = default;
    impl(const impl&) = delete;
    impl& operator=(const impl&) = delete;
    ~impl() {
        if (hw != nullptr) hwloc_topology_destroy(hw);
    }

    hwloc_obj_t core(int index) const {
        if (hw == nullptr || index < 0 || index >= allowed.cores) return nullptr;
        return hwloc_get_obj_by_type(hw, core_type, static_cast<unsigned>(index));
    }

    hardware_counts count() const {
        hardware_counts c;
        c.processing_units = hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_PU);
        c.cores = hwloc_get_nbobjs_by_type(hw, core_type);
        c.packages = std::max(1, hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_PACKAGE));
        c.numa_nodes = std::max(1, hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_NUMANODE));
        return c;
    }

    // "2 cores, 2 hardware threads, CPUs 0-1 (limited by the affinity mask)"
    std::string allowed_text() const {
        return plural(allowed.cores, "core", "cores") + ", " +
               plural(allowed.processing_units, "hardware thread", "hardware threads") + ", CPUs " +
               format_cpu_list(allowed_cpus) + " (" +
               (limited_by.empty() ? std::string("no limit") : "limited by " + join(limited_by)) + ")";
    }

    void discover(const std::string& xml_path, const cpu_allowance& limits);
    void narrow(hwloc_bitmap_t allowed_set, const std::vector<int>& cpus, const std::string& why);
    void fall_back(const cpu_allowance& limits);
};

// Intersects `allowed_set` with `cpus`, noting `why` when that removes a CPU.
void topology::impl::narrow(hwloc_bitmap_t allowed_set, const std::vector<int>& cpus, const std::string& why) {
    bitmap limit;
    fill(limit.set, cpus);
    if (hwloc_bitmap_isincluded(allowed_set, limit.set)) return;
    hwloc_bitmap_and(allowed_set, allowed_set, limit.set);
    if (std::find(limited_by.begin(), limited_by.end(), why) == limited_by.end()) limited_by.push_back(why);
}

void topology::impl::discover(const std::string& xml_path, const cpu_allowance& limits) {
    if (hwloc_topology_init(&hw) != 0) {
        hw = nullptr;
        failure = std::string("hwloc_topology_init: ") + std::strerror(errno);
        return;
    }
    // Keep the CPUs this process may not use, so the machine can be counted whole.
    hwloc_topology_set_flags(hw, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
    if (!xml_path.empty() && hwloc_topology_set_xml(hw, xml_path.c_str()) != 0) {
        failure = "cannot use " + xml_path + ": " + std::strerror(errno);
        return;
    }
    if (hwloc_topology_load(hw) != 0) {
        failure = "cannot load " + origin + ": " + std::strerror(errno);
        return;
    }
    if (hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_CORE) <= 0) core_type = HWLOC_OBJ_PU;
    machine = count();
    if (machine.cores <= 0 || machine.processing_units <= 0) {
        failure = origin + " has no usable processor";
        return;
    }

    const hwloc_const_bitmap_t everything = hwloc_topology_get_topology_cpuset(hw);
    bitmap allowed_set(everything);
    hwloc_bitmap_and(allowed_set.set, allowed_set.set, hwloc_topology_get_allowed_cpuset(hw));
    if (!hwloc_bitmap_isequal(allowed_set.set, everything))
        limited_by.push_back(xml_path.empty() ? "cgroup cpuset" : "allowed cpuset of the XML file");
    bitmap hwloc_allowed(allowed_set.set);
    if (limits.cgroup.cpuset) narrow(allowed_set.set, *limits.cgroup.cpuset, "cgroup cpuset");
    if (limits.mask) narrow(allowed_set.set, *limits.mask, limits.mask_source);
    if (hwloc_bitmap_iszero(allowed_set.set)) {
        std::string what = "the limits (";
        if (limits.cgroup.cpuset) what += "cgroup cpuset " + format_cpu_list(*limits.cgroup.cpuset);
        if (limits.cgroup.cpuset && limits.mask) what += ", ";
        if (limits.mask) what += limits.mask_source + " " + format_cpu_list(*limits.mask);
        report_once({report_level::warning, report_category::topology, "W207",
                     what + ") leave none of the CPUs hwloc allows (" +
                         format_cpu_list(cpus_of(hwloc_allowed.set)) + ")",
                     "the CPUs hwloc allows"});
        hwloc_bitmap_copy(allowed_set.set, hwloc_allowed.set);
        limited_by.resize(hwloc_bitmap_isequal(allowed_set.set, everything) ? 0 : 1);
    }
    if (!hwloc_bitmap_isequal(allowed_set.set, everything) &&
        hwloc_topology_restrict(hw, allowed_set.set, HWLOC_RESTRICT_FLAG_REMOVE_CPULESS) != 0) {
        failure = std::string("hwloc_topology_restrict: ") + std::strerror(errno);
        return;
    }
    allowed = count();
    allowed_cpus = cpus_of(hwloc_topology_get_topology_cpuset(hw));
}

// One core per allowed CPU: the mask and the cgroup cpuset, else the online CPUs.
void topology::impl::fall_back(const cpu_allowance& limits) {
    if (hw != nullptr) hwloc_topology_destroy(hw);
    hw = nullptr;
    core_type = HWLOC_OBJ_PU;
    limited_by.clear();
    const int online = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    machine = hardware_counts{1, 1, online, online};
    std::vector<int> cpus;
    for (int c = 0; c < online; ++c) cpus.push_back(c);
    if (limits.cgroup.cpuset) {
        cpus = *limits.cgroup.cpuset;
        if (static_cast<int>(cpus.size()) < online) limited_by.push_back("cgroup cpuset");
    }
    if (limits.mask) {
        const std::vector<int> both = limits.cgroup.cpuset ? intersect_cpus(cpus, *limits.mask) : *limits.mask;
        if (!both.empty() && both.size() < cpus.size()) limited_by.push_back(limits.mask_source);
        if (!both.empty()) cpus = both;
    }
    allowed_cpus = cpus;
    const int n = static_cast<int>(cpus.size());
    allowed = hardware_counts{1, 1, n, n};
    report_once({report_level::warning, report_category::topology, "W201",
                 "hwloc could not discover the topology (" + failure + ")",
                 plural(n, "core", "cores") + ", one per " + (limited_by.empty() ? "online" : "allowed") + " CPU"});
}

topology::topology(const std::string& xml_path) : topology(xml_path, xml_path.empty() ? process_cpu_allowance() : cpu_allowance{}) {}

topology::topology(const std::string& xml_path, const cpu_allowance& limits) : impl_(std::make_unique<impl>()) {
    impl& m = *impl_;
    m.origin = xml_path.empty() ? "this machine" : "XML file " + xml_path;
    m.quota = limits.cgroup.quota;
    m.cgroups = limits.cgroup.layout;
    m.discover(xml_path, limits);
    if (!m.failure.empty()) m.fall_back(limits);
}

topology::~topology() = default;

int topology::cores() const noexcept { return impl_->allowed.cores; }
int topology::processing_units() const noexcept { return impl_->allowed.processing_units; }
int topology::packages() const noexcept { return impl_->allowed.packages; }
int topology::numa_nodes() const noexcept { return impl_->allowed.numa_nodes; }
const std::vector<int>& topology::allowed_cpus() const noexcept { return impl_->allowed_cpus; }
const std::vector<std::string>& topology::limited_by() const noexcept { return impl_->limited_by; }
const std::optional<cpu_quota>& topology::quota() const noexcept { return impl_->quota; }
cgroup_layout topology::cgroups() const noexcept { return impl_->cgroups; }
hardware_counts topology::whole_machine() const noexcept { return impl_->machine; }
bool topology::from_hwloc() const noexcept { return impl_->hw != nullptr; }

int topology::default_threads() const noexcept {
    // ceil, not floor: a quota is CPU time, not CPUs. A 1.5-CPU quota lets two threads run
    // at once for three quarters of each period; one thread would leave a third of the
    // budget unused (and floor of a quota below one CPU would be no thread at all). The
    // last thread is throttled for part of each period, which the dynamic schedules absorb.
    const int cores = impl_->allowed.cores;
    if (!impl_->quota) return std::max(1, cores);
    return std::max(1, std::min(cores, impl_->quota->whole_cpus()));
}

std::string topology::default_threads_source() const {
    const impl& m = *impl_;
    if (m.quota && m.quota->whole_cpus() < m.allowed.cores) return "cgroup CPU quota " + m.quota->cpus_text() + " CPUs";
    if (!from_hwloc()) return m.limited_by.empty() ? "online CPUs" : "allowed CPUs (" + join(m.limited_by) + ")";
    return m.limited_by.empty() ? "hwloc cores" : "allowed cores (" + join(m.limited_by) + ")";
}

std::string topology::describe() const {
    const impl& m = *impl_;
    std::string out;
    if (from_hwloc()) {
        out += "source: " + m.origin + " (hwloc " + hwloc_version() + ")\n";
        out += "machine: " + describe_counts(m.machine);
        if (m.core_type == HWLOC_OBJ_PU) out += " (no cores reported: one per thread)";
    } else {
        out += "source: fallback, one core per allowed CPU (" + m.failure + ")\n";
        out += "machine: " + plural(m.machine.processing_units, "online CPU", "online CPUs");
    }
    out += "\nallowed: " + m.allowed_text() + "\n";
    if (m.cgroups != cgroup_layout::none || m.quota) {
        out += "cgroups: " + std::string(to_string(m.cgroups)) + ", ";
        out += m.quota ? "CPU quota " + m.quota->cpus_text() + " CPUs (" + m.quota->file + ")" : "no CPU quota";
        out += '\n';
    }
    return out;
}

int topology::core_for_worker(int worker, int team_size, proc_bind_kind bind) const noexcept {
    if (worker < 0 || team_size <= 0 || worker >= team_size) return -1;
    const std::int64_t cores = impl_->allowed.cores;
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

int topology::distance(int core_a, int core_b) const noexcept {
    if (core_a == core_b) return 0;
    const hwloc_obj_t a = impl_->core(core_a);
    const hwloc_obj_t b = impl_->core(core_b);
    if (a == nullptr || b == nullptr) return 3;
    const hwloc_obj_t common = hwloc_get_common_ancestor_obj(impl_->hw, a, b);
    if (common == nullptr) return 3;
    if (hwloc_obj_type_is_cache(common->type)) return 1;
    // A NUMA node is a memory child in hwloc 2, so test the CPU sets of the two cores.
    const int numa_nodes = hwloc_get_nbobjs_by_type(impl_->hw, HWLOC_OBJ_NUMANODE);
    for (int i = 0; i < numa_nodes; ++i) {
        const hwloc_obj_t node = hwloc_get_obj_by_type(impl_->hw, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(i));
        if (node != nullptr && hwloc_bitmap_isincluded(a->cpuset, node->cpuset) &&
            hwloc_bitmap_isincluded(b->cpuset, node->cpuset))
            return 2;
    }
    return common->type == HWLOC_OBJ_PACKAGE ? 2 : 3;
}

std::vector<int> topology::cpus_of_core(int core) const {
    if (!from_hwloc()) {
        if (core >= 0 && core < impl_->allowed.cores) return {impl_->allowed_cpus[static_cast<std::size_t>(core)]};
        return {};
    }
    const hwloc_obj_t obj = impl_->core(core);
    if (obj == nullptr) return {};
    return cpus_of(obj->cpuset);
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
                     "cannot bind to core " + std::to_string(core) + ": this process may use " +
                         plural(impl_->allowed.cores, "core", "cores"),
                     "OS placement"});
        return false;
    }
    if (hwloc_set_cpubind(impl_->hw, obj->cpuset, HWLOC_CPUBIND_THREAD) != 0) {
        const int err = errno;
        report_once({report_level::warning, report_category::topology, "W202",
                     "cannot bind a thread to core " + std::to_string(core) + " (CPUs " +
                         format_cpu_list(cpus_of_core(core)) + "): " + std::strerror(err),
                     "OS placement"});
        return false;
    }
    return true;
}

const topology& topology::machine() {
    // Never destroyed: worker threads of the process team (itself never destroyed) may
    // still be starting, and binding, while the process exits.
    static const topology& discovered = *new topology();
    // Announced after construction, outside the static initialiser: an info line may load
    // the configuration, whose printers call machine() again. The allowance's info lines
    // were held back for the same reason.
    static std::atomic<bool> announced{false};
    if (!announced.load(std::memory_order_acquire) && !announced.exchange(true)) {
        for (const report_message& held : process_cpu_allowance().held_info) report_once(held);
        const impl& m = *discovered.impl_;
        report_once({report_level::info, report_category::topology, "I201",
                     "found " + (discovered.from_hwloc() ? describe_counts(m.machine) + " (hwloc)"
                                                          : plural(m.machine.processing_units, "online CPU",
                                                                   "online CPUs") + " (fallback)") +
                         "; this process may use " + m.allowed_text() +
                         (m.quota ? ", CPU quota " + m.quota->cpus_text() + " CPUs" : ""),
                     ""});
    }
    return discovered;
}

}  // namespace aloe::runtime

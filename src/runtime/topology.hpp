// The machine's cores, found by hwloc, the part of them this process may use, and binding
// of worker threads to them.
//
// hwloc is the one source of topology; when it fails, one core per allowed CPU is assumed
// and that fallback is reported once. What the process may use comes from
// cpu_allowance.hpp (the affinity mask captured at load, the cgroup cpuset and CPU quota)
// intersected with hwloc's allowed cpuset; cores are numbered among the allowed ones only,
// so worker i bound "close" goes to allowed core i and never outside the mask.
#pragma once

#include "runtime/cgroup_limits.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace aloe::runtime {

enum class proc_bind_kind;
struct cpu_allowance;

/// How much hardware: what the machine has, or what this process may use of it.
struct hardware_counts {
    int packages = 1;
    int numa_nodes = 1;
    int cores = 1;             ///< a machine without Core objects counts each thread as one
    int processing_units = 1;  ///< hardware threads (what the kernel calls CPUs)
};

class topology {
public:
    /// Discovers this machine, limited by process_cpu_allowance(); or, for tests, loads an
    /// hwloc XML file when `xml_path` is not empty, limited by its allowed cpuset only.
    explicit topology(const std::string& xml_path = {});
    /// The same with the limits given instead (tests: a narrowed mask, a cgroup quota).
    topology(const std::string& xml_path, const cpu_allowance& limits);
    ~topology();
    topology(const topology&) = delete;
    topology& operator=(const topology&) = delete;

    // What this process may use. A core counts when one of its hardware threads is allowed.
    int cores() const noexcept;            ///< allowed cores
    int processing_units() const noexcept; ///< allowed hardware threads
    int packages() const noexcept;         ///< packages with an allowed core
    int numa_nodes() const noexcept;       ///< NUMA nodes with an allowed core
    /// OS numbers of the allowed hardware threads, ascending.
    const std::vector<int>& allowed_cpus() const noexcept;
    /// What made the allowed CPUs fewer than the machine's, in the order applied: "cgroup
    /// cpuset", "affinity mask", "OpenMP places", "allowed cpuset of the XML file"; empty
    /// when nothing did.
    const std::vector<std::string>& limited_by() const noexcept;
    /// The cgroup CPU quota, when one is set.
    const std::optional<cpu_quota>& quota() const noexcept;
    cgroup_layout cgroups() const noexcept;

    /// The team size when none is asked for: cores(), or ceil(quota) when a cgroup CPU
    /// quota allows fewer (docs/configuration.md, "Team size"); at least 1.
    int default_threads() const noexcept;
    /// Where default_threads() comes from, in words: "hwloc cores", "allowed cores
    /// (affinity mask)", "cgroup CPU quota 1.5 CPUs", "online CPUs" (the fallback), ...
    std::string default_threads_source() const;

    /// Everything hwloc sees on the machine, allowed to this process or not.
    hardware_counts whole_machine() const noexcept;

    bool from_hwloc() const noexcept;     ///< false when the fallback is in use
    std::string describe() const;         ///< a few lines for `aloe info`

    /// The core (index among cores()) worker `worker` of a `team_size` team goes to.
    int core_for_worker(int worker, int team_size, proc_bind_kind bind) const noexcept;

    /// Binds the calling thread to core `core`. Returns false (and reports once) on failure.
    bool bind_current_thread(int core) const;

    /// The OS indexes of the allowed hardware threads of core `core` (what the kernel calls
    /// CPUs); empty when `core` is out of range.
    std::vector<int> cpus_of_core(int core) const;

    /// How far apart two allowed cores are, for choosing whom to steal from: 0 the same
    /// core, 1 sharing a cache, 2 the same NUMA node or package, 3 farther. Without hwloc (or
    /// a core out of range) 0 when equal, else 3.
    int distance(int core_a, int core_b) const noexcept;

    /// The topology of this process, discovered on first use.
    static const topology& machine();

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace aloe::runtime

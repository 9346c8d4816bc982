// The CPU limits the process's control groups set: the cpuset (which CPUs) and the CPU
// quota (how much CPU time per period), read from the cgroup file system.
//
// Where the files are: /proc/self/cgroup names the process's cgroup in each hierarchy, and
// /proc/self/mountinfo where each hierarchy is mounted. A controller is read from the
// cgroup v1 hierarchy that lists it when there is one (v1 and hybrid layouts), else from
// the unified v2 hierarchy. Every path is joined under a root folder ("/" in production),
// so tests replay recorded trees from tests/data/cgroup/.
//
// Nested groups: a quota set on any ancestor throttles the whole subtree, so the tightest
// quota/period on the path from the process's cgroup up to the mount root applies. The
// cpuset is read where the kernel already folded the ancestors in (cpuset.cpus.effective
// in v2, cpuset.effective_cpus in v1), from the nearest cgroup that has the file.
//
// Reports (once each): W205 a file that is there but cannot be read or parsed (that limit
// is ignored); I202 the limits cannot be found at all (no /proc/self/cgroup, no mount, a
// cgroup outside the mounted tree): the affinity mask alone limits the team.
#pragma once

#include "runtime/report.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace aloe::runtime {

/// How the cgroup hierarchies of this process are arranged.
enum class cgroup_layout {
    none,    ///< no cgroup information (not Linux, /proc missing, or nothing mounted)
    v1,      ///< only v1 hierarchies
    v2,      ///< the unified hierarchy only
    hybrid,  ///< v1 controllers plus a unified hierarchy (systemd's "hybrid" mode)
};

std::string_view to_string(cgroup_layout layout) noexcept;

/// A CPU bandwidth limit: `quota_us` of CPU time every `period_us`, across all CPUs.
struct cpu_quota {
    std::int64_t quota_us = 0;
    std::int64_t period_us = 0;
    std::string file;  ///< the file that set it, as this process names it (no test root)

    /// quota / period as a decimal with at most two digits after the point: "1.5".
    std::string cpus_text() const;
    double cpus() const noexcept;
    /// ceil(quota / period), at least 1: the threads that can use the whole quota.
    int whole_cpus() const noexcept;
};

struct cgroup_cpu_limits {
    cgroup_layout layout = cgroup_layout::none;
    /// The CPUs the cpuset controller allows; nullopt when no cpuset file was found.
    std::optional<std::vector<int>> cpuset;
    std::string cpuset_file;  ///< where `cpuset` came from, as this process names it
    /// The tightest quota on the path to the root; nullopt when none is set ("max", -1).
    std::optional<cpu_quota> quota;
};

/// The limits of this process's cgroups, read under `root` ("/": the live system).
/// Reports what cannot be read (W205, I202) and leaves that limit unset. Info messages
/// (I202) go to `*held_info` instead when it is given: a caller inside a static initialiser
/// must not report them, since an info line may load the configuration, which may come back
/// to that initialiser (report.hpp).
cgroup_cpu_limits read_cgroup_cpu_limits(const std::string& root = "/",
                                         std::vector<report_message>* held_info = nullptr);

}  // namespace aloe::runtime

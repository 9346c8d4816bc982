// The CPUs the calling thread may run on, as the kernel's affinity mask says (what taskset,
// cgroups and an OpenMP runtime's binding leave it). Shared by `aloe noise` and the workloads.
#pragma once

#include <sched.h>

#include <vector>

namespace aloe::runtime {

/// Ascending OS CPU numbers; {0} when the mask cannot be read.
inline std::vector<int> cpus_in_affinity_mask() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return {0};
    std::vector<int> cpus;
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) cpus.push_back(c);
    return cpus;
}

}  // namespace aloe::runtime

// The CPUs the calling thread may run on, as the kernel's affinity mask says (what taskset,
// cgroups and an OpenMP runtime's binding leave it). Shared by the topology (through
// cpu_allowance.hpp, which reads it once at load), `aloe noise` and the workloads.
#pragma once

#include "runtime/cpu_list.hpp"

#include <sched.h>

#include <cerrno>
#include <optional>
#include <vector>

namespace aloe::runtime {

/// The calling thread's mask now: ascending OS CPU numbers, or std::nullopt when it cannot
/// be read (`*error`, when given, receives errno). Works beyond CPU_SETSIZE CPUs.
inline std::optional<std::vector<int>> read_affinity_mask(int* error = nullptr) {
    // The kernel refuses (EINVAL) a set smaller than its own; grow until it fits.
    for (int ncpus = CPU_SETSIZE; ncpus <= max_cpu_number + 1; ncpus *= 2) {
        cpu_set_t* set = CPU_ALLOC(ncpus);
        if (set == nullptr) break;
        const std::size_t size = CPU_ALLOC_SIZE(ncpus);
        CPU_ZERO_S(size, set);
        if (sched_getaffinity(0, size, set) == 0) {
            std::vector<int> cpus;
            for (int c = 0; c < ncpus; ++c)
                if (CPU_ISSET_S(c, size, set)) cpus.push_back(c);
            CPU_FREE(set);
            return cpus;
        }
        const int err = errno;
        CPU_FREE(set);
        if (err != EINVAL) {
            if (error != nullptr) *error = err;
            return std::nullopt;
        }
    }
    if (error != nullptr) *error = EINVAL;
    return std::nullopt;
}

/// Ascending OS CPU numbers; {0} when the mask cannot be read.
inline std::vector<int> cpus_in_affinity_mask() {
    std::optional<std::vector<int>> cpus = read_affinity_mask();
    if (!cpus || cpus->empty()) return {0};
    return *std::move(cpus);
}

}  // namespace aloe::runtime

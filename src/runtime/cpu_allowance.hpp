// What limits the CPUs this process may use, gathered before hwloc is asked: the affinity
// mask (taskset, numactl, Slurm, mpirun --bind-to), the cgroup cpuset and the cgroup CPU
// quota. topology.cpp intersects the CPUs with what hwloc sees and sizes the team from it.
//
// The mask is read once, when the library is loaded (a constructor in cpu_allowance.cpp),
// as libgomp and libomp read theirs: later the calling thread's own mask may already be
// narrowed by aloe itself (ALOE_PROC_BIND binds the thread that starts the team) or by the
// program. An OpenMP runtime that was loaded and initialised first can have bound the
// initial thread already: GNU libgomp does so in its own constructor under OMP_PROC_BIND or
// OMP_PLACES, and the dynamic loader runs that constructor before aloe's when aloe is linked
// statically, preloaded (`aloe run`), or named before libgomp. Then the mask seen at load is
// one place, and the union of the OpenMP runtime's places (built from the process's mask
// before it bound) stands in for it (reported once, I203).
//
// Reports: W206 the mask cannot be read (hwloc's allowed set is used); I203 the OpenMP
// runtime's places were used instead of the mask; cgroup reports (cgroup_limits.hpp).
#pragma once

#include "runtime/cgroup_limits.hpp"

#include <optional>
#include <string>
#include <vector>

namespace aloe::runtime {

struct cpu_allowance {
    /// The affinity mask aloe goes by; std::nullopt when there is none to apply (unreadable,
    /// or a topology loaded from an XML file).
    std::optional<std::vector<int>> mask;
    /// Where `mask` came from: "affinity mask", or "OpenMP places" (see above).
    std::string mask_source = "affinity mask";
    cgroup_cpu_limits cgroup;
    /// Info messages gathered while this was built (I202, I203), not reported yet:
    /// topology::machine() reports them once the topology exists (report.hpp: an info line
    /// from inside a static initialiser may load the configuration, which may come back).
    std::vector<report_message> held_info;
};

/// The calling process's: the mask captured when the library was loaded and the cgroup files
/// under "/". Computed on first use (which reports what could not be read), then fixed.
/// Thread-safe.
const cpu_allowance& process_cpu_allowance();

/// The affinity mask of the thread that loaded the library, as it was then; std::nullopt
/// when it could not be read (`*error` receives errno).
std::optional<std::vector<int>> affinity_mask_at_load(int* error = nullptr);

/// An OpenMP runtime's place list, read through its API (OpenMP 4.5 omp_get_place_*), so
/// the same code reads libgomp, libomp, or a test's fake.
struct openmp_places_api {
    int (*proc_bind)() = nullptr;  ///< omp_get_proc_bind: 0 is omp_proc_bind_false
    int (*num_places)() = nullptr;
    int (*place_num_procs)(int place) = nullptr;
    void (*place_proc_ids)(int place, int* ids) = nullptr;
};

/// The API of the OpenMP runtime loaded in this process; std::nullopt when none is.
std::optional<openmp_places_api> loaded_openmp_places_api();

/// The CPUs of every place, ascending, when the runtime binds threads (proc_bind is not
/// false) and has places; std::nullopt otherwise.
std::optional<std::vector<int>> openmp_place_cpus(const openmp_places_api& api);

/// The mask to go by, given the one seen at load and an OpenMP runtime's place CPUs (when
/// it binds): the places when they hold every CPU of the mask and more (the runtime bound
/// the initial thread to one place before aloe looked), else the mask.
std::vector<int> mask_before_openmp_binding(const std::vector<int>& mask_at_load,
                                           const std::optional<std::vector<int>>& place_cpus);

}  // namespace aloe::runtime

// What this machine offers beyond plain cores: hardware counters, cpufreq, RAPL, MPI.
//
// Each probe reads from a root directory (normally "/") so tests can point it at a fake
// sysfs tree in tests/data/. Every missing capability comes with the fallback aloe uses.
#pragma once

#include <string>
#include <vector>

namespace aloe::runtime {

struct capability {
    std::string name;      ///< "hardware counters", "cpufreq", "rapl", "mpi"
    bool available = false;
    std::string detail;    ///< what was found (driver, governor, domains, library)
    std::string fallback;  ///< what aloe uses instead when unavailable
};

struct probe_options {
    std::string sysfs_root = "/";       ///< prefix for /sys paths
    bool try_perf_event_open = true;    ///< tests turn the syscall off
    /// MPI libraries tried with dlopen, in order (tests name a library that is or is not
    /// there).
    std::vector<std::string> mpi_libraries = {"libmpi.so.40", "libmpi.so.12"};
};

/// Probes every capability, in the order hardware counters, cpufreq, rapl, mpi. Cheap (a
/// few file reads, one syscall, a dlopen); not cached. Each missing capability is reported
/// once at info level in category caps (I401..I404).
std::vector<capability> probe_machine(const probe_options& opts = {});

}  // namespace aloe::runtime

// What a workload process needs from its environment before any runtime starts: the CPUs it
// may use, the pinning variables each runtime reads at load time, and LLVM libomp loaded in
// place of GNU libgomp. Variables read at load time cannot be changed afterwards, so the
// program sets them and re-executes itself once.
#pragma once

#include <string>
#include <vector>

namespace aloe_apps {

/// The CPUs this process may run on (its affinity mask), ascending.
std::vector<int> allowed_cpus();

/// Makes sure the environment has `wanted` (name, value; an empty value means unset) and,
/// when `use_libomp`, that the dynamic loader finds libomp under libgomp's name. If anything
/// had to change, re-executes the program with the same words and does not return; a second
/// mismatch after re-executing throws (something outside overrides the environment).
void ensure_environment(const std::vector<std::pair<std::string, std::string>>& wanted, bool use_libomp,
                        const std::vector<std::string>& words);

/// The file name of the OpenMP library the loader mapped (e.g. "libgomp.so.1.0.0",
/// "libomp.so.5"), after resolving links; empty if none.
std::string loaded_openmp_library();

/// The file name of the first loaded object whose file name starts with `prefix` (e.g.
/// "libaloe-gomp" finds the `aloe run` interposer), after resolving links; empty if none.
std::string loaded_library(const std::string& prefix);

/// Pins the calling thread to `cpu`; false (errno kept) when the kernel refuses.
bool pin_current_thread(int cpu);

}  // namespace aloe_apps

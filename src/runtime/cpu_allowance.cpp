#include "runtime/cpu_allowance.hpp"

#include "runtime/cpu_list.hpp"
#include "runtime/cpu_mask.hpp"
#include "runtime/report.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace aloe::runtime {
namespace {

struct captured_mask {
    std::optional<std::vector<int>> cpus;
    int error = 0;
};

// The first caller captures: the constructor below at load, or a static initialiser of the
// program that reaches aloe before this library's constructor has run.
const captured_mask& mask_at_load() {
    static const captured_mask m = [] {
        captured_mask c;
        c.cpus = read_affinity_mask(&c.error);
        return c;
    }();
    return m;
}

// Runs when the library (or the program it is linked into) is loaded. Nothing else here:
// reporting would load the configuration from a static initialiser.
[[gnu::constructor]] void capture_mask_at_load() { (void)mask_at_load(); }

template <class Fn>
Fn symbol(const char* name) {
    return reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, name));
}

cpu_allowance gather() {
    cpu_allowance a;
    a.cgroup = read_cgroup_cpu_limits("/", &a.held_info);
    int error = 0;
    const std::optional<std::vector<int>> mask = affinity_mask_at_load(&error);
    if (!mask || mask->empty()) {
        report_once({report_level::warning, report_category::topology, "W206",
                     mask ? std::string("the affinity mask is empty")
                          : std::string("cannot read the affinity mask: ") + std::strerror(error),
                     "the CPUs hwloc allows"});
        return a;
    }
    a.mask = mask;
    // Only a mask narrower than the cpuset (or the online CPUs) can be an OpenMP runtime's
    // binding; asking otherwise would initialise an OpenMP runtime the program may not use.
    const std::size_t whole = a.cgroup.cpuset ? a.cgroup.cpuset->size()
                                              : static_cast<std::size_t>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
    const bool narrowed = mask->size() < whole;
    if (!narrowed) return a;
    const std::optional<openmp_places_api> api = loaded_openmp_places_api();
    if (!api) return a;
    std::vector<int> wider = mask_before_openmp_binding(*mask, openmp_place_cpus(*api));
    if (a.cgroup.cpuset) wider = intersect_cpus(wider, *a.cgroup.cpuset);
    if (wider.size() > mask->size()) {
        a.held_info.push_back({report_level::info, report_category::topology, "I203",
                               "the OpenMP runtime had bound this thread to CPUs " + format_cpu_list(*mask) +
                                   " before aloe loaded (OMP_PROC_BIND or OMP_PLACES)",
                               "its places, CPUs " + format_cpu_list(wider)});
        a.mask = std::move(wider);
        a.mask_source = "OpenMP places";
    }
    return a;
}

}  // namespace

std::optional<std::vector<int>> affinity_mask_at_load(int* error) {
    const captured_mask& m = mask_at_load();
    if (error != nullptr) *error = m.error;
    return m.cpus;
}

const cpu_allowance& process_cpu_allowance() {
    // Never destroyed, like the topology built from it.
    static const cpu_allowance& a = *new cpu_allowance(gather());
    return a;
}

std::optional<openmp_places_api> loaded_openmp_places_api() {
    openmp_places_api api;
    api.proc_bind = symbol<int (*)()>("omp_get_proc_bind");
    api.num_places = symbol<int (*)()>("omp_get_num_places");
    api.place_num_procs = symbol<int (*)(int)>("omp_get_place_num_procs");
    api.place_proc_ids = symbol<void (*)(int, int*)>("omp_get_place_proc_ids");
    if (api.proc_bind == nullptr || api.num_places == nullptr || api.place_num_procs == nullptr ||
        api.place_proc_ids == nullptr) {
        return std::nullopt;
    }
    return api;
}

std::optional<std::vector<int>> openmp_place_cpus(const openmp_places_api& api) {
    if (api.proc_bind() == 0) return std::nullopt;
    const int places = api.num_places();
    if (places <= 0) return std::nullopt;
    std::vector<int> cpus;
    for (int p = 0; p < places; ++p) {
        const int n = api.place_num_procs(p);
        if (n <= 0 || n > max_cpu_number + 1) continue;
        std::vector<int> ids(static_cast<std::size_t>(n));
        api.place_proc_ids(p, ids.data());
        for (int id : ids)
            if (id >= 0 && id <= max_cpu_number) cpus.push_back(id);
    }
    std::sort(cpus.begin(), cpus.end());
    cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
    if (cpus.empty()) return std::nullopt;
    return cpus;
}

std::vector<int> mask_before_openmp_binding(const std::vector<int>& mask_at_load,
                                           const std::optional<std::vector<int>>& place_cpus) {
    if (!place_cpus) return mask_at_load;
    const bool covers = intersect_cpus(*place_cpus, mask_at_load).size() == mask_at_load.size();
    return covers && place_cpus->size() > mask_at_load.size() ? *place_cpus : mask_at_load;
}

}  // namespace aloe::runtime

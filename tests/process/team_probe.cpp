// Starts aloe's process team and reports, as one JSON line, its size and the affinity mask
// each worker ran its part of a static loop under: what tests/process/affinity_check.cmake
// compares with the CPUs the test gave the process (taskset). Built twice: plainly, and with
// -fopenmp (ALOE_TEAM_PROBE_OPENMP), where GNU libgomp is loaded and initialised before
// aloe's constructor runs (aloe is linked statically into this program), so OMP_PROC_BIND
// can bind the initial thread before aloe reads the mask.
#include <aloe/aloe.hpp>

#include <sched.h>

#include <cstdio>
#include <string>
#include <vector>

#ifdef ALOE_TEAM_PROBE_OPENMP
#include <omp.h>
#endif

namespace {

std::string mask_of_this_thread() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return "null";
    std::string out = "[";
    for (int c = 0; c < CPU_SETSIZE; ++c) {
        if (!CPU_ISSET(c, &set)) continue;
        if (out.size() > 1) out += ',';
        out += std::to_string(c);
    }
    return out + "]";
}

}  // namespace

int main() {
    std::string openmp = "null";
#ifdef ALOE_TEAM_PROBE_OPENMP
    // The mask libgomp left the initial thread with, and its own team size.
    openmp = "{\"main_mask\": " + mask_of_this_thread() + ", \"max_threads\": " +
             std::to_string(omp_get_max_threads()) + "}";
#endif
    aloe::team& team = aloe::team::global();
    const int size = team.size();
    std::vector<std::string> masks(static_cast<std::size_t>(size), "null");
    // Four iterations per worker: the static schedule gives every worker a part.
    aloe::parallel_for(team, 0, 4 * static_cast<std::int64_t>(size), "static", [&](aloe::subrange, int thread) {
        masks[static_cast<std::size_t>(thread)] = mask_of_this_thread();
    });
    std::string list;
    for (const std::string& m : masks) list += (list.empty() ? "" : ", ") + m;
    std::printf("{\"team_size\": %d, \"worker_masks\": [%s], \"openmp\": %s}\n", size, list.c_str(), openmp.c_str());
    return 0;
}

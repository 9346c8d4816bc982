#include "runtime/local_ranks.hpp"

#include <charconv>

namespace aloe::runtime {

int local_ranks_from(const env_lookup& env) {
    for (const char* name : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "PMI_LOCAL_SIZE", "SLURM_NTASKS_PER_NODE",
                             "SLURM_TASKS_PER_NODE"}) {
        const std::optional<std::string> v = env(name);
        if (!v || v->empty()) continue;
        int n = 0;
        const char* const last = v->data() + v->size();
        const auto [end, ec] = std::from_chars(v->data(), last, n);
        if (ec == std::errc() && n >= 1 && (end == last || *end == '(' || *end == ',')) return n;
    }
    return 1;
}

}  // namespace aloe::runtime

#include "omp/node_sharing.hpp"

#include <charconv>

namespace aloe::omp {

int local_ranks_from(const std::function<std::optional<std::string>(std::string_view)>& lookup) {
    for (const char* name : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE"}) {
        const std::optional<std::string> v = lookup(name);
        if (!v || v->empty()) continue;
        int n = 0;
        const auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
        // Slurm writes "4(x2)" for two nodes of 4; the leading count is this node's shape.
        if (ec == std::errc() && n >= 1 && (end == v->data() + v->size() || *end == '(')) return n;
    }
    return 1;
}

bool ranks_share_cpus_unbound(const node_share& n) noexcept {
    if (n.local_ranks < 2 || n.threads < 1 || n.allowed_cpus < 1 || n.online_cpus < 1) return false;
    const bool unbound = n.allowed_cpus >= n.online_cpus;
    return unbound && static_cast<long>(n.local_ranks) * n.threads > n.allowed_cpus;
}

}  // namespace aloe::omp

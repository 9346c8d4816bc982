#include "omp/node_sharing.hpp"


namespace aloe::omp {

bool ranks_share_cpus_unbound(const node_share& n) noexcept {
    if (n.local_ranks < 2 || n.threads < 1 || n.allowed_cpus < 1 || n.online_cpus < 1) return false;
    const bool unbound = n.allowed_cpus >= n.online_cpus;
    return unbound && static_cast<long>(n.local_ranks) * n.threads > n.allowed_cpus;
}

}  // namespace aloe::omp

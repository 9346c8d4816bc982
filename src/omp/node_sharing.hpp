// Whether the ranks of one node share its CPUs unbound, with more threads among them than
// CPUs. libgomp counts only its own process's threads: each rank sees every CPU allowed and
// its team no larger, so it spins at its barriers while the other ranks' threads need those
// CPUs (NAS BT-MZ, 2 ranks × 2 threads on 2 CPUs unbound: 1.08 s on plain libgomp, 6.7–8.8 s
// under aloe run, 0.10–0.11 s with passive waiting; bench/results/bt-mz-20261125). `aloe run`
// then starts the program with OMP_WAIT_POLICY=passive unless the user chose the waiting.
// Ranks bound to CPUs of their own (mpirun --bind-to, srun --cpu-bind) are left alone: their
// masks are smaller than the node, and libgomp throttles its spinning itself when its team
// outnumbers its mask.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace aloe::omp {

struct node_share {
    int local_ranks = 1;   ///< this node's ranks of the job (the launcher's variables)
    int threads = 0;       ///< each rank's team
    int allowed_cpus = 0;  ///< this process's affinity mask
    int online_cpus = 0;   ///< the node's online CPUs
};

/// Unbound (the mask is the whole node) and more threads on the node than CPUs.
bool ranks_share_cpus_unbound(const node_share& n) noexcept;

}  // namespace aloe::omp

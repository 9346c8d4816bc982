// What each rank of jacobi3d-mpi measured, per timed step: its compute time (the sweeps),
// its wait time (in the halo MPI_Waitall, or waiting for the communication thread, plus the
// residual MPI_Allreduce), the halo exchange's own time, and the whole step. Gathered to
// rank 0 after the timed steps for the record's "ranks" array.
#pragma once

#include "block_decomposition.hpp"

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace jacobi3d_mpi {

struct rank_record {
    int rank = 0;
    std::string host;
    std::vector<int> cpus;         // the process's affinity mask as it was given
    std::vector<int> thread_cpus;  // where the harness placed thread i (pinned runs)
    int threads = 1;
    block where;
    std::vector<double> compute_s, wait_s, halo_s, step_s;
    bool noise = false;            // this rank injects the --noise-* events
    std::uint64_t noise_seed = 0;
    std::int64_t noise_events = 0;
    double noise_injected_s = 0;
    bool background = false;       // this rank runs the --background child

    /// Reserves room for `steps` timed steps.
    void reserve(int steps);
    /// The rank's object in the record's "ranks" array.
    std::string json() const;
};

/// Gathers every rank's `text` to rank 0 of `comm`, in rank order (MPI_Gather of the
/// lengths, MPI_Gatherv of the characters); the other ranks get an empty vector.
std::vector<std::string> gather_text(MPI_Comm comm, const std::string& text);

}  // namespace jacobi3d_mpi

// What the network adds to a step: the collective that ends it (latency α and inverse
// bandwidth β per message, one message per round of a tree) and the halo exchange with
// grid neighbours. Pure arithmetic; the tests check it against hand-computed rounds.
#pragma once

#include "sim/machine_profile.hpp"

#include <cstdint>

namespace aloe::sim {

/// Rounds of messages a collective over `ranks` takes:
///  recursive doubling (MPICH's allreduce for short messages): log2 P rounds for a power
///    of two; otherwise floor(log2 P) + 2 (the ranks beyond the power of two fold their
///    data into a partner first and get the result back last);
///  binomial tree (reduce then broadcast): 2·ceil(log2 P).
/// One rank: 0.
int collective_rounds(machine_profile::collective_kind kind, std::int64_t ranks) noexcept;

/// Time of the collective once the last rank arrives: rounds × (α + β·bytes).
double collective_seconds(const machine_profile& p, std::int64_t ranks) noexcept;

/// Time of one halo exchange (one message each way with every neighbour at once): α + β·bytes.
double halo_seconds(const machine_profile& p) noexcept;

/// The neighbours of `node` among `nodes` laid out as a `dims`-D grid as near cubic as the
/// count allows (MPI_Dims_create's rule), not periodic. Writes up to 2·dims indices; returns
/// how many.
int grid_neighbours(std::int64_t node, std::int64_t nodes, int dims, std::int64_t out[6]) noexcept;

}  // namespace aloe::sim

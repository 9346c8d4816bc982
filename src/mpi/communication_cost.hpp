// What an intercepted call costs when nobody is late, so that the rest of the time inside it
// is slack (issue 15, item 2). Each call belongs to a cost class measured by the calibration
// at MPI_Init (mpi/calibration.cpp): a line, latency + bytes × per-byte time, fitted through
// the least time of a few synchronised repetitions at two message sizes.
//
// The slack of one invocation is the time inside minus that cost, where the cost is the
// smaller of the calibrated line and the least time ever seen inside the call at its key:
// the calibration may overestimate a call (a noisy repetition), and a rank that once arrived
// last at the key has seen its true cost. The key's own minimum alone is not enough: a rank
// that always waits (a constant imbalance) never sees its cost, and would report no slack.
#pragma once

#include "mpi/intercepted_calls.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string_view>

namespace aloe::mpi {

/// Calls that cost alike: each class is calibrated with one representative call.
enum class cost_class : std::uint8_t { barrier, reduction, broadcast, gathering, all_to_all, point_to_point, none };
inline constexpr int cost_class_count = 6;

constexpr cost_class cost_class_of(mpi_call c) noexcept {
    switch (c) {
        case mpi_call::Barrier: return cost_class::barrier;
        case mpi_call::Reduce:
        case mpi_call::Allreduce:
        case mpi_call::Reduce_scatter:
        case mpi_call::Reduce_scatter_block:
        case mpi_call::Scan:
        case mpi_call::Exscan: return cost_class::reduction;
        case mpi_call::Bcast:
        case mpi_call::Scatter:
        case mpi_call::Scatterv: return cost_class::broadcast;
        case mpi_call::Allgather:
        case mpi_call::Allgatherv:
        case mpi_call::Gather:
        case mpi_call::Gatherv: return cost_class::gathering;
        case mpi_call::Alltoall:
        case mpi_call::Alltoallv: return cost_class::all_to_all;
        case mpi_call::Wait:
        case mpi_call::Waitall:
        case mpi_call::Waitany:
        case mpi_call::Waitsome:
        case mpi_call::Recv:
        case mpi_call::Sendrecv:
        case mpi_call::Probe: return cost_class::point_to_point;
        default: return cost_class::none;  // MPI_Init, MPI_Finalize: no slack to speak of
    }
}

/// "barrier", "reduction", … as the statistics name them.
std::string_view cost_class_name(cost_class c) noexcept;

struct cost_line {
    double latency_s = 0;
    double per_byte_s = 0;
    bool measured = false;
};

class communication_cost {
public:
    /// Fits class `c`'s line through (small_bytes, small_s) and (large_bytes, large_s), with
    /// both terms at least 0 (a large message measured faster than a small one is noise).
    void fit(cost_class c, std::uint64_t small_bytes, double small_s, std::uint64_t large_bytes, double large_s) noexcept;

    /// The calibrated cost of `call` moving `bytes` (0 when the class was not calibrated).
    double of(mpi_call call, std::uint64_t bytes) const noexcept;

    const cost_line& line(cost_class c) const noexcept { return lines_[static_cast<std::size_t>(c)]; }

private:
    std::array<cost_line, cost_class_count> lines_{};
};

/// The slack of one invocation: the time inside beyond the call's cost (see above).
constexpr double slack_of(double inside_s, double model_cost_s, double least_inside_s) noexcept {
    const double cost = std::min(model_cost_s, least_inside_s);
    return std::max(inside_s - cost, 0.0);
}

}  // namespace aloe::mpi

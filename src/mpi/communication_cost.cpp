#include "mpi/communication_cost.hpp"

namespace aloe::mpi {

std::string_view cost_class_name(cost_class c) noexcept {
    switch (c) {
        case cost_class::barrier: return "barrier";
        case cost_class::reduction: return "reduction";
        case cost_class::broadcast: return "broadcast";
        case cost_class::gathering: return "gathering";
        case cost_class::all_to_all: return "all_to_all";
        case cost_class::point_to_point: return "point_to_point";
        case cost_class::none: break;
    }
    return "none";
}

void communication_cost::fit(cost_class c, std::uint64_t small_bytes, double small_s, std::uint64_t large_bytes,
                             double large_s) noexcept {
    if (c == cost_class::none) return;
    cost_line& l = lines_[static_cast<std::size_t>(c)];
    l.per_byte_s = large_bytes > small_bytes ? std::max((large_s - small_s) / static_cast<double>(large_bytes - small_bytes), 0.0) : 0.0;
    l.latency_s = std::max(small_s - l.per_byte_s * static_cast<double>(small_bytes), 0.0);
    l.measured = true;
}

double communication_cost::of(mpi_call call, std::uint64_t bytes) const noexcept {
    const cost_class c = cost_class_of(call);
    if (c == cost_class::none) return 0;
    const cost_line& l = lines_[static_cast<std::size_t>(c)];
    return l.latency_s + l.per_byte_s * static_cast<double>(bytes);
}

}  // namespace aloe::mpi

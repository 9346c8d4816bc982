#include "sim/network_model.hpp"

#include <array>
#include <bit>

namespace aloe::sim {

int collective_rounds(machine_profile::collective_kind kind, std::int64_t ranks) noexcept {
    if (ranks <= 1) return 0;
    const auto p = static_cast<std::uint64_t>(ranks);
    const int floor_log = 63 - std::countl_zero(p);
    const bool power = std::has_single_bit(p);
    switch (kind) {
        case machine_profile::collective_kind::none: return 0;
        case machine_profile::collective_kind::recursive_doubling: return power ? floor_log : floor_log + 2;
        case machine_profile::collective_kind::binomial: return 2 * (power ? floor_log : floor_log + 1);
    }
    return 0;
}

double collective_seconds(const machine_profile& p, std::int64_t ranks) noexcept {
    return collective_rounds(p.collective, ranks) * (p.alpha_s + p.beta_s_per_byte * static_cast<double>(p.collective_bytes));
}

double halo_seconds(const machine_profile& p) noexcept {
    return p.halo_dims > 0 ? p.alpha_s + p.beta_s_per_byte * static_cast<double>(p.halo_bytes) : 0.0;
}

namespace {
// MPI_Dims_create's balanced factorisation: the largest factors first, as equal as possible.
std::array<std::int64_t, 3> grid_dims(std::int64_t nodes, int dims) noexcept {
    std::array<std::int64_t, 3> d{1, 1, 1};
    std::int64_t rest = nodes;
    for (int i = 0; i < dims; ++i) {
        // The smallest divisor of rest that is at least rest^(1/(dims−i)).
        const int left = dims - i;
        std::int64_t target = 1;
        while (true) {
            std::int64_t pw = 1;
            for (int k = 0; k < left; ++k) pw *= target;
            if (pw >= rest) break;
            ++target;
        }
        std::int64_t f = target;
        while (f < rest && rest % f != 0) ++f;
        if (left == 1) f = rest;
        d[static_cast<std::size_t>(i)] = f;
        rest /= f;
    }
    return d;
}
}  // namespace

int grid_neighbours(std::int64_t node, std::int64_t nodes, int dims, std::int64_t out[6]) noexcept {
    if (dims <= 0 || nodes <= 1) return 0;
    const auto d = grid_dims(nodes, dims);
    std::array<std::int64_t, 3> at{node % d[0], (node / d[0]) % d[1], node / (d[0] * d[1])};
    int count = 0;
    for (int i = 0; i < dims; ++i) {
        for (int step : {-1, 1}) {
            auto c = at;
            c[static_cast<std::size_t>(i)] += step;
            if (c[static_cast<std::size_t>(i)] < 0 || c[static_cast<std::size_t>(i)] >= d[static_cast<std::size_t>(i)]) continue;
            out[count++] = c[0] + d[0] * (c[1] + d[1] * c[2]);
        }
    }
    return count;
}

}  // namespace aloe::sim

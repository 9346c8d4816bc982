// The ring of HPX's 1d_stencil_4 (reference 002, §3.1): heat diffusion on a periodic line of
// nx points, next[i] = mid + k dt / dx^2 (left - 2 mid + right), cut into partitions of equal
// size (the last one shorter when the size does not divide nx). A partition's update for one
// timestep is one task.
//
// Each point's new value is heat() of its three old values, the same expression whatever the
// partition it falls in, so every partitioning, runtime and order gives the same bits.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace aloe_apps::stencil {

/// The update of one point.
inline double heat(double left, double mid, double right, double coefficient) noexcept {
    return mid + coefficient * (left - 2.0 * mid + right);
}

/// How the ring is cut: `size` points per partition, `count` partitions.
struct partitioning {
    std::int64_t nx = 0;
    std::int64_t size = 0;
    std::int64_t count = 0;

    static partitioning of(std::int64_t nx, std::int64_t size) noexcept {
        const std::int64_t s = std::clamp<std::int64_t>(size, 1, nx);
        return {nx, s, (nx + s - 1) / s};
    }
    std::int64_t begin(std::int64_t p) const noexcept { return p * size; }
    std::int64_t end(std::int64_t p) const noexcept { return std::min(nx, (p + 1) * size); }
    std::int64_t left(std::int64_t p) const noexcept { return p == 0 ? count - 1 : p - 1; }
    std::int64_t right(std::int64_t p) const noexcept { return p == count - 1 ? 0 : p + 1; }
    bool operator==(const partitioning&) const = default;
};

/// The timestep of partition p: reads `in` (the whole ring, for its two neighbours' edge
/// points), writes `out` over the partition's points.
inline void update_partition(const double* in, double* out, const partitioning& parts, std::int64_t p,
                             double coefficient) noexcept {
    const std::int64_t n = parts.nx, b = parts.begin(p), e = parts.end(p);
    const auto at = [&](std::int64_t i) { return in[i < 0 ? n - 1 : i == n ? 0 : i]; };
    out[b] = heat(at(b - 1), in[b], at(b + 1), coefficient);
    for (std::int64_t i = b + 1; i < e - 1; ++i) out[i] = heat(in[i - 1], in[i], in[i + 1], coefficient);
    if (e - 1 > b) out[e - 1] = heat(in[e - 2], in[e - 1], at(e), coefficient);
}

/// The two timestep buffers, and which holds the current state.
struct ring {
    std::vector<double> u[2];
    int now = 0;
    double coefficient = 0.5;

    /// HPX's initial condition, f(0, i) = i.
    ring(std::int64_t nx, double coefficient_) : coefficient(coefficient_) {
        for (auto& b : u) b.resize(static_cast<std::size_t>(nx));
        for (std::int64_t i = 0; i < nx; ++i) u[0][static_cast<std::size_t>(i)] = static_cast<double>(i);
    }
    std::int64_t nx() const noexcept { return static_cast<std::int64_t>(u[0].size()); }
    /// The buffer the state of timestep s of an epoch (0: its start) is in.
    const double* state(int s) const noexcept { return u[(now + s) & 1].data(); }
    double* state(int s) noexcept { return u[(now + s) & 1].data(); }
};

/// One timestep of the whole ring, serially, partition by partition.
inline void step_serial(ring& r, const partitioning& parts) {
    const double* in = r.state(0);
    double* out = r.state(1);
    for (std::int64_t p = 0; p < parts.count; ++p) update_partition(in, out, parts, p, r.coefficient);
    r.now ^= 1;
}

}  // namespace aloe_apps::stencil

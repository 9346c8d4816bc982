// One rank's part of the global grid, with a ghost layer on each side, and the jacobi3d sweep
// over boxes of it. The update of a point is jacobi3d's (apps/jacobi3d), the same expression
// in the same order, so whichever rank and thread sweeps it, a point gets the same bits as in
// a serial sweep of the whole grid; the initial condition is jacobi3d's too.
#pragma once

#include "block_decomposition.hpp"

#include <cstdint>
#include <vector>

namespace jacobi3d_mpi {

/// A half-open range of local indices along one axis.
struct index_range {
    std::int64_t lo = 0, hi = 0;
    bool empty() const noexcept { return hi <= lo; }
};

/// A rectangle of one plane: rows [j.lo, j.hi), columns [i.lo, i.hi), local indices.
struct plane_box {
    index_range i, j;
    bool empty() const noexcept { return i.empty() || j.empty(); }
};

/// Where a block's points live in its storage: (size.x + 2) × (size.y + 2) × (size.z + 2)
/// doubles, x fastest, owned point (i, j, k) (0 ≤ i < size.x, …) at at(i, j, k), ghosts at
/// index -1 and size along each axis.
class block_layout {
public:
    block_layout(const extent3& global, const block& b);

    const extent3& size() const noexcept { return size_; }
    const extent3& offset() const noexcept { return offset_; }
    const extent3& global() const noexcept { return global_; }
    std::int64_t stride_y() const noexcept { return size_.x + 2; }
    std::int64_t stride_z() const noexcept { return (size_.x + 2) * (size_.y + 2); }
    std::int64_t storage() const noexcept { return stride_z() * (size_.z + 2); }
    std::int64_t at(std::int64_t i, std::int64_t j, std::int64_t k) const noexcept {
        return ((k + 1) * (size_.y + 2) + (j + 1)) * (size_.x + 2) + (i + 1);
    }
    /// The local indices a sweep updates per axis: those whose global index is interior.
    const index_range& update_x() const noexcept { return ux_; }
    const index_range& update_y() const noexcept { return uy_; }
    const index_range& update_z() const noexcept { return uz_; }

private:
    extent3 global_, offset_, size_;
    index_range ux_, uy_, uz_;
};

/// The initial condition over the whole storage (ghosts where they lie inside the grid).
std::vector<double> initial_block(const block_layout& l);

/// One Jacobi update of the points of plane k in `box` from `in` into `out`; returns the
/// largest |new - old| among them (0 for an empty box).
double sweep_box(const block_layout& l, const double* in, double* out, std::int64_t k, const plane_box& box);

/// The owned points, unpadded, x fastest (the gather's and the serial grid's layout).
std::vector<double> owned_points(const block_layout& l, const std::vector<double>& storage);

/// A serial sweep of every point the block updates; returns the largest |new - old|.
double sweep_all(const block_layout& l, const std::vector<double>& in, std::vector<double>& out);

}  // namespace jacobi3d_mpi

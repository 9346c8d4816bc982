#include "local_block.hpp"

#include <algorithm>
#include <cmath>

namespace jacobi3d_mpi {

namespace {

// Local indices along an axis whose global index g = offset + local is in [1, n - 1).
index_range interior(std::int64_t offset, std::int64_t size, std::int64_t n) {
    return {std::max<std::int64_t>(0, 1 - offset), std::min(size, n - 1 - offset)};
}

}  // namespace

block_layout::block_layout(const extent3& global, const block& b)
    : global_(global), offset_(b.offset), size_(b.size), ux_(interior(b.offset.x, b.size.x, global.x)),
      uy_(interior(b.offset.y, b.size.y, global.y)), uz_(interior(b.offset.z, b.size.z, global.z)) {}

std::vector<double> initial_block(const block_layout& l) {
    std::vector<double> u(static_cast<std::size_t>(l.storage()), 0.0);
    const extent3& g = l.global();
    const extent3& o = l.offset();
    for (std::int64_t k = -1; k <= l.size().z; ++k) {
        for (std::int64_t j = -1; j <= l.size().y; ++j) {
            for (std::int64_t i = -1; i <= l.size().x; ++i) {
                const std::int64_t gi = o.x + i, gj = o.y + j, gk = o.z + k;
                if (gi < 0 || gj < 0 || gk < 0 || gi >= g.x || gj >= g.y || gk >= g.z) continue;
                // apps/jacobi3d's pattern: a short period in [1, 1.5).
                u[static_cast<std::size_t>(l.at(i, j, k))] = 1.0 + static_cast<double>((7 * gi + 13 * gj + 17 * gk) % 32) / 64.0;
            }
        }
    }
    return u;
}

double sweep_box(const block_layout& l, const double* in, double* out, std::int64_t k, const plane_box& box) {
    const std::int64_t sy = l.stride_y();
    const std::int64_t sz = l.stride_z();
    double residual = 0;
    for (std::int64_t j = box.j.lo; j < box.j.hi; ++j) {
        const double* c = in + l.at(0, j, k);
        double* o = out + l.at(0, j, k);
        for (std::int64_t i = box.i.lo; i < box.i.hi; ++i) {
            // apps/jacobi3d's expression, term for term: x-1, x+1, y-1, y+1, z-1, z+1.
            o[i] = (c[i - 1] + c[i + 1] + c[i - sy] + c[i + sy] + c[i - sz] + c[i + sz]) * (1.0 / 6.0);
            residual = std::max(residual, std::fabs(o[i] - c[i]));
        }
    }
    return residual;
}

std::vector<double> owned_points(const block_layout& l, const std::vector<double>& storage) {
    std::vector<double> out;
    out.reserve(static_cast<std::size_t>(l.size().volume()));
    for (std::int64_t k = 0; k < l.size().z; ++k)
        for (std::int64_t j = 0; j < l.size().y; ++j) {
            const double* row = storage.data() + l.at(0, j, k);
            out.insert(out.end(), row, row + l.size().x);
        }
    return out;
}

double sweep_all(const block_layout& l, const std::vector<double>& in, std::vector<double>& out) {
    double residual = 0;
    const plane_box whole{l.update_x(), l.update_y()};
    for (std::int64_t k = l.update_z().lo; k < l.update_z().hi; ++k)
        residual = std::max(residual, sweep_box(l, in.data(), out.data(), k, whole));
    return residual;
}

}  // namespace jacobi3d_mpi

// jacobi3d: Kale & Gropp's model problem (shared/reference/003, section 2.1): timestepped
// 7-point Jacobi relaxation on a 3D grid of doubles, the threaded loop running over the
// interior planes of the outermost index. Every plane costs the same and the grid is larger
// than the caches, so a static split is ideal on a quiet machine: imbalance comes only from
// noise (--noise-p, --background), and a schedule that moves planes between cores pays in
// cache misses. This is the loop aloe's hybrid schedules were designed for.
//
// Two buffers are swapped each step; the boundary is fixed (Dirichlet) and the initial
// condition is a deterministic pattern in [1, 1.5), so every value stays in that range (no
// subnormals) and every point's arithmetic is the same whichever thread sweeps its plane.
#include "common/harness.hpp"
#include "common/result_check.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace {

using aloe_apps::usage_error;

/// A grid of nx × ny × nz points, x fastest: point (i, j, k) is at (k ny + j) nx + i.
struct grid_shape {
    std::int64_t nx, ny, nz;

    std::int64_t plane() const noexcept { return nx * ny; }
    std::int64_t points() const noexcept { return plane() * nz; }
    std::int64_t at(std::int64_t i, std::int64_t j, std::int64_t k) const noexcept { return (k * ny + j) * nx + i; }
};

/// The initial condition, boundary included: a short-period pattern in [1, 1.5).
std::vector<double> initial_grid(const grid_shape& g) {
    std::vector<double> u(static_cast<std::size_t>(g.points()));
    for (std::int64_t k = 0; k < g.nz; ++k)
        for (std::int64_t j = 0; j < g.ny; ++j)
            for (std::int64_t i = 0; i < g.nx; ++i)
                u[g.at(i, j, k)] = 1.0 + static_cast<double>((7 * i + 13 * j + 17 * k) % 32) / 64.0;
    return u;
}

/// One Jacobi update of the interior points of plane k (0 < k < nz - 1) of `in`, written to
/// `out_plane` (the nx × ny plane's own storage; boundary rows and columns left alone).
void sweep_plane(const grid_shape& g, const double* in, std::int64_t k, double* out_plane) {
    const std::int64_t nx = g.nx;
    const std::int64_t pl = g.plane();
    for (std::int64_t j = 1; j < g.ny - 1; ++j) {
        const double* c = in + g.at(0, j, k);
        double* o = out_plane + j * nx;
        for (std::int64_t i = 1; i < nx - 1; ++i)
            o[i] = (c[i - 1] + c[i + 1] + c[i - nx] + c[i + nx] + c[i - pl] + c[i + pl]) * (1.0 / 6.0);
    }
}

/// One serial sweep of the whole grid from `in` into `out`.
void sweep_serial(const grid_shape& g, const std::vector<double>& in, std::vector<double>& out) {
    for (std::int64_t k = 1; k < g.nz - 1; ++k) sweep_plane(g, in.data(), k, out.data() + k * g.plane());
}

}  // namespace

int main(int argc, char** argv) {
    return aloe_apps::run_workload("jacobi3d", argc, argv, [](aloe_apps::harness& h) {
        auto& f = h.flags();
        const grid_shape g{f.integer("--nx", 256, "grid points along x (contiguous)"),
                           f.integer("--ny", 128, "grid points along y"),
                           f.integer("--nz", 128, "grid points along z (the planes the loop runs over)")};
        if (g.nx < 3 || g.ny < 3 || g.nz < 3)
            throw usage_error("flags --nx, --ny, --nz: each must be at least 3 (one interior point), not " +
                              std::to_string(g.nx) + " x " + std::to_string(g.ny) + " x " + std::to_string(g.nz));
        h.default_steps(50, 3);
        h.start();
        h.param("nx", g.nx);
        h.param("ny", g.ny);
        h.param("nz", g.nz);

        // Both buffers hold the boundary, which no sweep writes.
        std::vector<double> cur = initial_grid(g);
        std::vector<double> next = cur;
        int sweeps = 0;
        h.run_steps([&](int) {
            const double* in = cur.data();
            double* out = next.data();
            h.parallel_for("jacobi3d/planes", g.nz - 2,
                           [&](std::int64_t p) { sweep_plane(g, in, p + 1, out + (p + 1) * g.plane()); });
            std::swap(cur, next);
            ++sweeps;
        });
        // Now `cur` is the result and `next` the input of the last sweep.

        if (h.corrupt_result()) cur[g.at(g.nx / 2, g.ny / 2, g.nz / 2)] += 1.0;  // an interior point
        double sum = 0;
        for (const double v : cur) sum += v;
        h.checksum(sum);

        if (h.full_check()) {
            std::vector<double> a = initial_grid(g);
            std::vector<double> b = a;
            for (int s = 0; s < sweeps; ++s) {
                sweep_serial(g, a, b);
                std::swap(a, b);
            }
            const std::int64_t n = aloe_apps::differing_values(cur, a);
            h.check(n == 0, "points that differ from a serial re-run of all " + std::to_string(sweeps) + " sweeps",
                    static_cast<double>(n), 0);
        } else {
            std::vector<double> again = next;  // its boundary, and the sweep fills the interior
            sweep_serial(g, next, again);
            const std::int64_t n = aloe_apps::differing_values(cur, again);
            h.check(n == 0, "points that differ from a serial re-run of the last sweep", static_cast<double>(n), 0);
        }
    });
}

// stencil1d: the explicit heat equation on a ring of --n points,
//   u'[i] = u[i] + r (u[i-1] - 2 u[i] + u[i+1]),
// one threaded loop over the points per timestep. Each iteration is a few loads and flops and
// all cost the same, so the loop is memory-bound and perfectly balanced: what separates the
// schedules here is their per-chunk cost and whether points stay on the core that touched
// them last step, the opposite end from synthetic's expensive, imbalanced iterations.
//
// Two buffers are swapped each step. The initial condition is a deterministic pattern in
// [1, 2), and with r <= 1/2 each new value is a convex combination of old ones, so values
// stay near that range (never subnormal) and each point's arithmetic is the same on any thread.
#include "common/harness.hpp"
#include "common/result_check.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace {

using aloe_apps::usage_error;

/// The initial condition: a Weyl sequence in [1, 2) (the golden-ratio multiplier), rough at
/// every scale and using all 52 fraction bits, so the steps round from the first one.
std::vector<double> initial_ring(std::int64_t n) {
    std::vector<double> u(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
        const std::uint64_t h = static_cast<std::uint64_t>(i) * 0x9e3779b97f4a7c15ULL;
        u[i] = 1.0 + static_cast<double>(h >> 12) * 0x1p-52;
    }
    return u;
}

/// The new value of point i of the ring `u` of n points.
double heat_point(const double* u, std::int64_t n, std::int64_t i, double r) noexcept {
    const double left = u[i == 0 ? n - 1 : i - 1];
    const double right = u[i == n - 1 ? 0 : i + 1];
    return u[i] + r * (left - 2.0 * u[i] + right);
}

/// One serial step of the whole ring from `in` into `out`.
void step_serial(const std::vector<double>& in, std::vector<double>& out, double r) {
    const auto n = static_cast<std::int64_t>(in.size());
    for (std::int64_t i = 0; i < n; ++i) out[i] = heat_point(in.data(), n, i, r);
}

}  // namespace

int main(int argc, char** argv) {
    return aloe_apps::run_workload("stencil1d", argc, argv, [](aloe_apps::harness& h) {
        auto& f = h.flags();
        const std::int64_t n = f.integer("--n", 4 << 20, "points on the ring");
        const double r = f.real("--r", 0.3, "diffusion number dt D / dx^2 (stable up to 0.5)");
        if (n < 3) throw usage_error("flag --n: must be at least 3, not " + std::to_string(n));
        if (!(r > 0 && r <= 0.5)) throw usage_error("flag --r: must be in (0, 0.5]");
        h.default_steps(50, 3);
        h.start();
        h.param("n", n);
        h.param("r", r);

        std::vector<double> cur = initial_ring(n);
        std::vector<double> next(cur.size());
        int steps = 0;
        h.run_steps([&](int) {
            const double* in = cur.data();
            double* out = next.data();
            h.parallel_for("stencil1d/points", n, [&](std::int64_t i) { out[i] = heat_point(in, n, i, r); });
            std::swap(cur, next);
            ++steps;
        });
        // Now `cur` is the result and `next` the input of the last step.

        if (h.corrupt_result()) cur[n / 2] += 1.0;
        // The sum of u is conserved by the scheme, so it would not see a misplaced update; the
        // sum of squares decays with every step.
        double sum = 0;
        for (const double v : cur) sum += v * v;
        h.checksum(sum);

        std::vector<double> again(cur.size());
        if (h.full_check()) {
            std::vector<double> a = initial_ring(n);
            for (int s = 0; s < steps; ++s) {
                step_serial(a, again, r);
                std::swap(a, again);
            }
            const std::int64_t d = aloe_apps::differing_values(cur, a);
            h.check(d == 0, "points that differ from a serial re-run of all " + std::to_string(steps) + " steps",
                    static_cast<double>(d), 0);
        } else {
            step_serial(next, again, r);
            const std::int64_t d = aloe_apps::differing_values(cur, again);
            h.check(d == 0, "points that differ from a serial re-run of the last step", static_cast<double>(d), 0);
        }
    });
}

// barnes-hut: the force loop of a gravitational N-body code, one Barnes-Hut step per timestep
// on a Plummer sphere (plummer.hpp). The threaded loop is over bodies; a body's cost is the
// number of cells and bodies its tree walk (octree.hpp) visits, about 2.5 times more in the
// dense core than in the outer halo (at theta 0.5: 10th percentile 740 visits, median 1500,
// 90th percentile 1900, for 8192 bodies). By default the bodies are numbered outward from the
// centre (sorted by radius), a benchmark choice: the costly core comes first, so a static split
// is imbalanced (about 1.25x on 2 threads, 1.4x on 8, counted in visits). --order tree numbers
// them in the tree's space-filling order instead, as production tree codes store them for
// locality: a symmetric sphere then splits evenly into octants and static is balanced.
//
// A step is drift-kick-drift leapfrog (leapfrog.hpp): move half a step, build the tree, compute
// every body's acceleration (the threaded loop), then kick and move the second half; all but
// the force loop is serial. Each body's walk has a fixed order, so every runtime and schedule
// gives the same bits; the checksum is the serial sum of |x| + |y| + |z| over the final
// positions. Checks: the last step's forces of sampled bodies (--check full: of every body, and
// a serial re-run of every step) against a serial walk, bit for bit, and against the direct sum.
#include "common/harness.hpp"
#include "leapfrog.hpp"
#include "octree.hpp"
#include "plummer.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace {

using aloe_apps::nbody::bodies;
using aloe_apps::nbody::leapfrog;
using aloe_apps::nbody::octree;
using aloe_apps::nbody::vec3;

// Bodies whose forces the quick check recomputes, spread evenly: a guess, cheap next to a step.
constexpr std::int64_t quick_sample_bodies = 32;

/// The exact (softened) acceleration on body i: the direct sum over every other body, in index order.
vec3 direct_acceleration(const std::vector<vec3>& position, const std::vector<double>& mass, std::size_t i,
                         double eps2) {
    vec3 a;
    for (std::size_t j = 0; j < position.size(); ++j) {
        if (j == i) continue;
        const vec3 d = position[j] - position[i];
        const double s2 = dot(d, d) + eps2;
        a += d * (mass[j] / (s2 * std::sqrt(s2)));
    }
    return a;
}

/// Renumbers the bodies so that body k is the old body order[k].
void renumber(bodies& b, const std::vector<std::int32_t>& order) {
    bodies sorted;
    for (const std::int32_t k : order) {
        const auto i = static_cast<std::size_t>(k);
        sorted.position.push_back(b.position[i]);
        sorted.velocity.push_back(b.velocity[i]);
        sorted.mass.push_back(b.mass[i]);
    }
    b = std::move(sorted);
}

/// The bodies from the centre outward (ties, which the draw makes unlikely, by index).
std::vector<std::int32_t> outward(const bodies& b) {
    std::vector<std::int32_t> order(b.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::int32_t>(i);
    const auto r2 = [&](std::int32_t i) {
        const vec3& p = b.position[static_cast<std::size_t>(i)];
        return dot(p, p);
    };
    std::stable_sort(order.begin(), order.end(), [&](std::int32_t i, std::int32_t j) { return r2(i) < r2(j); });
    return order;
}

/// The largest force error the accuracy check accepts at opening angle theta: |a_tree - a_exact|
/// over max(|a_exact|, the sample's mean |a_exact|), so that bodies near the centre, where the
/// pulls cancel and |a| is small, are held to the typical scale instead. Measured on Plummer
/// spheres of 600 and 4096 bodies, seeds 1-3, over every body, the largest such error was
/// 0.0024, 0.013, 0.035 and 0.12 at theta 0.3, 0.5, 0.7 and 1 (about theta^3); the bound is
/// 0.25 theta^3, over twice those. A broken tree errs by tens of percent. theta = 0 sums every
/// pair, exact up to rounding.
double force_tolerance(double theta) {
    return std::max(1e-10, 0.25 * theta * theta * theta);
}

}  // namespace

int main(int argc, char** argv) {
    return aloe_apps::run_workload("barnes-hut", argc, argv, [](aloe_apps::harness& h) {
        h.default_steps(20, 2);  // about 0.7 s of timed steps at the defaults on 2 cores
        auto& f = h.flags();
        const std::int64_t n = f.integer("--bodies", 8192, "bodies (the threaded loop)");
        const double theta = f.real("--theta", 0.5, "opening angle, in [0, 1]; 0 sums every pair");
        const double softening = f.real("--softening", 0.01, "Plummer softening length");
        const double dt = f.real("--dt", 1.0 / 256, "timestep (Hénon units: the crossing time is about 2.8)");
        const std::int64_t seed = f.integer("--seed", 1, "seed of the initial conditions");
        const std::string numbering =
            f.text("--order", "radius", "body numbering: radius (outward), tree (space-filling), drawn");
        if (n < 2 || n > std::numeric_limits<std::int32_t>::max())
            throw aloe_apps::usage_error("--bodies must be in [2, 2^31)");
        if (!(theta >= 0 && theta <= 1)) throw aloe_apps::usage_error("--theta must be in [0, 1]");
        if (!(softening > 0 && softening < 1)) throw aloe_apps::usage_error("--softening must be in (0, 1)");
        if (!(dt > 0 && dt <= 0.1)) throw aloe_apps::usage_error("--dt must be in (0, 0.1]");
        if (seed < 0) throw aloe_apps::usage_error("--seed must not be negative");
        if (numbering != "tree" && numbering != "radius" && numbering != "drawn")
            throw aloe_apps::usage_error("--order must be tree, radius or drawn, not '" + numbering + "'");
        h.start();
        h.param("bodies", n);
        h.param("theta", theta);
        h.param("softening", softening);
        h.param("dt", dt);
        h.param("seed", seed);
        h.param("order", numbering);

        bodies b = aloe_apps::nbody::make_plummer(n, static_cast<std::uint64_t>(seed));
        if (numbering == "tree") {
            octree tree;
            tree.build(b.position, b.mass, theta);
            renumber(b, tree.order());
        } else if (numbering == "radius") {
            renumber(b, outward(b));
        }

        leapfrog sim;
        sim.theta = theta;
        sim.eps2 = softening * softening;
        sim.dt = dt;
        sim.state = b;  // b stays the initial state, for the full check's re-run
        h.run_steps([&](int) {
            sim.step([&](std::int64_t count, const auto& force) { h.parallel_for("barnes-hut/forces", count, force); });
        });
        h.param("tree_cells", sim.tree.cells());
        h.param("tree_depth", sim.tree.depth());

        std::vector<std::size_t> sample;
        const std::int64_t wanted = h.full_check() ? n : std::min<std::int64_t>(n, quick_sample_bodies);
        for (std::int64_t k = 0; k < wanted; ++k)
            sample.push_back(static_cast<std::size_t>(wanted == 1 ? 0 : k * (n - 1) / (wanted - 1)));
        if (h.corrupt_result()) sim.acceleration[sample[sample.size() / 2]].x += 1.0;

        double sum = 0;
        for (const vec3& p : sim.state.position) sum += std::abs(p.x) + std::abs(p.y) + std::abs(p.z);
        h.checksum(sum);

        // Reproducible: the last step's tree forces, recomputed serially, bit for bit.
        // Right: the same forces against the direct sum, within the opening angle's error.
        std::int64_t differing = 0;
        std::vector<double> error(sample.size()), exact_size(sample.size());
        double mean_size = 0;
        for (std::size_t k = 0; k < sample.size(); ++k) {
            const std::size_t i = sample[k];
            const vec3 walked = sim.tree.acceleration(static_cast<std::int32_t>(i), sim.middle[i], sim.eps2);
            const vec3& got = sim.acceleration[i];
            differing += (walked.x != got.x || walked.y != got.y || walked.z != got.z) ? 1 : 0;
            const vec3 exact = direct_acceleration(sim.middle, sim.state.mass, i, sim.eps2);
            error[k] = norm(got - exact);
            exact_size[k] = norm(exact);
            mean_size += exact_size[k] / static_cast<double>(sample.size());
        }
        double worst = 0;
        for (std::size_t k = 0; k < sample.size(); ++k)
            worst = std::max(worst, error[k] / std::max(exact_size[k], mean_size));
        const std::string which = h.full_check() ? "every body" : std::to_string(sample.size()) + " sampled bodies";
        h.check(differing == 0, "forces differing from a serial tree walk, " + which, static_cast<double>(differing),
                0);
        h.check(worst <= force_tolerance(theta), "largest force error against the direct sum, " + which, worst,
                force_tolerance(theta));

        if (h.full_check()) {  // every step again, serially, from the same start
            leapfrog again = sim;
            again.state = b;
            for (int s = 0; s < h.warmup() + h.steps(); ++s)
                again.step([](std::int64_t count, const auto& force) {
                    for (std::int64_t i = 0; i < count; ++i) force(i);
                });
            std::int64_t moved = 0;
            for (std::size_t i = 0; i < b.size(); ++i) {
                const vec3 &p = sim.state.position[i], &q = again.state.position[i];
                const vec3 &v = sim.state.velocity[i], &w = again.state.velocity[i];
                moved += (p.x != q.x || p.y != q.y || p.z != q.z || v.x != w.x || v.y != w.y || v.z != w.z) ? 1 : 0;
            }
            h.check(moved == 0, "bodies differing from a serial re-run of every step", static_cast<double>(moved), 0);
        }
    });
}

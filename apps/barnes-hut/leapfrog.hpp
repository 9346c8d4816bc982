// The timestep of the barnes-hut workload: drift-kick-drift leapfrog around one tree force
// evaluation. The drifts, the kick and the tree build are serial (octree.hpp says why); the
// force loop is handed to the caller, which runs it threaded (the timed run) or serially (the
// full check's re-run). Each body's force and update depend only on the tree and the body, so
// both give the same bits.
#pragma once

#include "octree.hpp"
#include "plummer.hpp"
#include "vec3.hpp"

#include <cstdint>
#include <vector>

namespace aloe_apps::nbody {

struct leapfrog {
    bodies state;
    double theta = 0.5;
    double eps2 = 0;  // softening length squared
    double dt = 0;
    octree tree;                     // the last step's tree, over `middle`
    std::vector<vec3> middle;        // positions after the first half-drift
    std::vector<vec3> acceleration;  // at `middle`

    /// One step: x += v dt/2; build the tree; a = forces (run by `for_each_body(n, force)`,
    /// which must call force(i) once for each i in [0, n)); v += a dt; x += v dt/2.
    template <class ForEachBody>
    void step(ForEachBody&& for_each_body) {
        const std::size_t n = state.size();
        middle.resize(n);
        acceleration.resize(n);
        for (std::size_t i = 0; i < n; ++i) middle[i] = state.position[i] + state.velocity[i] * (dt / 2);
        tree.build(middle, state.mass, theta);
        for_each_body(static_cast<std::int64_t>(n), [this](std::int64_t i) {
            const auto k = static_cast<std::size_t>(i);
            acceleration[k] = tree.acceleration(static_cast<std::int32_t>(i), middle[k], eps2);
        });
        for (std::size_t i = 0; i < n; ++i) {
            state.velocity[i] += acceleration[i] * dt;
            state.position[i] = middle[i] + state.velocity[i] * (dt / 2);
        }
    }
};

}  // namespace aloe_apps::nbody

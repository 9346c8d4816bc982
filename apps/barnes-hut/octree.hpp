// The octree of the barnes-hut workload (Barnes & Hut 1986, Nature 324, 446): cells of space
// split in eight until a cell holds a few bodies, each cell summarised by its mass and centre
// of mass. A body's acceleration is the sum over a walk of the tree that takes a far cell as one
// point mass and opens a near one, so it costs O(log n) interactions in a uniform region and
// more where bodies are dense.
//
// The build is serial: the workload times the force loop's schedule, and keeping the build out
// of the threaded loops keeps the tree (its node order, hence every sum) identical in every
// run. The walk only reads the tree, so many threads may walk it at once.
#pragma once

#include "vec3.hpp"

#include <cstdint>
#include <vector>

namespace aloe_apps::nbody {

class octree {
public:
    /// Rebuilds the tree over `position` and `mass` (same length, n >= 1), with cells accepted
    /// as point masses by opening angle `theta` in [0, 1] (0: never, an exact sum). Serial;
    /// O(n log n); reuses the previous build's memory.
    void build(const std::vector<vec3>& position, const std::vector<double>& mass, double theta);

    /// The acceleration on body `body`, at `at` (its position in the build), from every other
    /// body: G = 1, Plummer softening eps2 (a^2 = m d / (d^2 + eps2)^1.5). The walk visits cells
    /// depth first, children in octant order, bodies of a leaf in build order, so the result's
    /// bits depend only on the tree. Thread-safe (reads only); allocates nothing.
    vec3 acceleration(std::int32_t body, const vec3& at, double eps2) const;

    /// The bodies in the tree's leaf order (a Morton-like space-filling order).
    const std::vector<std::int32_t>& order() const noexcept { return order_; }
    std::size_t cells() const noexcept { return cells_.size(); }
    int depth() const noexcept { return depth_; }

private:
    struct cell {
        vec3 centre_of_mass;
        double mass = 0;
        double open2 = 0;           // the walk opens the cell when closer than sqrt(open2)
        std::int32_t first_child = 0;
        std::int32_t children = 0;  // 0: a leaf
        std::int32_t first_body = 0;  // leaves: bodies [first_body, first_body + bodies) of order_
        std::int32_t bodies = 0;
    };

    void build_cell(std::int32_t index, std::int32_t begin, std::int32_t end, const vec3& centre, double half,
                    int level);

    std::vector<cell> cells_;
    std::vector<std::int32_t> order_;  // body indices, grouped by leaf
    std::vector<std::int32_t> scratch_;
    std::vector<vec3> leaf_position_;  // position[order_[k]], contiguous for the walk
    std::vector<double> leaf_mass_;
    const std::vector<vec3>* position_ = nullptr;  // valid during build() only
    const std::vector<double>* mass_ = nullptr;
    double theta_ = 0.5;
    int depth_ = 0;
};

}  // namespace aloe_apps::nbody

// The octree build and walk of octree.hpp.
#include "octree.hpp"

#include <algorithm>
#include <array>
#include <limits>

namespace aloe_apps::nbody {
namespace {

// Bodies per leaf: buckets of a few bodies make a smaller tree that is walked faster than one
// body per leaf (a guess in the range tree codes use; not tuned).
constexpr std::int32_t leaf_bodies = 8;
// Deepest level: a cell 2^-40 of the box is far below the softening length; deeper cells only
// arise from coincident bodies, which then share a leaf.
constexpr int max_level = 40;
// The walk's stack: each level pops one cell and pushes at most eight.
constexpr std::size_t stack_capacity = 8 * max_level + 8;

int octant(const vec3& p, const vec3& centre) noexcept {
    return (p.x >= centre.x ? 1 : 0) | (p.y >= centre.y ? 2 : 0) | (p.z >= centre.z ? 4 : 0);
}

}  // namespace

void octree::build(const std::vector<vec3>& position, const std::vector<double>& mass, double theta) {
    position_ = &position;
    mass_ = &mass;
    theta_ = theta;
    depth_ = 0;
    const auto n = static_cast<std::int32_t>(position.size());
    order_.resize(position.size());
    for (std::int32_t i = 0; i < n; ++i) order_[static_cast<std::size_t>(i)] = i;
    scratch_.resize(position.size());

    // The root: the bounding cube of the bodies (at least 2^-30 wide, should they all
    // coincide), its half-width widened by 2^-20 so that bodies on the upper faces fall inside.
    vec3 lo = position[0], hi = position[0];
    for (const vec3& p : position) {
        lo = {std::min(lo.x, p.x), std::min(lo.y, p.y), std::min(lo.z, p.z)};
        hi = {std::max(hi.x, p.x), std::max(hi.y, p.y), std::max(hi.z, p.z)};
    }
    const vec3 centre = (lo + hi) * 0.5;
    const double half = std::max({hi.x - lo.x, hi.y - lo.y, hi.z - lo.z, 0x1p-30}) * (0.5 * (1 + 0x1p-20));

    cells_.clear();
    cells_.emplace_back();
    build_cell(0, 0, n, centre, half, 0);

    leaf_position_.resize(position.size());
    leaf_mass_.resize(position.size());
    for (std::size_t k = 0; k < order_.size(); ++k) {
        leaf_position_[k] = position[static_cast<std::size_t>(order_[k])];
        leaf_mass_[k] = mass[static_cast<std::size_t>(order_[k])];
    }
    position_ = nullptr;
    mass_ = nullptr;
}

// Cell `index` covers the cube (centre, half) and the bodies order_[begin, end). A leaf sums
// its bodies; an inner cell sorts them into octants (stable), appends its non-empty children
// contiguously, builds each and sums them in octant order.
void octree::build_cell(std::int32_t index, std::int32_t begin, std::int32_t end, const vec3& centre, double half,
                        int level) {
    depth_ = std::max(depth_, level);
    const auto& position = *position_;
    const auto& mass = *mass_;
    const auto at = [](std::int32_t i) { return static_cast<std::size_t>(i); };
    double m = 0;
    vec3 moment;
    if (end - begin <= leaf_bodies || level == max_level) {
        for (std::int32_t k = begin; k < end; ++k) {
            const auto b = at(order_[at(k)]);
            m += mass[b];
            moment += position[b] * mass[b];
        }
        cell& c = cells_[at(index)];
        c.first_body = begin;
        c.bodies = end - begin;
    } else {
        std::array<std::int32_t, 9> start{};
        for (std::int32_t k = begin; k < end; ++k) ++start[at(octant(position[at(order_[at(k)])], centre) + 1)];
        for (std::size_t o = 1; o < start.size(); ++o) start[o] += start[o - 1];
        std::array<std::int32_t, 8> fill{};
        for (std::size_t o = 0; o < fill.size(); ++o) fill[o] = begin + start[o];
        for (std::int32_t k = begin; k < end; ++k) {
            const std::int32_t b = order_[at(k)];
            scratch_[at(fill[at(octant(position[at(b)], centre))]++)] = b;
        }
        std::copy(scratch_.begin() + begin, scratch_.begin() + end, order_.begin() + begin);

        std::int32_t children = 0;
        for (std::size_t o = 0; o < 8; ++o) children += start[o + 1] > start[o] ? 1 : 0;
        const auto first = static_cast<std::int32_t>(cells_.size());
        cells_.resize(cells_.size() + at(children));  // invalidates references: indices only
        cells_[at(index)].first_child = first;
        cells_[at(index)].children = children;
        std::int32_t child = first;
        for (std::size_t o = 0; o < 8; ++o) {
            if (start[o + 1] == start[o]) continue;
            const double h = half / 2;
            const vec3 c{centre.x + ((o & 1) != 0 ? h : -h), centre.y + ((o & 2) != 0 ? h : -h),
                         centre.z + ((o & 4) != 0 ? h : -h)};
            build_cell(child, begin + start[o], begin + start[o + 1], c, h, level + 1);
            m += cells_[at(child)].mass;
            moment += cells_[at(child)].centre_of_mass * cells_[at(child)].mass;
            ++child;
        }
    }
    // Opening: a cell of side s whose centre of mass lies delta from its centre is taken as
    // a point mass at distance d only if d > s / theta + delta. The delta term prevents the
    // plain s / d < theta test's known failure when the mass sits in a far corner of a big
    // cell (Salmon & Warren 1994, J. Comput. Phys. 111, 136). theta = 0 opens every cell.
    cell& c = cells_[at(index)];
    c.mass = m;
    c.centre_of_mass = m > 0 ? moment * (1 / m) : centre;
    const double delta = norm(c.centre_of_mass - centre);
    const double reach = theta_ > 0 ? 2 * half / theta_ + delta : std::numeric_limits<double>::infinity();
    c.open2 = reach * reach;
}

vec3 octree::acceleration(std::int32_t body, const vec3& at, double eps2) const {
    std::array<std::int32_t, stack_capacity> stack;
    std::size_t top = 0;
    stack[top++] = 0;
    vec3 a;
    while (top > 0) {
        const cell& c = cells_[static_cast<std::size_t>(stack[--top])];
        const vec3 d = c.centre_of_mass - at;
        const double r2 = dot(d, d);
        if (r2 > c.open2) {
            const double s2 = r2 + eps2;
            a += d * (c.mass / (s2 * std::sqrt(s2)));
        } else if (c.children == 0) {
            for (std::int32_t k = c.first_body; k < c.first_body + c.bodies; ++k) {
                const auto j = static_cast<std::size_t>(k);
                if (order_[j] == body) continue;
                const vec3 e = leaf_position_[j] - at;
                const double s2 = dot(e, e) + eps2;
                a += e * (leaf_mass_[j] / (s2 * std::sqrt(s2)));
            }
        } else {
            // Pushed last to first, so popped (visited) in octant order.
            for (std::int32_t k = c.children - 1; k >= 0; --k) stack[top++] = c.first_child + k;
        }
    }
    return a;
}

}  // namespace aloe_apps::nbody

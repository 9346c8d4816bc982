// Initial conditions for the barnes-hut workload: a Plummer sphere, the standard model of a
// star cluster and the usual test system of N-body codes. Its density falls as
// (1 + r^2)^(-5/2), so a dense core sits in an extended halo: tree walks from the core open
// many more cells than walks from the halo, which is the force loop's imbalance.
#pragma once

#include "vec3.hpp"

#include <cstdint>
#include <vector>

namespace aloe_apps::nbody {

struct bodies {
    std::vector<vec3> position;
    std::vector<vec3> velocity;
    std::vector<double> mass;

    std::size_t size() const noexcept { return mass.size(); }
};

/// n equal-mass bodies of a Plummer sphere in Hénon units (G = 1, total mass 1, energy -1/4),
/// drawn as Aarseth, Hénon & Wielen (1974) describe, centred on the centre of mass at rest.
/// Radii are cut at 10 Plummer scale lengths (about 1.5% of the mass, redrawn), as is usual, so
/// a few far bodies do not set the tree's box. Deterministic from `seed`: uniforms are the top
/// 53 bits of std::mt19937_64 and the transforms are this file's own (no std distributions,
/// whose output differs between C++ libraries). Serial; O(n).
bodies make_plummer(std::int64_t n, std::uint64_t seed);

}  // namespace aloe_apps::nbody

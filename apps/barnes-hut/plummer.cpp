// The Plummer sphere of plummer.hpp, sampled after Aarseth, Hénon & Wielen (1974), A&A 37, 183.
#include "plummer.hpp"

#include <cmath>
#include <random>

namespace aloe_apps::nbody {
namespace {

// Plummer scale lengths beyond which a radius is redrawn (see the header).
constexpr double radius_cut = 10;
// Hénon units: the Plummer scale length is 3 pi / 16 of the unit length (Heggie & Mathieu 1986).
constexpr double length_unit = 3 * 3.14159265358979323846 / 16;

double unit(std::mt19937_64& rng) {  // [0, 1)
    return static_cast<double>(rng() >> 11) * 0x1p-53;
}

/// A direction uniform on the sphere: a point uniform in the cube, kept if inside the unit
/// ball and not within 2^-20 of its centre (where rounding would bias the direction), scaled
/// to length 1. Only +, *, / and sqrt: no libm variation.
vec3 direction(std::mt19937_64& rng) {
    for (;;) {
        const vec3 p{2 * unit(rng) - 1, 2 * unit(rng) - 1, 2 * unit(rng) - 1};
        const double r2 = dot(p, p);
        if (r2 > 0x1p-40 && r2 <= 1) return p * (1 / std::sqrt(r2));
    }
}

/// A radius in Plummer scale lengths: the inverse of the enclosed mass m(r) = r^3 / (1 + r^2)^1.5.
/// std::cbrt is the one libm call here; C libraries may round it differently in the last bit,
/// which moves a body by an ulp on another machine but never between runs on one.
double radius(std::mt19937_64& rng) {
    for (;;) {
        const double m = unit(rng);
        if (m == 0) continue;
        const double c = std::cbrt(m);
        const double r = 1 / std::sqrt(1 / (c * c) - 1);
        if (r <= radius_cut) return r;
    }
}

/// The speed at radius r in Plummer units: q times the escape speed sqrt(2) (1 + r^2)^(-1/4),
/// with q drawn by rejection from g(q) = q^2 (1 - q^2)^3.5, whose maximum is below 0.1.
double speed(std::mt19937_64& rng, double r) {
    for (;;) {
        const double q = unit(rng);
        const double t = 1 - q * q;
        const double g = q * q * t * t * t * std::sqrt(t);
        if (0.1 * unit(rng) < g) return q * std::sqrt(2.0) / std::sqrt(std::sqrt(1 + r * r));
    }
}

}  // namespace

bodies make_plummer(std::int64_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    bodies b;
    const auto count = static_cast<std::size_t>(n);
    b.position.resize(count);
    b.velocity.resize(count);
    b.mass.assign(count, 1.0 / static_cast<double>(n));
    const double speed_unit = 1 / std::sqrt(length_unit);  // G M / r: speeds scale as r^(-1/2)
    for (std::size_t i = 0; i < count; ++i) {
        const double r = radius(rng);
        b.position[i] = direction(rng) * (r * length_unit);
        b.velocity[i] = direction(rng) * (speed(rng, r) * speed_unit);
    }
    // At rest at the origin: subtract the centre of mass and its velocity (serial sums).
    vec3 centre, drift;
    for (std::size_t i = 0; i < count; ++i) {
        centre += b.position[i] * b.mass[i];
        drift += b.velocity[i] * b.mass[i];
    }
    for (std::size_t i = 0; i < count; ++i) {
        b.position[i] -= centre;
        b.velocity[i] -= drift;
    }
    return b;
}

}  // namespace aloe_apps::nbody

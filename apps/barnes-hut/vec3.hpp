// Three-vectors of doubles for the barnes-hut workload. Plain IEEE arithmetic, component by
// component, so each expression rounds the same way wherever it runs.
#pragma once

#include <cmath>

namespace aloe_apps::nbody {

struct vec3 {
    double x = 0;
    double y = 0;
    double z = 0;

    vec3& operator+=(const vec3& o) noexcept { x += o.x; y += o.y; z += o.z; return *this; }
    vec3& operator-=(const vec3& o) noexcept { x -= o.x; y -= o.y; z -= o.z; return *this; }
};

inline vec3 operator+(vec3 a, const vec3& b) noexcept { return a += b; }
inline vec3 operator-(vec3 a, const vec3& b) noexcept { return a -= b; }
inline vec3 operator*(const vec3& a, double s) noexcept { return {a.x * s, a.y * s, a.z * s}; }
inline double dot(const vec3& a, const vec3& b) noexcept { return a.x * b.x + a.y * b.y + a.z * b.z; }
inline double norm(const vec3& a) noexcept { return std::sqrt(dot(a, a)); }

}  // namespace aloe_apps::nbody

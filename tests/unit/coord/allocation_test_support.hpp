// Helpers the allocation tests share: a seeded uniform draw that is the same with any
// standard library, log speedup curves, and the sums the tests compare.
#pragma once

#include "coord/speedup_model.hpp"

#include <cstdint>
#include <functional>
#include <numeric>
#include <random>
#include <vector>

namespace aloe::coord::testing {

/// [0, 1) from the top 53 bits (std::uniform_real_distribution's output is the library's).
inline double unit(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

inline std::vector<std::function<double(unsigned)>> log_curves(const std::vector<double>& slopes) {
    std::vector<std::function<double(unsigned)>> curves;
    for (const double c : slopes) curves.emplace_back([c](unsigned p) { return modelled_speedup(c, p); });
    return curves;
}

/// Σ modelled speedups of an allocation.
inline double total_speedup(const std::vector<double>& slopes, const std::vector<unsigned>& threads) {
    double sum = 0;
    for (std::size_t i = 0; i < slopes.size(); ++i) sum += modelled_speedup(slopes[i], threads[i]);
    return sum;
}

inline unsigned sum_of(const std::vector<unsigned>& v) { return std::accumulate(v.begin(), v.end(), 0u); }

}  // namespace aloe::coord::testing

// What each iteration of the simulated loop costs, the same on every node and every step
// (the application's own imbalance; noise comes on top). Sums over a range are what the
// schedules need: O(1) for uniform costs, a prefix sum otherwise.
#pragma once

#include "sim/machine_profile.hpp"

#include <cstdint>
#include <vector>

namespace aloe::sim {

class iteration_costs {
public:
    /// `iterations` of mean `iteration_s` shaped by `spec` (heavy-tail drawn from `seed`;
    /// replay resampled to `iterations` and scaled to the mean). Throws std::invalid_argument
    /// when a non-uniform loop would need more than 2^27 iterations of memory.
    iteration_costs(const iteration_costs_spec& spec, std::int64_t iterations, double iteration_s, std::uint64_t seed);

    std::int64_t size() const noexcept { return n_; }
    bool uniform() const noexcept { return prefix_.empty(); }
    double mean() const noexcept { return mean_; }
    /// Cost of iterations [lo, hi).
    double sum(std::int64_t lo, std::int64_t hi) const noexcept {
        if (hi <= lo) return 0;
        return uniform() ? static_cast<double>(hi - lo) * mean_
                         : prefix_[static_cast<std::size_t>(hi)] - prefix_[static_cast<std::size_t>(lo)];
    }
    double total() const noexcept { return sum(0, n_); }

private:
    std::int64_t n_;
    double mean_;
    std::vector<double> prefix_;  // empty: uniform
};

}  // namespace aloe::sim

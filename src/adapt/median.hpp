// The median the tuners and probes judge timings by: robust to the one invocation a noise
// event hit, unlike the mean.
#pragma once

#include <algorithm>
#include <vector>

namespace aloe::adapt {

/// The median of `v` (taken by value: it is sorted); `v` must not be empty.
inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace aloe::adapt

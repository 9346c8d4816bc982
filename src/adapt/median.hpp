// How the tuners and probes judge several timings of one candidate. The median is robust to
// the one invocation a noise event hit; the mean counts that invocation, which is what a
// schedule sized to absorb noise must be judged by (the median of three hides noise that
// strikes one step in five, and with it the whole point of a dynamic fraction).
#pragma once

#include <algorithm>
#include <numeric>
#include <vector>

namespace aloe::adapt {

/// The median of `v` (taken by value: it is sorted); `v` must not be empty.
inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// The mean of `v`; `v` must not be empty.
inline double mean(const std::vector<double>& v) {
    return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

enum class sample_statistic { median, mean };

inline double summarize(const std::vector<double>& v, sample_statistic how) {
    return how == sample_statistic::median ? median(v) : mean(v);
}

}  // namespace aloe::adapt

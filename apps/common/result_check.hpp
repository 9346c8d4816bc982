// Helpers the workloads' self-checks share: results are compared bit for bit, because every
// runtime and schedule must reproduce the serial run exactly.
#pragma once

#include <cstdint>
#include <vector>

namespace aloe_apps {

/// How many elements of a and b (the same size) differ; 0 when they are identical.
inline std::int64_t differing_values(const std::vector<double>& a, const std::vector<double>& b) {
    std::int64_t n = 0;
    for (std::size_t p = 0; p < a.size(); ++p)
        if (a[p] != b[p]) ++n;
    return n;
}

}  // namespace aloe_apps

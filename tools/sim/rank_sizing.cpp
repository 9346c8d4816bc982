#include "sim/rank_sizing.hpp"

#include <algorithm>
#include <cstddef>

namespace aloe::sim {

void size_ranks(std::span<const double> work, int cores, std::span<int> out) noexcept {
    const std::size_t ranks = std::min(work.size(), out.size());
    if (ranks == 0) return;
    for (std::size_t r = 0; r < ranks; ++r) out[r] = 1;
    for (int left = cores - static_cast<int>(ranks); left > 0; --left) {
        std::size_t most = 0;
        for (std::size_t r = 1; r < ranks; ++r)  // work[r]/out[r] > work[most]/out[most], without dividing
            if (work[r] * out[most] > work[most] * out[r]) most = r;
        ++out[most];
    }
}

double sized_phase(std::span<const double> work, std::span<const int> cores) noexcept {
    double longest = 0;
    const std::size_t ranks = std::min(work.size(), cores.size());
    for (std::size_t r = 0; r < ranks; ++r)
        if (cores[r] > 0) longest = std::max(longest, work[r] / cores[r]);
    return longest;
}

}  // namespace aloe::sim

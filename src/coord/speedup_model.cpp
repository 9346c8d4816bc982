#include "coord/speedup_model.hpp"

#include "coord/integer_partition.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

namespace aloe::coord {

double log_speedup_slope(double efficiency, unsigned threads, double previous_slope) {
    if (threads <= 1) {
        const bool has_previous = std::isfinite(previous_slope) && previous_slope > 0;
        return has_previous ? previous_slope : unknown_slope;
    }
    if (!std::isfinite(efficiency) || efficiency < 0) efficiency = 0;
    if (efficiency > efficiency_cap) efficiency = efficiency_cap;
    const double p = threads;
    const double gain = std::max(efficiency * p - 1.0, least_gain);
    return gain / std::log(p);
}

std::vector<double> proportional_shares(std::span<const double> slopes) {
    return normalised_shares(slopes);
}

double modelled_speedup(double slope, double threads) {
    if (!(threads > 0)) return 0;
    return 1.0 + slope * std::log(threads);
}

std::vector<unsigned> greedy_optimum(unsigned cores, unsigned chunk,
                                     std::span<const std::function<double(unsigned)>> speedup) {
    if (chunk == 0) chunk = 1;
    const std::size_t clients = speedup.size();
    const unsigned chunks = cores / chunk;
    // As partition_by_shares: a program cannot run on 0 threads.
    if (clients > chunks) return std::vector<unsigned>(clients, 1u);
    if (clients == 0) return {};

    std::vector<unsigned> threads(clients, chunk);
    const auto gain_of = [&](std::size_t i) {
        const double gain = speedup[i](threads[i] + chunk) - speedup[i](threads[i]);
        return std::isnan(gain) ? -std::numeric_limits<double>::infinity() : gain;
    };
    // Only the client that got the last chunk changes its gain: keep the others'.
    std::vector<double> gain(clients);
    for (std::size_t i = 0; i < clients; ++i) gain[i] = gain_of(i);
    for (unsigned left = chunks - static_cast<unsigned>(clients); left > 0; --left) {
        std::size_t best = 0;
        for (std::size_t i = 1; i < clients; ++i)
            if (gain[i] > gain[best]) best = i;
        threads[best] += chunk;
        gain[best] = gain_of(best);
    }
    return threads;
}

}  // namespace aloe::coord

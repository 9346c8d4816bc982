#include "coord/integer_partition.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace aloe::coord {

namespace {

partition one_thread_each(std::size_t clients) { return {std::vector<unsigned>(clients, 1u), true}; }

bool usable_weight(double w) { return std::isfinite(w) && w > 0; }

// The donor for an empty partition: a partition holding >= 2 chunks, the least error for
// most_over_served, the largest for most_under_served; ties to the lower index.
std::size_t pick_donor(const std::vector<unsigned>& given, const std::vector<double>& error, donor_rule rule) {
    std::size_t donor = given.size();
    for (std::size_t i = 0; i < given.size(); ++i) {
        if (given[i] < 2) continue;
        const bool better = donor == given.size() ||
                            (rule == donor_rule::most_over_served ? error[i] < error[donor] : error[i] > error[donor]);
        if (better) donor = i;
    }
    return donor;
}

}  // namespace

std::vector<double> normalised_shares(std::span<const double> weights) {
    std::vector<double> shares(weights.size(), 0.0);
    double largest = 0;
    for (const double w : weights)
        if (usable_weight(w)) largest = std::max(largest, w);
    if (largest == 0) {
        std::fill(shares.begin(), shares.end(), 1.0 / static_cast<double>(std::max<std::size_t>(shares.size(), 1)));
        return shares;
    }
    // Scaled by the largest first, so the sum stays finite for any finite weights.
    double total = 0;
    for (std::size_t i = 0; i < weights.size(); ++i) {
        shares[i] = usable_weight(weights[i]) ? weights[i] / largest : 0.0;
        total += shares[i];
    }
    for (double& s : shares) s /= total;
    return shares;
}

partition partition_by_shares(unsigned cores, unsigned chunk, std::span<const double> shares, donor_rule donor) {
    if (chunk == 0) chunk = 1;
    const std::size_t clients = shares.size();
    const unsigned chunks = cores / chunk;
    if (clients > chunks) return one_thread_each(clients);
    if (clients == 0) return {};

    const std::vector<double> share = normalised_shares(shares);
    std::vector<unsigned> given(clients);
    std::vector<double> error(clients);  // exact − given, in chunks
    unsigned left = chunks;
    for (std::size_t i = 0; i < clients; ++i) {
        const double exact = share[i] * chunks;
        // Σ floor(exact) <= chunks; the min only guards against rounding in the shares' sum.
        given[i] = std::min(left, static_cast<unsigned>(exact));
        error[i] = exact - given[i];
        left -= given[i];
    }
    const auto give = [&](std::size_t i) {
        ++given[i];
        error[i] -= 1;
    };
    const auto first_empty = [&] { return static_cast<std::size_t>(std::find(given.begin(), given.end(), 0u) - given.begin()); };

    for (; left > 0; --left) {
        const std::size_t empty = first_empty();
        give(empty < clients ? empty
                             : static_cast<std::size_t>(std::max_element(error.begin(), error.end()) - error.begin()));
    }
    for (std::size_t empty = first_empty(); empty < clients; empty = first_empty()) {
        // All chunks are out and clients <= chunks, so someone holds two.
        const std::size_t from = pick_donor(given, error, donor);
        assert(from < clients);
        --given[from];
        error[from] += 1;
        give(empty);
    }

    partition result;
    result.threads.reserve(clients);
    for (const unsigned g : given) result.threads.push_back(g * chunk);
    return result;
}

partition equipartition(unsigned cores, unsigned chunk, std::size_t clients) {
    if (chunk == 0) chunk = 1;
    const unsigned chunks = cores / chunk;
    if (clients > chunks) return one_thread_each(clients);
    partition result;
    if (clients == 0) return result;
    const auto k = static_cast<unsigned>(clients);  // <= chunks
    const unsigned each = chunks / k, extra = chunks % k;
    for (unsigned i = 0; i < k; ++i) result.threads.push_back((each + (i < extra ? 1 : 0)) * chunk);
    return result;
}

}  // namespace aloe::coord

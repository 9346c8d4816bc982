#include "adapt/cost_profile.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace aloe::adapt {

namespace {

// A block that never ran (share 0) would make no thread ever try it again: every block
// keeps at least this share of an equal split.
constexpr double least_share = 1e-3;

// The first runs are taken whole: blocks still move far, and each run's edges cross bins
// that no run has timed apart yet (a slow core: 2:1 is 1.67 after one run, 1.9 after two).
constexpr std::size_t whole_runs = 3;

// The bins whose centres lie in [begin, end).
std::pair<std::size_t, std::size_t> bins_in(double begin, double end, std::size_t bins) noexcept {
    const double b = static_cast<double>(bins);
    const auto first = static_cast<std::size_t>(std::clamp(std::ceil(begin * b - 0.5), 0.0, b));
    const auto last = static_cast<std::size_t>(std::clamp(std::ceil(end * b - 0.5), 0.0, b));
    return {first, last};
}

}  // namespace

cost_profile::cost_profile(std::size_t bins) noexcept : bins_(std::max<std::size_t>(bins, 1)) {}

void cost_profile::allocate() {
    if (density_.empty()) density_.assign(bins_, 1.0);
}

double cost_profile::cost_between(double begin, double end) const noexcept {
    begin = std::clamp(begin, 0.0, 1.0);
    end = std::clamp(end, begin, 1.0);
    if (density_.empty()) return end - begin;
    const auto bins = static_cast<double>(density_.size());
    double sum = 0;
    for (auto i = static_cast<std::size_t>(begin * bins); i < density_.size(); ++i) {
        const double lo = static_cast<double>(i) / bins, hi = static_cast<double>(i + 1) / bins;
        if (lo >= end) break;
        sum += density_[i] * (std::min(hi, end) - std::max(lo, begin));
    }
    return sum;
}

void cost_profile::observe(std::span<const block_time> blocks, double step) {
    // Every factor against the profile as it was, then all applied: blocks do not overlap.
    factor_.assign(blocks.size(), 0.0);
    bool any = false;
    for (std::size_t k = 0; k < blocks.size(); ++k) {
        const block_time& b = blocks[k];
        if (!(b.end > b.begin) || !(b.seconds > 0)) continue;
        const double modelled = cost_between(b.begin, b.end);
        if (!(modelled > 0)) continue;
        factor_[k] = b.seconds / modelled;
        any = true;
    }
    if (!any) return;
    allocate();
    const double power = runs_ < whole_runs ? 1.0 : std::clamp(step, 0.0, 1.0);
    for (std::size_t k = 0; k < blocks.size(); ++k) {
        if (factor_[k] == 0) continue;
        const double f = power == 1.0 ? factor_[k] : std::pow(factor_[k], power);
        const auto [first, last] = bins_in(blocks[k].begin, blocks[k].end, density_.size());
        for (std::size_t i = first; i < last; ++i) density_[i] *= f;
    }
    ++runs_;
}

void cost_profile::assume_split(std::span<const double> weights) {
    const double sum = std::accumulate(weights.begin(), weights.end(), 0.0);
    if (weights.empty() || !(sum > 0)) return;
    const double p = static_cast<double>(weights.size());
    allocate();
    double begin = 0;
    for (std::size_t t = 0; t < weights.size(); ++t) {
        const double share = weights[t] / sum;
        const double end = t + 1 == weights.size() ? 1.0 : begin + share;
        const auto [first, last] = bins_in(begin, end, density_.size());
        // Equal cost 1/p over the block's share: density (1/p) / share.
        for (std::size_t i = first; i < last; ++i) density_[i] = (1.0 / p) / std::max(share, least_share / p);
        begin = end;
    }
    runs_ = std::max<std::size_t>(runs_, 1);
}

void cost_profile::split(std::span<double> weights) const {
    const std::size_t p = weights.size();
    if (p == 0) return;
    const double total = cost_between(0, 1);
    std::fill(weights.begin(), weights.end(), 1.0);
    if (!(total > 0) || p == 1 || density_.empty()) return;
    const double bins = static_cast<double>(density_.size());
    // Walk the cumulative cost; boundary k lies where it reaches k·total/p, linear in its bin.
    std::vector<double> edge(p + 1, 0.0);
    edge[p] = 1.0;
    double cumulative = 0;
    std::size_t k = 1;
    for (std::size_t i = 0; i < density_.size() && k < p; ++i) {
        const double in_bin = density_[i] / bins;
        while (k < p && cumulative + in_bin >= total * static_cast<double>(k) / static_cast<double>(p)) {
            const double need = total * static_cast<double>(k) / static_cast<double>(p) - cumulative;
            const double within = in_bin > 0 ? need / in_bin : 0.0;
            edge[k++] = (static_cast<double>(i) + std::clamp(within, 0.0, 1.0)) / bins;
        }
        cumulative += in_bin;
    }
    for (; k < p; ++k) edge[k] = 1.0;
    for (std::size_t t = 0; t < p; ++t)
        weights[t] = std::max(edge[t + 1] - edge[t], least_share / static_cast<double>(p)) * static_cast<double>(p);
}

double cost_profile::imbalance(std::span<const double> weights) const {
    const double sum = std::accumulate(weights.begin(), weights.end(), 0.0);
    if (weights.size() < 2 || !(sum > 0)) return 1.0;
    double begin = 0, most = 0, all = 0;
    for (std::size_t t = 0; t < weights.size(); ++t) {
        const double end = t + 1 == weights.size() ? 1.0 : begin + weights[t] / sum;
        const double c = cost_between(begin, end);
        most = std::max(most, c);
        all += c;
        begin = end;
    }
    return all > 0 ? most / (all / static_cast<double>(weights.size())) : 1.0;
}

}  // namespace aloe::adapt

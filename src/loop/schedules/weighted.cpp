#include "loop/schedules/weighted.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace aloe::loop {

namespace {

// Smoothing of the weight update: new = keep·old + (1−keep)·measured. 0.5 halves a
// one-off disturbance each run while following a persistent change within a few runs
// (a guess; the thesis updates without smoothing).
constexpr double weight_keep = 0.5;
// A worker's weight stays within [1/weight_clamp, weight_clamp] of the mean, so a worker
// hit by a long noise event once is never starved of static work (a guess).
constexpr double weight_clamp = 8.0;

}  // namespace

void weighted_split::split_by_weight(std::uint64_t total, std::span<const double> weights,
                                     std::span<std::uint64_t> shares) {
    // Prefix boundaries b_t = floor(total · W_t / W) with b_p = total: the shares sum to
    // total exactly, and no partial sum can pass 2^64 however close to it total is.
    const std::size_t p = weights.size();
    const long double sum = std::accumulate(weights.begin(), weights.end(), 0.0L);
    long double cumulative = 0;
    std::uint64_t previous = 0;
    for (std::size_t t = 0; t < p; ++t) {
        cumulative += weights[t];
        std::uint64_t boundary = total;
        if (t + 1 < p) {
            const long double exact = static_cast<long double>(total) * (cumulative / sum);
            boundary = exact >= static_cast<long double>(total) ? total : static_cast<std::uint64_t>(exact);
            boundary = std::max(boundary, previous);
        }
        shares[t] = boundary - previous;
        previous = boundary;
    }
}

void weighted_split::update_weights(std::span<double> weights, std::span<const worker_record> records) {
    const std::size_t p = weights.size();
    std::vector<double> speed(p, 0.0);
    for (std::size_t t = 0; t < p; ++t) {
        const worker_record& r = records[t];
        const runtime::ticks spent = r.static_end > r.start ? r.static_end - r.start : 0;
        if (r.static_iterations == 0 || spent == 0) return;  // nothing measured: keep the weights
        speed[t] = static_cast<double>(r.static_iterations) / static_cast<double>(spent);
    }
    blend_weights(weights, speed);
}

void weighted_split::blend_weights(std::span<double> weights, std::span<const double> speeds) {
    const std::size_t p = weights.size();
    const double sum = std::accumulate(speeds.begin(), speeds.end(), 0.0);
    if (speeds.size() != p || !(sum > 0)) return;
    const double mean = sum / static_cast<double>(p);
    for (std::size_t t = 0; t < p; ++t) {
        const double measured = std::clamp(speeds[t] / mean, 1.0 / weight_clamp, weight_clamp);
        weights[t] = std::clamp(weight_keep * weights[t] + (1.0 - weight_keep) * measured, 1.0 / weight_clamp,
                                weight_clamp);
    }
}

weighted_split::weighted_split(const loop_setup& s)
    : offsets_(s.scratch.make<std::uint64_t>(static_cast<std::size_t>(s.threads) + 1)),
      count_(s.count),
      chunk_(static_cast<std::uint64_t>(s.spec.chunk())),
      use_cas_(fetch_add_may_wrap(s.count, chunk_, static_cast<std::uint64_t>(s.threads))) {
    const auto p = static_cast<std::size_t>(s.threads);
    const std::uint64_t static_count = fraction_of(s.count, s.spec.static_fraction());
    std::vector<double> weights(p, 1.0);
    if (s.history.team_size == s.threads && s.history.weights.size() == p) weights = s.history.weights;
    std::vector<std::uint64_t> shares(p);
    split_by_weight(static_count, weights, shares);
    offsets_[0] = 0;
    for (std::size_t t = 0; t < p; ++t) offsets_[t + 1] = offsets_[t] + shares[t];
    if (static_count < count_) {
        counter_ = s.scratch.make<shared_counter>(1).data();
        counter_->next.store(static_count, std::memory_order_relaxed);
    }
}

void weighted_split::commit(std::span<const worker_record> records, site_history& h) const {
    const std::size_t p = records.size();
    if (h.team_size != static_cast<int>(p) || h.weights.size() != p) {
        h.team_size = static_cast<int>(p);
        h.weights.assign(p, 1.0);
        h.tasklet_owner.clear();
    }
    update_weights(h.weights, records);
}

}  // namespace aloe::loop

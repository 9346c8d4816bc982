#include "loop/schedules/tasklets.hpp"

#include <algorithm>
#include <cmath>

namespace aloe::loop {

void tasklet_queue::cut(std::uint64_t first, std::uint64_t dynamic, double skew, std::span<std::uint64_t> bounds) {
    const std::size_t k = bounds.size() - 1;
    bounds[0] = first;
    bounds[k] = first + dynamic;
    if (skew <= 1.0 || k == 1) {
        for (std::size_t j = 1; j < k; ++j) bounds[j] = first + block_start(j, dynamic, k);
        return;
    }
    // Geometric sizes s_j = s_0·q^j with q = skew^(-1/(k-1)), so the first tasklet is
    // exactly `skew` times the last; boundary j sits at dynamic·(1 - q^j)/(1 - q^k).
    const long double q = std::pow(static_cast<long double>(skew), -1.0L / static_cast<long double>(k - 1));
    const long double norm = 1.0L - std::pow(q, static_cast<long double>(k));
    for (std::size_t j = 1; j < k; ++j) {
        const long double share = (1.0L - std::pow(q, static_cast<long double>(j))) / norm;
        const auto offset = static_cast<std::uint64_t>(static_cast<long double>(dynamic) * share);
        bounds[j] = std::clamp(first + std::min(offset, dynamic), bounds[j - 1], bounds[k]);
    }
}

tasklet_queue::tasklet_queue(const loop_setup& s)
    : static_count_(fraction_of(s.count, s.spec.static_fraction())),
      threads_(static_cast<std::uint64_t>(s.threads)),
      locality_(s.spec.locality()) {
    const std::uint64_t dynamic = s.count - static_count_;
    tasklets_ = std::min<std::uint64_t>(static_cast<std::uint64_t>(s.spec.tasklet_count()), dynamic);
    if (tasklets_ == 0) {
        cursor_ = s.scratch.make<shared_counter>(1).data();  // empty queue: every take finds none
        list_start_ = s.scratch.make<std::uint64_t>(threads_ + 1);
        return;
    }
    const auto k = static_cast<std::size_t>(tasklets_);
    const auto p = static_cast<std::size_t>(threads_);
    bounds_ = s.scratch.make<std::uint64_t>(k + 1);
    cut(static_count_, dynamic, s.spec.skew(), bounds_);
    owner_ = s.scratch.make<std::int32_t>(k);
    ran_by_ = s.scratch.make<std::int32_t>(k);
    claimed_ = s.scratch.make<std::atomic<std::uint8_t>>(k);
    cursor_ = s.scratch.make<shared_counter>(1).data();

    const bool remembered = s.history.team_size == s.threads && s.history.tasklet_owner.size() == k;
    for (std::size_t j = 0; j < k; ++j) {
        owner_[j] = remembered ? s.history.tasklet_owner[j] : static_cast<std::int32_t>(j * p / k);
        ran_by_[j] = owner_[j];
    }
    // Group tasklets by owner (counting sort keeps queue order within each owner).
    list_start_ = s.scratch.make<std::uint64_t>(p + 1);
    own_list_ = s.scratch.make<std::uint32_t>(k);
    for (std::size_t j = 0; j < k; ++j) ++list_start_[static_cast<std::size_t>(owner_[j]) + 1];
    for (std::size_t t = 0; t < p; ++t) list_start_[t + 1] += list_start_[t];
    std::span<std::uint64_t> fill = s.scratch.make<std::uint64_t>(p);
    for (std::size_t t = 0; t < p; ++t) fill[t] = list_start_[t];
    for (std::size_t j = 0; j < k; ++j) own_list_[fill[static_cast<std::size_t>(owner_[j])]++] = static_cast<std::uint32_t>(j);
}

void tasklet_queue::commit(std::span<const worker_record> records, site_history& h) const {
    const std::size_t p = records.size();
    if (h.team_size != static_cast<int>(p)) {
        h.team_size = static_cast<int>(p);
        h.weights.clear();
    }
    h.tasklet_owner.assign(ran_by_.begin(), ran_by_.end());
}

}  // namespace aloe::loop

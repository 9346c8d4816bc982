#include "loop/schedules/staggered.hpp"

#include "loop/schedules/weighted.hpp"

#include <type_traits>

namespace aloe::loop {

static_assert(std::is_trivially_destructible_v<staggered_queue>,
              "queues live in the team's arena, which never runs destructors");

template <queue_claim Claim>
staggered_queues<Claim>::staggered_queues(const loop_setup& s)
    : queues_(s.scratch.make<staggered_queue>(static_cast<std::size_t>(s.threads))),
      threads_(static_cast<std::uint64_t>(s.threads)),
      chunk_(static_cast<std::uint64_t>(s.spec.chunk())),
      use_cas_(fetch_add_may_wrap(s.count, chunk_, threads_)) {
    const bool weighted = s.block_weights.size() == threads_;
    std::span<std::uint64_t> shares;
    if (weighted) {
        shares = s.scratch.make<std::uint64_t>(threads_);
        weighted_split::split_by_weight(s.count, s.block_weights, shares);
    }
    std::uint64_t begin = 0;
    for (std::uint64_t t = 0; t < threads_; ++t) {
        const chunk own = weighted ? chunk{begin, begin + shares[t]} : block_of(t, s.count, threads_);
        begin = own.end;
        staggered_queue& q = queues_[t];
        q.static_begin = own.begin;
        q.static_end = own.begin + fraction_of(own.end - own.begin, s.spec.static_fraction());
        q.next.store(q.static_end, std::memory_order_relaxed);
        q.end = own.end;
    }
}

template <queue_claim Claim>
take staggered_queues<Claim>::steal(worker_cursor& w, chunk& c) noexcept {
    const int p = static_cast<int>(threads_);
    for (int d = w.steal_distance; d < p;) {
        const int left = w.id - d;
        const int right = w.id + d;
        const std::uint64_t left_work = left >= 0 ? remaining(queues_[static_cast<std::size_t>(left)]) : 0;
        const std::uint64_t right_work = right < p ? remaining(queues_[static_cast<std::size_t>(right)]) : 0;
        if (left_work == 0 && right_work == 0) {
            w.steal_distance = ++d;
            continue;
        }
        const int victim = left_work >= right_work ? left : right;
        if (claim_from(queues_[static_cast<std::size_t>(victim)], c)) return take::stolen;
        // Lost the race for the victim's last chunk: look at this distance again.
    }
    return take::none;
}

template class staggered_queues<queue_claim::atomic>;
template class staggered_queues<queue_claim::mutex>;

}  // namespace aloe::loop

#include "loop/schedules/staggered.hpp"

#include <type_traits>

namespace aloe::loop {

static_assert(std::is_trivially_destructible_v<staggered_queue>,
              "queues live in the team's arena, which never runs destructors");

template <queue_claim Claim>
staggered_queues<Claim>::staggered_queues(const loop_setup& s)
    : queues_(s.scratch.make<staggered_queue>(static_cast<std::size_t>(s.threads))),
      count_(s.count),
      threads_(static_cast<std::uint64_t>(s.threads)),
      chunk_(static_cast<std::uint64_t>(s.spec.chunk())),
      fs_(s.spec.static_fraction()),
      use_cas_(fetch_add_may_wrap(s.count, chunk_, threads_)) {
    for (std::uint64_t t = 0; t < threads_; ++t) {
        const chunk own = block_of(t, count_, threads_);
        staggered_queue& q = queues_[t];
        q.next.store(own.begin + fraction_of(own.end - own.begin, fs_), std::memory_order_relaxed);
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

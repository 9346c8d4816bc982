#include "loop/schedules/hybrid.hpp"

namespace aloe::loop {

hybrid_split::hybrid_split(const loop_setup& s)
    : count_(s.count),
      static_count_(fraction_of(s.count, s.spec.static_fraction())),
      threads_(static_cast<std::uint64_t>(s.threads)),
      chunk_(static_cast<std::uint64_t>(s.spec.chunk())),
      use_cas_(fetch_add_may_wrap(s.count, chunk_, threads_)) {
    if (static_count_ < count_) {
        counter_ = s.scratch.make<shared_counter>(1).data();
        counter_->next.store(static_count_, std::memory_order_relaxed);
    }
}

}  // namespace aloe::loop

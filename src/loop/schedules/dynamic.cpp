#include "loop/schedules/dynamic.hpp"

namespace aloe::loop {

dynamic_chunks::dynamic_chunks(const loop_setup& s)
    : counter_(s.scratch.make<shared_counter>(1).data()),
      count_(s.count),
      chunk_(static_cast<std::uint64_t>(s.spec.chunk())),
      use_cas_(fetch_add_may_wrap(s.count, chunk_, static_cast<std::uint64_t>(s.threads))) {}

}  // namespace aloe::loop

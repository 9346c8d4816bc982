#include "loop/schedules/guided.hpp"

namespace aloe::loop {

guided_chunks::guided_chunks(const loop_setup& s)
    : counter_(s.scratch.make<shared_counter>(1).data()),
      count_(s.count),
      chunk_(static_cast<std::uint64_t>(s.spec.chunk())),
      threads_(static_cast<std::uint64_t>(s.threads) * static_cast<std::uint64_t>(s.spec.divisor())) {}

}  // namespace aloe::loop

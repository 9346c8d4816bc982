#include "loop/schedules/static.hpp"

namespace aloe::loop {

static_cyclic::static_cyclic(const loop_setup& s) noexcept
    : count_(s.count),
      threads_(static_cast<std::uint64_t>(s.threads)),
      chunk_(static_cast<std::uint64_t>(s.spec.chunk())),
      chunks_(s.count == 0 ? 0 : (s.count - 1) / chunk_ + 1) {}

}  // namespace aloe::loop

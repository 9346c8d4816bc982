#include "loop/participant_limit.hpp"

#include <algorithm>

namespace aloe::loop {

namespace participant_limit_detail {
constinit std::atomic<int> limit{INT_MAX};
constinit std::atomic<void (*)() noexcept> refresh{nullptr};
}  // namespace participant_limit_detail

void limit_participants(int n) noexcept {
    participant_limit_detail::limit.store(std::max(n, 1), std::memory_order_relaxed);
}

void lift_participant_limit() noexcept { participant_limit_detail::limit.store(INT_MAX, std::memory_order_relaxed); }

int participant_limit() noexcept { return participant_limit_detail::limit.load(std::memory_order_relaxed); }

void set_participant_limit_refresh(void (*fn)() noexcept) noexcept {
    participant_limit_detail::refresh.store(fn, std::memory_order_relaxed);
}

}  // namespace aloe::loop

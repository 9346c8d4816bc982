#include "loop/participant_limit.hpp"

#include <algorithm>

namespace aloe::loop {

namespace participant_limit_detail {
thread_local loop_door* door = nullptr;
constinit std::atomic<int> limit{INT_MAX};
constinit std::atomic<void (*)() noexcept> refresh{nullptr};
constinit std::atomic<unsigned> changes{0};
}  // namespace participant_limit_detail

void limit_participants(int n) noexcept {
    const int was = participant_limit_detail::limit.exchange(std::max(n, 1), std::memory_order_relaxed);
    if (was != std::max(n, 1)) participant_limit_detail::changes.fetch_add(1, std::memory_order_relaxed);
}

void lift_participant_limit() noexcept {
    if (participant_limit_detail::limit.exchange(INT_MAX, std::memory_order_relaxed) != INT_MAX)
        participant_limit_detail::changes.fetch_add(1, std::memory_order_relaxed);
}

int participant_limit() noexcept { return participant_limit_detail::limit.load(std::memory_order_relaxed); }

void set_participant_limit_refresh(void (*fn)() noexcept) noexcept {
    participant_limit_detail::refresh.store(fn, std::memory_order_relaxed);
}

}  // namespace aloe::loop

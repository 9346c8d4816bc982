#include "runtime/barrier.hpp"

namespace aloe::runtime {

barrier::barrier(int threads, const wait_settings& ws) noexcept
    : threads_(static_cast<std::uint32_t>(threads < 1 ? 1 : threads)), wait_(ws) {}

void barrier::arrive_and_wait() noexcept {
    // Read the round before arriving: it cannot change until this thread has arrived.
    const std::uint32_t round = generation_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == threads_) {
        arrived_.store(0, std::memory_order_relaxed);  // published by the seq_cst bump below
        generation_.fetch_add(1, std::memory_order_seq_cst);
        wake_waiters(generation_, sleepers_);
        return;
    }
    wait_while_equal(generation_, round, sleepers_, wait_);
}

}  // namespace aloe::runtime

// A reusable barrier for a fixed number of threads, waiting with the team's wait policy.
//
// Hot path (arrive_and_wait):
//   shared lines: arrived_ (one fetch_add per thread), generation_ (read by all, one
//   seq_cst increment by the last arrival);
//   orders: the fetch_add is acq_rel so the last arrival sees every thread's writes, and
//   the seq_cst generation bump publishes them to the waiters (acquire load);
//   slow path: wait_while_equal_slow (spin, yield, futex).
#pragma once

#include "runtime/wait_policy.hpp"

#include <atomic>
#include <cstdint>

namespace aloe::runtime {

class barrier {
public:
    barrier(int threads, const wait_settings& ws) noexcept;

    /// Blocks until `threads` threads have called it in this round; then all return.
    void arrive_and_wait() noexcept;

    int threads() const noexcept { return static_cast<int>(threads_); }

private:
    alignas(64) std::atomic<std::uint32_t> arrived_{0};
    alignas(64) std::atomic<std::uint32_t> generation_{0};
    std::atomic<std::uint32_t> sleepers_{0};
    std::uint32_t threads_;
    wait_settings wait_;
};

}  // namespace aloe::runtime

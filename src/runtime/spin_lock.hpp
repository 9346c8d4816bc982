// A lock for short sections that threads seldom contend (a loop slot filled by the first
// thread of a team to reach it): one exchange to take it and one store to give it back,
// where a pthread mutex costs a call and about forty instructions each way. A waiter
// spins on a load, with the CPU's pause, and yields after a while: on an oversubscribed
// machine the holder may be off its CPU. Meets Lockable (std::lock_guard, std::unique_lock).
#pragma once

#include "runtime/clock.hpp"

#include <sched.h>

#include <atomic>

namespace aloe::runtime {

class spin_lock {
public:
    void lock() noexcept {
        while (held_.exchange(true, std::memory_order_acquire)) [[unlikely]]
            wait_until_free();
    }
    bool try_lock() noexcept {
        return !held_.load(std::memory_order_relaxed) && !held_.exchange(true, std::memory_order_acquire);
    }
    void unlock() noexcept { held_.store(false, std::memory_order_release); }
    /// In a forked child: a thread of the parent may have held it, and is gone.
    void reset_in_forked_child() noexcept { held_.store(false, std::memory_order_relaxed); }

private:
    void wait_until_free() noexcept {
        for (int spins = 0; held_.load(std::memory_order_relaxed); ++spins) {
            if (spins < 64) cpu_relax();
            else sched_yield();
        }
    }
    std::atomic<bool> held_{false};
};

}  // namespace aloe::runtime

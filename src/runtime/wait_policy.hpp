// How a thread waits for a 32-bit word to change: spin, then yield, then sleep on a futex.
//
// Protocol (the same for every waiter in aloe):
//   waiter: wait_while_equal(word, old, sleepers, settings) returns once word != old.
//   waker:  stores the new value with memory_order_seq_cst, then wake_waiters(word, sleepers).
// The waiter increments `sleepers` (seq_cst) before re-checking the word and sleeping, and
// the waker reads `sleepers` after its seq_cst store, so either the waiter sees the new
// value or the waker sees the sleeper (the Dekker pattern; no lost wake-up).
//
// Phases per policy:
//   active:  spin forever (with sched_yield between spin rounds when oversubscribed);
//   passive: sleep at once;
//   hybrid:  spin (pause) for spin_ticks (2 µs at most), then spin with sched_yield each
//            round for yield_ticks (ALOE_SPIN_US), then sleep; a waiter whose thread got
//            less than 3/4 of its CPU while yielding (another program's thread runs there)
//            skips the yielding phase for the next 50 ms (wait_policy.cpp says why).
#pragma once

#include "runtime/clock.hpp"
#include "runtime/config.hpp"
#include "runtime/futex.hpp"

#include <atomic>
#include <cstdint>

namespace aloe::runtime {

struct wait_settings {
    wait_policy_kind kind = wait_policy_kind::hybrid;
    ticks spin_ticks = 0;   ///< pure spin (pause only)
    ticks yield_ticks = 0;  ///< spin that yields the CPU every round (ALOE_SPIN_US)
    bool oversubscribed = false;  ///< more threads than cores: spinning steals a worker's core

    /// From the process configuration, for a team of `threads` on `cores` cores.
    static wait_settings from_config(const config& cfg, int threads, int cores);
};

/// Whether a yielding phase of `wall_s` in which this thread ran `cpu_s` shared its CPU
/// (at least 100 µs long, less than 3/4 of it on the CPU). Exposed for tests.
bool cpu_was_shared(double wall_s, double cpu_s) noexcept;
/// Whether the calling thread's waits skip the yielding phase now (its CPU found shared in
/// the last 50 ms).
bool waits_skip_yielding() noexcept;

[[gnu::noinline]] void wait_while_equal_slow(std::atomic<std::uint32_t>& word, std::uint32_t old,
                                             std::atomic<std::uint32_t>& sleepers, const wait_settings& ws) noexcept;

/// Returns once `word` no longer holds `old` (acquire: the waker's earlier writes are visible).
inline void wait_while_equal(std::atomic<std::uint32_t>& word, std::uint32_t old, std::atomic<std::uint32_t>& sleepers,
                             const wait_settings& ws) noexcept {
    if (word.load(std::memory_order_acquire) != old) [[likely]]
        return;
    wait_while_equal_slow(word, old, sleepers, ws);
}

/// Wakes sleepers of `word`; call after a seq_cst store or RMW to it.
inline void wake_waiters(std::atomic<std::uint32_t>& word, std::atomic<std::uint32_t>& sleepers) noexcept {
    if (sleepers.load(std::memory_order_seq_cst) != 0) [[unlikely]]
        futex_wake_all(word);
}

}  // namespace aloe::runtime

#include "runtime/wait_policy.hpp"

#include <algorithm>

#include <sched.h>

namespace aloe::runtime {

namespace {

// The spin phase checks the word after every pause (a fork is noticed within one pause,
// ~40-140 cycles) and reads the clock once per round of this many pauses.
constexpr int pauses_per_round = 64;
// When oversubscribed, a waiter that spins keeps a runnable worker off its core, so the
// spin phase shrinks to this (a guess, like libgomp's throttled spin count).
constexpr std::int64_t oversubscribed_spin_us = 2;
// The yield phase is as long as the spin phase: cheap when another thread wants the core,
// and it catches wake-ups that come just after the spin phase.
constexpr std::int64_t yield_phase_factor = 1;

ticks us_to_ticks(std::int64_t us) {
    return static_cast<ticks>(static_cast<double>(us) * 1e-6 * ticks_per_second());
}

bool changed(const std::atomic<std::uint32_t>& word, std::uint32_t old) {
    return word.load(std::memory_order_acquire) != old;
}

}  // namespace

wait_settings wait_settings::from_config(const config& cfg, int threads, int cores) {
    wait_settings ws;
    ws.kind = cfg.wait_policy;
    ws.oversubscribed = cores > 0 && threads > cores;
    const std::int64_t spin_us = ws.oversubscribed ? std::min<std::int64_t>(cfg.spin_us, oversubscribed_spin_us)
                                                   : cfg.spin_us;
    ws.spin_ticks = us_to_ticks(spin_us);
    ws.yield_ticks = us_to_ticks(spin_us * yield_phase_factor);
    return ws;
}

void wait_while_equal_slow(std::atomic<std::uint32_t>& word, std::uint32_t old, std::atomic<std::uint32_t>& sleepers,
                           const wait_settings& ws) noexcept {
    if (ws.kind != wait_policy_kind::passive) {
        // Spin phase.
        const ticks spin_end = now_ticks() + ws.spin_ticks;
        for (;;) {
            for (int i = 0; i < pauses_per_round; ++i) {
                cpu_relax();
                if (changed(word, old)) return;
            }
            if (ws.kind == wait_policy_kind::active) {
                if (ws.oversubscribed) sched_yield();
                continue;
            }
            if (now_ticks() >= spin_end) break;
        }
        // Yield phase.
        const ticks yield_end = now_ticks() + ws.yield_ticks;
        do {
            sched_yield();
            if (changed(word, old)) return;
        } while (now_ticks() < yield_end);
    }
    // Sleep phase.
    sleepers.fetch_add(1, std::memory_order_seq_cst);
    while (word.load(std::memory_order_seq_cst) == old) futex_wait(word, old);
    sleepers.fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace aloe::runtime

#include "runtime/wait_policy.hpp"

#include "runtime/report.hpp"

#include <algorithm>

#include <sched.h>

namespace aloe::runtime {

namespace {

// The spin phase checks the word after every pause (a fork is noticed within one pause,
// ~40-140 cycles) and reads the clock once per round of this many pauses.
constexpr int pauses_per_round = 64;
// The pure spin (pause only) is kept short: when the OS has put the waiter on the CPU of
// the thread it waits for (Linux's wake-affine placement does this after a futex wake-up),
// every microsecond of pure spin delays that thread by as much. Measured on the 2-core VM
// (bench/results/overhead-20261121-spin100, unbound): with a 100 µs pure spin, 73% of loops after a
// sleep cost about 2 × 100 µs. Past this, the waiter yields each round, so a thread sharing
// its CPU runs at once, while a waiter alone on its CPU still sees a fork within one
// sched_yield (well under a microsecond). The yielding phase lasts ALOE_SPIN_US (1 ms by
// default): shorter windows let waiters fall asleep between back-to-back loops, and each
// wake-up (about 0.5 ms on the VM) then delays the next loop (see src/runtime/README.md).
constexpr std::int64_t pure_spin_us = 2;

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
    // `cores`: the cores this process may use (topology::cores(): within the affinity mask
    // and the cgroup cpuset), not the machine's.
    ws.oversubscribed = cores > 0 && threads > cores;
    if (ws.oversubscribed) {
        // Info, not a warning: an explicit count is the user's choice (libgomp and libomp
        // accept it silently), and `aloe info` always shows it; see docs/configuration.md.
        const std::string source = cfg.num_threads == threads ? describe_num_threads_source(cfg, true) : "API";
        report_once({report_level::info, report_category::topology, "I204",
                     "a team of " + std::to_string(threads) + " threads (" + source + ") on " +
                         std::to_string(cores) + (cores == 1 ? " allowed core" : " allowed cores") +
                         " is oversubscribed",
                     "waiting that yields the CPU, without the pure spin"});
    }
    // Oversubscribed, a waiter always shares a CPU with someone: skip the pure spin.
    ws.spin_ticks = us_to_ticks(ws.oversubscribed ? 0 : std::min<std::int64_t>(cfg.spin_us, pure_spin_us));
    ws.yield_ticks = us_to_ticks(cfg.spin_us);
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

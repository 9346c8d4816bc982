#include "runtime/wait_policy.hpp"

#include "runtime/report.hpp"

#include <algorithm>

#include <sched.h>
#include <time.h>

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

// A CPU shared with another runnable thread (another program's spinner, say): a waiter
// that spins and yields is, to the scheduler, a CPU hog like the other, and the two
// alternate in time slices of milliseconds, so the worker is preempted in the middle of the
// next loop and everyone waits for its slice. A waiter that sleeps instead preempts the hog
// when woken (CFS's wake-up preemption): what lets libgomp's workers, which fall asleep
// sooner, start loops 2-3× sooner than aloe's on a CPU shared with a spinner (issue 14:
// stencil1d under background load, 0.22 s → 0.13–0.16 s with ALOE_SPIN_US=0). So a waiter
// measures its yielding phase: when it got less than three quarters of the CPU over at least
// 100 µs of it (alone it gets all of it; beside one CPU hog, half or less), its CPU is shared, and for the next `contended_hold_us` its waits skip the
// yielding phase (sleep after the pure spin). Alone on its CPU nothing changes.
constexpr std::int64_t contended_window_us = 100;
constexpr std::int64_t contended_hold_us = 50'000;
thread_local ticks contended_until = 0;

// After a yielding phase that began at `start` (wall) with `cpu_start` of this thread's CPU.
void judge_sharing(ticks start, double cpu_start) noexcept {
    const ticks end = now_ticks();
    if (cpu_start < 0) return;
    if (cpu_was_shared(ticks_to_seconds(end - start), thread_cpu_seconds() - cpu_start)) {
        static const ticks hold = us_to_ticks(contended_hold_us);
        contended_until = end + hold;
    }
}

bool changed(const std::atomic<std::uint32_t>& word, std::uint32_t old) {
    return word.load(std::memory_order_acquire) != old;
}

}  // namespace

bool cpu_was_shared(double wall_s, double cpu_s) noexcept {
    return wall_s >= 1e-6 * contended_window_us && cpu_s >= 0 && cpu_s < 0.75 * wall_s;
}

bool waits_skip_yielding() noexcept { return now_ticks() < contended_until; }

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
        // Yield phase, unless this thread's CPU was found shared lately.
        const ticks start = now_ticks();
        if (start >= contended_until && ws.yield_ticks > 0) {
            const double cpu_start = thread_cpu_seconds();
            const ticks yield_end = start + ws.yield_ticks;
            do {
                sched_yield();
                if (changed(word, old)) {
                    judge_sharing(start, cpu_start);
                    return;
                }
            } while (now_ticks() < yield_end);
            judge_sharing(start, cpu_start);
        }
    }
    // Sleep phase.
    sleepers.fetch_add(1, std::memory_order_seq_cst);
    while (word.load(std::memory_order_seq_cst) == old) futex_wait(word, old);
    sleepers.fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace aloe::runtime

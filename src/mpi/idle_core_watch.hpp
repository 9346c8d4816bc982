// A lender that sleeps between its tests while a borrower's thread uses its core, and tests
// at once when the core falls idle (issue 19, item 4).
//
// A polite wait (polite_wait.hpp) naps between MPI tests so that the guest on the lent core
// runs undisturbed. A nap of up to 100 us is a late return: the borrower's loop ends, its
// guest leaves the core, and the lender sleeps on while the job waits for it (traced with
// sched_switch on the 2-vCPU VM: the lent core idle 0.26 ms a step of 5.4 ms, jacobi3d-mpi
// 1:2). A lender cannot see whether another thread wants its core; the scheduler can. So a
// sentinel thread of the lender's process, on the lender's CPUs under SCHED_IDLE (it runs
// only when nothing else on that CPU wants to: a waking SCHED_IDLE thread never preempts a
// normal one), ends the nap: while a guest runs there it waits; once the core is idle it
// runs at once and wakes the lender, which tests again. A guest's own yields between its
// chunks also let the sentinel run, so it first yields once itself and wakes the lender only
// when that returns within 10 us (nothing else wanted the CPU). Returning to SCHED_OTHER needs
// RLIMIT_NICE or CAP_SYS_NICE, so the lender cannot drop its own priority for the wait;
// the sentinel never leaves SCHED_IDLE.
//
// The sentinel is made at the first nap and sleeps on a futex whenever no lender naps. Where
// SCHED_IDLE is refused (a seccomp filter) or no thread can be made, naps are plain sleeps,
// said once (I605). MPI-free: the tests drive it directly.
#pragma once

#include <atomic>
#include <cstdint>

#include <pthread.h>

namespace aloe::mpi {

class idle_core_watch {
public:
    /// The process's watch (never destroyed: waits may come during exit).
    static idle_core_watch& process() noexcept;

    /// Sleeps for up to `seconds`, less once the CPUs the caller may use have nothing else to
    /// run. Returns true when it ended early for that reason. One caller at a time.
    bool nap(double seconds) noexcept;

    /// Whether the sentinel watches (false before the first nap has started it and it has
    /// lowered its priority, and where it could not).
    bool watching() const noexcept { return started_.load(std::memory_order_acquire) == started; }
    /// Naps the sentinel ended early, since the process started.
    std::uint64_t early_wakes() const noexcept { return early_wakes_.load(std::memory_order_relaxed); }

    idle_core_watch(const idle_core_watch&) = delete;
    idle_core_watch& operator=(const idle_core_watch&) = delete;

    /// For tests: a watch whose sentinel runs at the normal priority (it then ends every nap
    /// at once, whatever else runs: the protocol without the scheduler's part).
    explicit idle_core_watch(bool sentinel_idle) noexcept : sentinel_idle_(sentinel_idle) {}
    /// For tests: the sentinel's scheduling policy (SCHED_IDLE once it watches; -1: none).
    int sentinel_policy() const noexcept;
    /// For tests: stops and joins the sentinel (the process's watch is never stopped); no
    /// nap may run meanwhile.
    void stop() noexcept;

private:
    // state_: idle (the sentinel sleeps), armed (a lender naps and wants to hear when the
    // core is free), woken (the sentinel ended the nap), quit (tests).
    static constexpr std::uint32_t idle = 0, armed = 1, woken = 2, quit = 3;
    static constexpr std::uint32_t not_started = 0, starting = 1, started = 2, failed = 3;

    bool start() noexcept;
    static void* sentinel_main(void* self) noexcept;
    void after_fork_in_child() noexcept;
    friend void idle_core_watch_fork_child() noexcept;

    std::atomic<std::uint32_t> state_{idle};
    std::atomic<std::uint32_t> started_{not_started};
    std::atomic<std::uint64_t> early_wakes_{0};
    bool sentinel_idle_ = true;
    pthread_t thread_{};
    bool have_thread_ = false;
};

}  // namespace aloe::mpi

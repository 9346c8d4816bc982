// The task scheduler of one team: a work-stealing deque per worker slot, a shared queue for
// threads that have none, and the scheduling loop that workers and waiting threads run.
//
// Slots. Slot k (k >= 1) belongs to the team's worker k; slot 0 to one thread outside the
// team, the first that spawns or waits (normally the program's main thread, which is also
// participant 0 of the team's loops). Other outside threads have no slot: their spawns go
// to the shared queue (a mutex), and they run tasks only while they wait.
//
// The scheduling loop (run_loop), for a worker polled by the team (issue 7's work source)
// and for any thread waiting on a result (help_until):
//   1. its own deque, newest first (`pending-accesses`, `pending-misses` when empty);
//   2. the shared queue;
//   3. steals, oldest first, from the other slots: nearest first when workers are bound
//      (runtime::topology::distance), in a random rotation within each distance, so two
//      thieves rarely pick the same victim;
//   4. nothing found: spin, then yield, then sleep on `epoch_` (spawns and completions wake
//      it) — but a worker with nothing outstanding (no waiter, no queued task) for 50 µs
//      leaves and goes back to the team's own waiting (one that enters with nothing
//      outstanding leaves at once: the team polls the sources after every loop job), and
//      one that a fork wants leaves at once.
// A waiter runs tasks only while its stack has room (deep recursion would otherwise stack
// one task frame per nested wait without bound): below 128 KiB left it waits without
// running tasks. If it would go to sleep so while tasks are queued, it starts a relief
// thread (a fresh stack, slotless) that runs tasks until the wait is over: otherwise a chain
// of nested waits deeper than every runner's stack would wait forever (with one worker, a
// 20,000-level chain did). At most 64 run at once (W019 past that).
//
// Waking. A spawn wakes one idle worker through the team (notify_work) when fewer workers
// are in the scheduling loop than may run tasks (one wake-up in flight at a time; a worker
// that finds work passes it on), and a sleeper inside the loop that would run it when there
// is one (`runner_sleepers_`: a worker, or a waiter with stack left; a Dekker pair with the
// sleeper's re-check, as wait_policy does). A completion wakes every sleeper.
//
// Counters (task_counters.hpp): the loop keeps HPX's t_func (time in the loop) and t_exec
// (time in task bodies, by phases: a task that waits and runs others meanwhile is split
// into phases around them, so no time is counted twice).
#pragma once

#include "runtime/team.hpp"
#include "task/task_counters.hpp"
#include "task/work_deque.hpp"

#include <aloe/task.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include <unistd.h>

namespace aloe::task {

using aloe::detail::task_node;

class task_pool {
public:
    explicit task_pool(runtime::worker_team& team);
    ~task_pool();
    task_pool(const task_pool&) = delete;
    task_pool& operator=(const task_pool&) = delete;

    /// The pool of the process team (made on first use; a fresh one after fork()).
    static task_pool& process();

    runtime::worker_team& team() noexcept { return team_; }
    int slots() const noexcept { return slot_count_; }

    void spawn(task_node* t) noexcept;
    void help_until(bool (*done)(const void*) noexcept, const void* ctx) noexcept;
    void wake_waiters() noexcept;

    /// At most `k` threads run tasks at once (slots 0..k-1); 0 or less: every slot. The
    /// node's share (runtime/thread_share.hpp), when lower, lowers it further.
    void set_concurrency(int k) noexcept;
    int concurrency() const noexcept {
        return std::min(user_limit_.load(std::memory_order_relaxed), node_share_.load(std::memory_order_relaxed));
    }

    /// Counting on (the default, always in production) or off: only for measuring what the
    /// counters cost (bench/tasks), never exposed to programs.
    void set_counting(bool on) noexcept;

    /// For tests: threads asleep in the scheduling loop that a spawn would wake, and how long
    /// a sleeper waits before it looks again by itself (20 ms; returns the previous value).
    std::uint32_t sleeping_runners() const noexcept { return runner_sleepers_.load(std::memory_order_relaxed); }
    long set_idle_recheck_ns(long ns) noexcept { return idle_recheck_ns_.exchange(ns, std::memory_order_relaxed); }

private:
    struct alignas(64) slot {
        work_deque<task_node*> deque{256};
        std::atomic<bool> owned{false};  // slot 0: held by an outside thread
        std::vector<int> victims;        // the other slots, nearest first
        std::vector<int> class_ends;     // end of each distance class in `victims`
        int core = -1;                   // where its worker is bound (-1: unbound)
    };

    struct thread_state;
    static thread_state& this_thread() noexcept;
    int slot_of_this_thread(thread_state& ts) noexcept;
    void claim_slot0(thread_state& ts) noexcept;
    static std::uint64_t next_random(thread_state& ts) noexcept;

    void adopt(thread_state& ts) noexcept;
    void take_queued_after_fork(task_pool& parent) noexcept;
    /// At exit (an atexit handler): workers start no more tasks; W020 when some are queued.
    static void stop_at_exit() noexcept;
    static bool poll(void* pool, int worker) noexcept;  // the team's work source
    static void wake_for_fork(void* pool) noexcept;
    void worker_session(int worker) noexcept;
    task_node* find(thread_state& ts, int slot, bool& local) noexcept;
    task_node* steal_from_others(thread_state& ts, int slot) noexcept;
    int steal_more(int slot, int victim) noexcept;  // after a steal: more of the victim's oldest
    task_node* take_shared() noexcept;
    runtime::ticks execute(thread_state& ts, task_node* t, runtime::ticks start) noexcept;
    /// A spawn past `inline_after` queued tasks: `t` (the oldest queued, or the new one while
    /// thieves take from the top) runs now, on this thread's stack.
    void run_inline(thread_state& ts, task_node* t) noexcept;
    static bool stack_has_room(const thread_state& ts) noexcept;  // above the stack's floor
    std::uint64_t ns(runtime::ticks t) const noexcept { return ns_scale_.to_ns(t); }
    bool outstanding() const noexcept;  // a waiter, or a task queued
    bool queued() const noexcept;       // a task queued somewhere
    /// One round of waiting after `idle` ticks with nothing found: spin, then yield; false
    /// once both phases are over (time to sleep).
    bool spin_or_yield(runtime::ticks idle) const noexcept;
    void sleep_a_while(bool (*leave)(const task_pool&) noexcept) noexcept;
    /// A relief thread for a waiter past its stack's floor: it runs tasks until the returned
    /// flag is set (the waiter sets it when its wait is over). Null when none could start.
    std::shared_ptr<std::atomic<bool>> start_relief() noexcept;
    void wake_someone() noexcept;
    void plan_victims();
    /// The node daemon's share, asked by a thread that waits for a result (a clock read
    /// while a daemon may be there; one relaxed load otherwise): applied to `limit_`.
    void follow_node_share() noexcept;
    void apply_limits() noexcept;

    runtime::worker_team& team_;
    const int slot_count_;
    std::unique_ptr<slot[]> slots_;

    std::mutex shared_mutex_;
    std::deque<task_node*> shared_;  // spawns of threads with no slot
    alignas(64) std::atomic<std::size_t> shared_size_{0};

    alignas(64) std::atomic<int> workers_in_loop_{0};  // team workers in the scheduling loop
    std::atomic<int> waiters_{0};               // of them, threads waiting on a result
    std::atomic<bool> waking_{false};           // a notify_work in flight
    std::atomic<int> limit_;       // min(user_limit_, node_share_), 0 once exiting: slots that run tasks
    std::atomic<int> user_limit_;  // set_concurrency
    std::atomic<int> node_share_;  // the node daemon's share (slot_count_ without one)
    std::atomic<bool> exiting_{false};  // the process is exiting: limit_ stays 0
    const pid_t made_by_ = ::getpid();  // the process that made it (a fork child has a copy)
    alignas(64) std::atomic<std::uint32_t> epoch_{0};  // bumped to wake sleepers
    std::atomic<std::uint32_t> sleepers_{0};         // asleep on epoch_
    std::atomic<std::uint32_t> runner_sleepers_{0};  // of them, those that would run a task
    std::atomic<int> relief_threads_{0};  // running now (start_relief)
    // A sleeper in the scheduling loop looks again at least this often (a safety net: every
    // spawn and completion that could concern it wakes it).
    std::atomic<long> idle_recheck_ns_{20'000'000};

    counters counters_;
    std::atomic<bool> counting_{true};
    runtime::ticks spin_ticks_;   // pure spinning before yielding
    runtime::ticks yield_ticks_;  // yielding before sleeping
    runtime::ticks grace_ticks_;  // a worker with nothing outstanding stays this long (50 µs)
    runtime::tick_scale ns_scale_;  // a copy: no guard of a function's static per task
};

}  // namespace aloe::task

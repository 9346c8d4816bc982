// One execution of a parallel region as the interposer runs it, and what each of its
// threads knows about it.
//
// libgomp starts the region with region_entry() in place of the program's body: each thread
// records who it is (OpenMP thread number, team size) in its thread_view, runs the body,
// and records its busy time. Worksharing loops aloe takes over live in loop slots: every
// thread counts the taken loops it has met, and the n-th loop of every thread goes to ring
// slot n mod ring_size. The first thread to arrive fills the slot; the last to leave
// (GOMP_loop_end[_nowait]) frees it. With nowait, threads may run any number of loops ahead
// of others (one may not have started a loop that others have left far behind: a valid
// program, since libgomp allocates work shares as threads need them). When the ring slot
// still holds an older loop, the loop gets an overflow slot from the region's own pool
// instead, found by its index: no thread ever waits for another to reach a loop.
//
// Region objects and their overflow slots are pooled: a steady state of parallel regions
// allocates nothing.
#pragma once

#include "omp/gomp_abi.hpp"
#include "omp/omp_site.hpp"
#include "loop/shared_loop.hpp"
#include "runtime/clock.hpp"
#include "runtime/spin_lock.hpp"

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace aloe::omp {

/// Logical iteration i of a loop is the value start + i·incr; libgomp hands chunks as
/// [istart, iend) in values, with the last chunk ending at `end` exactly (lastprivate code
/// compares against it). Values are kept as their 64-bit patterns: one formula serves long
/// and unsigned long long loops, upward and downward.
struct iteration_map {
    std::uint64_t start = 0;
    std::uint64_t incr = 0;
    std::uint64_t end = 0;
    std::uint64_t count = 0;

    static iteration_map for_long(long start, long end, long incr) noexcept;
    static iteration_map for_ull(bool up, ull start, ull end, ull incr) noexcept;

    void bounds(const loop::chunk& c, std::uint64_t& first, std::uint64_t& last) const noexcept {
        first = start + c.begin * incr;
        last = c.end == count ? end : start + c.end * incr;
    }
};

/// Runs of a taken loop a slot sums before committing them to the site (shared_loop's
/// batched commits): its statistics and counters then cost one lock and one update per 64
/// runs instead of per run. Loops a policy observes commit every run.
inline constexpr std::uint32_t taken_run_batch = 64;

struct loop_slot {
    loop_slot() { engine.set_batch_limit(taken_run_batch); }

    std::atomic<std::uint64_t> holds{0};  ///< index of the loop in it + 1; 0 when free
    std::atomic<int> departed{0};
    bool overflow = false;  ///< from the region's overflow pool (team_region::overflow), not the ring
    omp_site* site = nullptr;
    iteration_map map;
    loop::shared_loop engine;
    /// The decision the engine's schedule was made from (fill_slot: the same again reruns it).
    const loop_choice* made_for = nullptr;
    long made_kind = 0;
    long made_chunk = 0;
};

/// The taken loops of a region that found their ring slot busy with an older loop: loop
/// index → slot, each slot from the region's own pool (kept across executions, so a steady
/// state allocates nothing). Used under the region's mutex only.
///
/// Loops are placed in increasing index order (a thread meets loop k + 1 after loop k, and
/// the first thread to meet a loop places it), so the entries stay sorted by index and a
/// lookup is a binary search. A removed entry stays as a gap (no slot) until every entry
/// before it or after it is gone too: the oldest loops usually drain first, and removing one
/// then costs no shifting.
class overflow_loops {
public:
    overflow_loops() = default;
    overflow_loops(const overflow_loops&) = delete;
    overflow_loops& operator=(const overflow_loops&) = delete;

    /// The slot of loop `index`, nullptr when it has none.
    loop_slot* find(std::uint64_t index) noexcept;
    /// A free slot for loop `index`, which is above every index added before; its `holds`
    /// says so (the caller fills it).
    loop_slot& add(std::uint64_t index);
    /// The last thread has left `s`: back to the pool.
    void remove(loop_slot& s) noexcept;
    /// Every slot back to the pool (a new execution of the region).
    void clear() noexcept;
    std::size_t size() const noexcept { return live_; }
    std::size_t slots_made() const noexcept { return all_.size(); }
    /// fn(slot) for every slot of the pool, in use or not.
    template <class F>
    void for_each_slot(F&& fn) {
        for (const std::unique_ptr<loop_slot>& s : all_) fn(*s);
    }

private:
    struct entry {
        std::uint64_t index;
        loop_slot* slot;  ///< nullptr: removed
    };
    std::vector<entry> entries_;  ///< [first_, end) by increasing index; gaps have no slot
    std::size_t first_ = 0;
    std::size_t live_ = 0;
    std::vector<std::unique_ptr<loop_slot>> all_;
    std::vector<loop_slot*> free_;
};

struct team_region {
    /// Slots every thread reaches without a lock. A guess: 8 loops in flight covered every
    /// nowait chain of the tests and applications before overflow slots existed (the ring
    /// then made a thread 8 loops ahead wait); more only grows every region.
    static constexpr std::size_t ring_size = 8;

    omp_site* site = nullptr;
    region_body body = nullptr;
    void* data = nullptr;
    bool preset_loop = false;  ///< combined parallel loop: slot 0 holds it before the team starts
    bool chain_planned = false;  ///< region_threads() asked the site's policy chain
    /// Set when region_threads() added threads for cores borrowed from other ranks (issue
    /// 19): the region's own count; OpenMP threads from here on run pinned to a borrowed
    /// CPU each (region_entry), and go back to their own mask when they leave. 0: none.
    int own_threads = 0;
    /// A guest of this execution moved to its borrowed CPU first: its time says more about
    /// the move than about the region (guest_payoff.hpp leaves it out).
    std::atomic<bool> guest_moved{false};
    /// Iterations of the worksharing loops this execution ran (taken and forwarded, counted
    /// once per loop): the region's work, by which the node daemon's efficiency meter
    /// compares its runs (a region site called on grids of different sizes does different
    /// work each time).
    std::atomic<std::uint64_t> loop_iterations{0};
    std::atomic<int> threads{0};
    /// Fills slots; guards `overflow` and `forward_from`; sizes `busy`. A spin lock: the first
    /// thread of a team to reach a loop takes it for a few dozen instructions.
    runtime::spin_lock mutex;
    std::array<loop_slot, ring_size> slots;
    overflow_loops overflow;  ///< loops whose ring slot was busy (under `mutex`)
    /// Loops from this index on go to libgomp (under `mutex`): set when `cancel parallel`
    /// has left a slot that will never drain (see join_loop).
    std::uint64_t forward_from = no_forwarding;
    static constexpr std::uint64_t no_forwarding = ~std::uint64_t{0};
    std::vector<runtime::ticks> busy;  ///< per OpenMP thread, this execution
    std::atomic<int> busy_room{0};     ///< busy.size(), published after a resize (it only grows)
};

/// What one thread knows about the region it is in (saved and restored around nested ones).
struct thread_view {
    team_region* region = nullptr;
    int thread = 0;
    int threads = 1;
    int level = 0;  ///< omp_get_level() inside the region: a region aloe did not start differs
    std::uint64_t loops_met = 0;
    loop_slot* loop = nullptr;             ///< the taken loop this thread is inside
    /// Its participant there (the per-chunk path). step.direct.next is null whenever `loop`
    /// is (clear_loop()): the next call's fast path tests that alone.
    loop::shared_loop::stepper step;
    iteration_map map;                     ///< the loop's, copied: one line less per chunk
    runtime::ticks loop_t0 = 0;
    loop::chunk held{};                    ///< the loop's final chunk, kept for last (below)
    bool holding = false;
    bool loop_done = false;                ///< its account is closed: next answers false
    omp_site* forwarded = nullptr;         ///< the forwarded loop this thread is inside
    int forwarded_thread = 0;              ///< its OpenMP thread number there (libgomp's): 0 counts
    runtime::ticks forwarded_t0 = 0;
    std::uint64_t forwarded_iterations = 0;

    /// Outside any taken loop (the one place `loop` becomes null).
    void clear_loop() noexcept {
        loop = nullptr;
        step.direct.next = nullptr;
    }
};

// initial-exec: the library is loaded at start-up (LD_PRELOAD or linked), so its TLS is in
// the static block; constinit: no guard on access. One instruction per access.
extern constinit thread_local thread_view this_thread_view __attribute__((tls_model("initial-exec")));

inline thread_view& view() noexcept { return this_thread_view; }

/// A region object from the pool, set up for one execution.
team_region& acquire_region(omp_site& site, region_body body, void* data);
void release_region(team_region& r) noexcept;

/// Around fork() (fork_hooks.cpp): the region pool's mutex, so that a child never finds it
/// held by a thread that was taking or returning a region at the fork. Both are called on the
/// forking thread; nothing is locked while the pool does not exist yet.
void lock_region_pool_for_fork() noexcept;
void unlock_region_pool_after_fork() noexcept;

/// Commits the taken runs every region's slots have summed (loop_slot: batched commits) to
/// their sites, regions running now included (a program may exit inside one): before the
/// exit report reads them.
void flush_taken_runs();
/// In a forked child: the runs the slots summed are the parent's; forgotten.
void forget_taken_runs_in_child() noexcept;

/// The body libgomp runs on every thread of a region aloe started.
void region_entry(void* region) noexcept;

/// For the old GOMP_parallel_start protocol, where the master runs the body itself:
/// enter before it, leave after it (returns the view to restore).
thread_view enter_region_as_master(team_region& r);
void leave_region_as_master(team_region& r, const thread_view& saved, runtime::ticks t0);

/// After the team has joined: the region's time, team size and imbalance into its site.
void record_region(team_region& r, runtime::ticks t0, runtime::ticks t1);

/// The num_threads argument to pass to libgomp for region `r` (of site r.site) whose
/// program asked for `requested` (0: no num_threads clause). Notes non-malleable regions on
/// the site, and on `r` whether the site's policy chain planned it (then record_region
/// lets the chain observe it).
unsigned region_threads(team_region& r, unsigned requested);

/// Threads past its own count an outermost region may take for cores other ranks of the
/// MPI job lend this one (issue 19; 0 when lending cannot happen here, or once the program
/// has read a thread count: it may have sized per-thread storage or split its work by that
/// count, and a wider team would index past it or leave work out).
int region_borrowing_threads() noexcept;
/// The program called omp_get_max_threads(), omp_get_num_procs() or omp_get_thread_limit()
/// (gomp_parallel.cpp): no borrowing from now on.
void note_program_reads_team_size(const char* call) noexcept;

/// Whether `cancel parallel` has been activated in the calling thread's region (libgomp's
/// GOMP_cancellation_point, which has no side effect; false unless OMP_CANCELLATION=true).
bool region_cancelled() noexcept;

/// join_loop's path when the thread's ring slot does not hold its loop yet (below).
template <class Fill>
[[gnu::noinline]] loop_slot* join_loop_slow(team_region& r, std::uint64_t index, Fill& fill);

/// The thread's slot for its next taken loop, filled by the first thread to arrive (with
/// `fill`, under the region's mutex); nullptr when the loop must go to libgomp instead.
///
/// Fast path (every thread but the first, while the loop is in the ring): one acquire load
/// of the ring slot's `holds`, which the filler published with a release store after
/// filling it; no lock. Otherwise join_loop_slow decides under the region's mutex, with
/// checks in an order every thread follows, so all agree on each loop index:
///   1. the ring slot holds this loop: join it;
///   2. an overflow slot holds it: join it;
///   3. the loop is at or after `forward_from`: libgomp's (below);
///   4. the ring slot is free: fill it;
///   5. the ring slot holds an older loop: in a cancelled region, this loop and every later
///      one go to libgomp (forward_from); otherwise the loop gets an overflow slot.
/// A placed loop stays where it is until every thread has left it, so every thread finds
/// it at 1 or 2; a loop is placed (4, 5) or marked (3) only by the first thread to meet it.
///
/// Cancellation: `cancel parallel` makes its thread leave the region at once, so the slots
/// of the loops it skipped never drain, while the other threads may go on through `nowait`
/// loops (no cancellation point in them). Overflow slots would serve them, one more per
/// loop for the rest of the region; libgomp is asked to run those loops instead.
template <class Fill>
loop_slot* join_loop(thread_view& v, Fill&& fill) {
    team_region& r = *v.region;
    const std::uint64_t index = v.loops_met++;
    loop_slot& s = r.slots[index % team_region::ring_size];
    if (s.holds.load(std::memory_order_acquire) == index + 1) [[likely]] return &s;
    return join_loop_slow(r, index, fill);
}

template <class Fill>
loop_slot* join_loop_slow(team_region& r, std::uint64_t index, Fill& fill) {
    std::lock_guard lock(r.mutex);
    loop_slot& s = r.slots[index % team_region::ring_size];
    // A busy ring slot may be freed meanwhile (its last thread does not lock), never filled.
    const std::uint64_t h = s.holds.load(std::memory_order_acquire);
    if (h == index + 1) return &s;
    if (loop_slot* o = r.overflow.find(index)) return o;
    if (index >= r.forward_from) return nullptr;
    if (h == 0) {
        fill(s);
        s.holds.store(index + 1, std::memory_order_release);
        return &s;
    }
    if (region_cancelled()) {
        r.forward_from = index;
        return nullptr;
    }
    loop_slot& o = r.overflow.add(index);
    fill(o);
    return &o;
}

/// The last thread to leave an overflow slot returns it (under the region's mutex).
[[gnu::noinline]] void release_overflow_slot(team_region& r, loop_slot& s) noexcept;

/// The calling thread is done with slot `s` of region `r` (team of `threads`); the last one
/// frees it. A ring slot is freed by one release store (join_loop's fast path reads it).
inline void leave_loop(team_region& r, loop_slot& s, int threads) noexcept {
    if (s.departed.fetch_add(1, std::memory_order_acq_rel) + 1 != threads) return;
    s.departed.store(0, std::memory_order_relaxed);
    if (s.overflow) [[unlikely]] {
        release_overflow_slot(r, s);
        return;
    }
    s.holds.store(0, std::memory_order_release);
}

}  // namespace aloe::omp

// One execution of a parallel region as the interposer runs it, and what each of its
// threads knows about it.
//
// libgomp starts the region with region_entry() in place of the program's body: each thread
// records who it is (OpenMP thread number, team size) in its thread_view, runs the body,
// and records its busy time. Worksharing loops aloe takes over live in the region's ring of
// loop slots: every thread counts the loops it has met, and the n-th loop of every thread
// is slot n mod ring_size. The first thread to arrive fills the slot; the last to leave
// (GOMP_loop_end[_nowait]) frees it. With nowait, threads may be up to ring_size loops
// apart; a thread further ahead waits (yielding) for the slot's previous loop to drain,
// which always happens, since the thread furthest behind never waits.
//
// Region objects are pooled: a steady state of parallel regions allocates nothing.
#pragma once

#include "omp/gomp_abi.hpp"
#include "omp/omp_site.hpp"
#include "loop/shared_loop.hpp"
#include "runtime/clock.hpp"

#include <array>
#include <atomic>
#include <cstdint>
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

struct loop_slot {
    std::atomic<std::uint64_t> holds{0};  ///< index of the loop in it + 1; 0 when free
    std::atomic<int> departed{0};
    omp_site* site = nullptr;
    iteration_map map;
    loop::shared_loop engine;
};

struct team_region {
    static constexpr std::size_t ring_size = 8;

    omp_site* site = nullptr;
    region_body body = nullptr;
    void* data = nullptr;
    bool preset_loop = false;  ///< combined parallel loop: slot 0 holds it before the team starts
    std::atomic<int> threads{0};
    std::mutex mutex;  ///< fills slots
    std::array<loop_slot, ring_size> slots;
    /// Loops from this index on go to libgomp (under `mutex`): set when `cancel parallel`
    /// has left a slot that will never drain (see join_loop).
    std::uint64_t forward_from = no_forwarding;
    static constexpr std::uint64_t no_forwarding = ~std::uint64_t{0};
    std::vector<runtime::ticks> busy;  ///< per OpenMP thread, this execution
};

/// What one thread knows about the region it is in (saved and restored around nested ones).
struct thread_view {
    team_region* region = nullptr;
    int thread = 0;
    int threads = 1;
    int level = 0;  ///< omp_get_level() inside the region: a region aloe did not start differs
    std::uint64_t loops_met = 0;
    loop_slot* loop = nullptr;             ///< the taken loop this thread is inside
    runtime::ticks loop_t0 = 0;
    std::uint64_t loop_iterations = 0;     ///< this thread's share, for the trace
    loop::chunk held{};                    ///< the loop's final chunk, kept for last (below)
    bool holding = false;
    bool loop_done = false;                ///< its account is closed: next answers false
    omp_site* forwarded = nullptr;         ///< the forwarded loop this thread is inside
    runtime::ticks forwarded_t0 = 0;
    std::uint64_t forwarded_iterations = 0;
};

// initial-exec: the library is loaded at start-up (LD_PRELOAD or linked), so its TLS is in
// the static block; constinit: no guard on access. One instruction per access.
extern constinit thread_local thread_view this_thread_view __attribute__((tls_model("initial-exec")));

inline thread_view& view() noexcept { return this_thread_view; }

/// A region object from the pool, set up for one execution.
team_region& acquire_region(omp_site& site, region_body body, void* data);
void release_region(team_region& r) noexcept;

/// The body libgomp runs on every thread of a region aloe started.
void region_entry(void* region) noexcept;

/// For the old GOMP_parallel_start protocol, where the master runs the body itself:
/// enter before it, leave after it (returns the view to restore).
thread_view enter_region_as_master(team_region& r);
void leave_region_as_master(team_region& r, const thread_view& saved, runtime::ticks t0);

/// After the team has joined: the region's time, team size and imbalance into its site.
void record_region(team_region& r, runtime::ticks t0, runtime::ticks t1);

/// The num_threads argument to pass to libgomp for a region whose program asked for
/// `requested` (0: no num_threads clause). Notes non-malleable regions on the site.
unsigned region_threads(omp_site& site, unsigned requested);

/// Lets other threads run while a slot's previous loop drains.
void yield_while_slot_busy() noexcept;

/// Whether `cancel parallel` has been activated in the calling thread's region (libgomp's
/// GOMP_cancellation_point, which has no side effect; false unless OMP_CANCELLATION=true).
bool region_cancelled() noexcept;

/// The thread's slot for its next taken loop, filled by the first thread to arrive (with
/// `fill`, under the region's mutex); nullptr when the loop must go to libgomp instead.
///
/// That happens only after `cancel parallel`: the cancelling thread leaves the region at
/// once and never leaves the slots of the loops it skipped, so they never drain, while the
/// other threads may go on through `nowait` loops (no cancellation point in them). The first
/// thread to find its slot still busy in a cancelled region marks that loop and every later
/// one as libgomp's (forward_from); every thread decides under the region's mutex, in the
/// same order of checks, so all agree on each loop: a loop already filled is joined, one at
/// or after the mark is forwarded.
template <class Fill>
loop_slot* join_loop(thread_view& v, Fill&& fill) {
    team_region& r = *v.region;
    const std::uint64_t index = v.loops_met++;
    loop_slot& s = r.slots[index % team_region::ring_size];
    while (s.holds.load(std::memory_order_acquire) != index + 1) {
        std::unique_lock lock(r.mutex);
        const std::uint64_t h = s.holds.load(std::memory_order_acquire);
        if (h == index + 1) break;
        if (index >= r.forward_from) return nullptr;
        if (h == 0) {
            fill(s);
            s.holds.store(index + 1, std::memory_order_release);
            break;
        }
        if (region_cancelled()) {
            r.forward_from = index;
            return nullptr;
        }
        lock.unlock();
        yield_while_slot_busy();
    }
    return &s;
}

/// The calling thread is done with slot `s` (team of `threads`); the last one frees it.
inline void leave_loop(loop_slot& s, int threads) noexcept {
    if (s.departed.fetch_add(1, std::memory_order_acq_rel) + 1 == threads) {
        s.departed.store(0, std::memory_order_relaxed);
        s.holds.store(0, std::memory_order_release);
    }
}

}  // namespace aloe::omp

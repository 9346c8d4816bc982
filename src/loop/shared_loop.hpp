// A loop whose workers are threads aloe did not start: the threads of an OpenMP region
// (loop_handle, the GOMP interposer in src/omp/) or pthreads. Each thread asks for its next
// chunk of logical iterations [0, count). The first thread to ask builds the schedule for
// the thread count it passes, the others wait for it (a short spin, then yield); the last
// thread to run out commits history and statistics to the site. An empty loop (count 0) is
// counted as one empty invocation by the thread that builds it. Each thread is one
// participant of loop_driver.hpp (the driver parallel_for uses too), stepped one chunk at a
// time; its account is folded into its record once, when it runs out. The thread count is
// the caller's (an OpenMP team's size): the site's policy chain plans the schedule, and a
// thread count it asks for applies to the next region instead (region_threads()).
//
// The site record must stay the site's while loops run on it: the caller holds it pinned
// (site_registry::pin, the interposer) or through a site_ref (loop_handle).
//
// One object can run many loops one after another (reset() between them); its arena keeps
// its memory, so a reused object allocates nothing in the steady state.
//
// Batched commits (set_batch_limit, the interposer's loop slots): runs that no policy
// observes and whose schedule keeps no history are summed by the thread that ends each run
// (run_sums, under the batch's own lock, not the site's) and committed to the site,
// statistics and counters, once per batch:
// when it holds the limit, when a loop of another site, schedule or team size comes, and
// when the owner calls flush() (the interposer: at exit). A batched run is thus in the
// site's statistics and counters at the latest `limit` runs later. The batch has its own
// lock, so flush() may run while a loop of this object runs (an exit inside a region).
#pragma once

#include "loop/any_schedule.hpp"
#include "loop/loop_driver.hpp"
#include "loop/loop_stats.hpp"
#include "loop/site_registry.hpp"
#include "runtime/config.hpp"
#include "runtime/spin_lock.hpp"

#include <aloe/schedule.hpp>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <span>

namespace aloe::loop {

class shared_loop {
public:
    /// The largest thread count accepted (the same bound as aloe::team).
    static constexpr int max_threads = runtime::max_num_threads;

    /// Prepares the next loop: `count` iterations at `site` with `spec`. Call only when no
    /// thread is inside next() (before the first loop, or after every thread saw false).
    /// `site` is pinned or held by the caller until the loop is over.
    void reset(std::uint64_t count, const schedule& spec, site_state& site);

    /// reset() for the loop this object ran last, with the same schedule (the caller knows):
    /// true when it can run again as built (then build() only rewinds it), false when the
    /// caller must reset(). Same conditions of use as reset().
    bool rerun(std::uint64_t count, site_state& site) noexcept;

    /// Thread `thread`'s next chunk; false when it has no more work. The first call builds
    /// the schedule for `threads`; every call must pass the same `threads` and a distinct
    /// `thread` in [0, threads) per calling thread (the caller checks).
    bool next(int thread, int threads, chunk& out) {
        prepare(threads);
        return step_(*this, thread, out, true);
    }

    /// Like next(), but running out does not end the thread's account: the caller still has
    /// work of this loop to do (a chunk it held back) and calls finish() when it is done.
    bool claim(int thread, int threads, chunk& out) {
        prepare(threads);
        return step_(*this, thread, out, false);
    }

    /// Ends the account of a thread whose claim() returned false.
    void finish(int thread) noexcept;

    /// Runs to sum before committing them to their site (0, the default: every run commits
    /// when it ends). Set before the first loop.
    void set_batch_limit(std::uint32_t runs) noexcept { batch_limit_ = runs; }
    /// Commits the runs summed so far to their site. Any thread, at any time.
    void flush();
    /// Forgets them (a forked child: they are its parent's; only the child's thread runs).
    void discard_batch() noexcept {
        batch_lock_.reset_in_forked_child();
        batch_.clear();
    }
    /// Runs summed and not yet committed.
    std::uint64_t batched_runs() noexcept {
        std::lock_guard lock(batch_lock_);
        return batch_.runs;
    }

    /// What a thread needs to step its participant without this object (the interposer's
    /// per-chunk path): call fn(sched, *part, c), or step_direct(direct, *part, c) when
    /// direct.next is set; then finish(thread) once it answers false.
    struct stepper {
        bool (*fn)(void* sched, participant& p, chunk& c) noexcept = nullptr;
        void* sched = nullptr;
        participant* part = nullptr;
        direct_counter direct;
        /// The chunk holding the loop's last iteration is the last one any thread gets
        /// (true for schedules that hand chunks out in order; false for those that steal).
        bool ends_in_order = true;
    };
    /// Builds the schedule for `threads` if no thread has yet, then `thread`'s stepper.
    stepper stepper_for(int thread, int threads);

    /// Builds the schedule for `threads` unless a thread already did (then waits for it).
    void prepare(int threads) {
        if (phase_.load(std::memory_order_acquire) != phase::ready) [[unlikely]] build(threads);
    }

    /// The thread count of the first call; 0 before it.
    int threads() const noexcept { return threads_; }
    bool built() const noexcept { return phase_.load(std::memory_order_acquire) == phase::ready; }
    const schedule& spec() const noexcept { return spec_; }
    std::uint64_t count() const noexcept { return count_; }

private:
    enum class phase : int { unbuilt, building, ready };
    using step_fn = bool (*)(shared_loop&, int, chunk&, bool finish) noexcept;

    template <class S>
    static bool step_schedule(shared_loop& h, int tid, chunk& c, bool finish) noexcept;
    static bool step_empty(shared_loop& h, int tid, chunk& c, bool finish) noexcept;

    void build(int threads);
    void finish_thread();

    std::uint64_t count_ = 0;
    schedule spec_;
    site_state* site_ = nullptr;
    std::atomic<phase> phase_{phase::unbuilt};
    int threads_ = 0;
    runtime::arena scratch_;
    any_schedule sched_;
    std::span<worker_record> records_;
    std::span<participant> participants_;
    step_fn step_ = &step_empty;
    runtime::ticks t0_ = 0;
    std::atomic<int> finished_{0};
    // Batched commits (above): this run goes to the batch; the batch's site and schedule.
    bool batching_ = false;
    // Starts the built schedule over (null: it cannot); rerun() asked build() to.
    void (*rewind_)(any_schedule&) noexcept = nullptr;
    bool rewind_next_ = false;
    std::uint32_t batch_limit_ = 0;
    runtime::spin_lock batch_lock_;  ///< guards batch_, batch_site_ and batch_spec_
    void flush_locked();
    run_sums batch_;
    site_state* batch_site_ = nullptr;
    schedule batch_spec_;
};

}  // namespace aloe::loop

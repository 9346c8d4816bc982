// Loop sites: one record per loop in the program, holding what carries over from one run
// of the loop to the next (tuned weights, tasklet owners) and its statistics.
//
// Bounded (ALOE_SITE_LIMIT, README "Site limit"): a program may name loops without end
// (a name per file, per timestep), so beyond `limit` live records the registry evicts a
// batch of the coldest ones (least recently looked up) that no loop is using and that are
// not pinned, and folds their statistics into one aggregate row: sums of invocations,
// iterations and time, no per-thread vectors, no history, no tuner. A name that comes back
// later starts a fresh record.
//
// Record lifetime. Records live in a pool that only grows and is never freed: an evicted
// record goes to a free list and is given to the next new site. So a pointer to a record
// never dangles; what it may do is name another site by now, which the record's
// `generation` tells (bumped at every eviction). Holders:
//   site_ref (acquire()): a loop running at the site (run_loop; loop_handle for its whole
//       life). Counted in `users`; a record with users > 0 is never evicted.
//   pin(): for ever (the GOMP interposer's sites, the adaptive probes). Counted in `pins`.
//   the thread-local lookup cache: a raw pointer plus the generation it saw, checked after
//       taking `users` (below), so a stale entry is only a cache miss.
//
// acquire()'s fast path against the evictor (the Dekker pattern, all seq_cst):
//   reader:  users.fetch_add(1); g = generation.load(); g == cached ? use it : users -= 1, miss
//   evictor: generation.fetch_add(1); users.load() == 0 ? evict : leave it live
// In the single order of seq_cst operations either the reader's increment comes before the
// evictor's load of `users` (the evictor sees it and leaves the record alone), or the
// evictor's bump comes before the reader's load of `generation` (the reader sees the new
// value and misses). So a reader that sees its generation holds a record nobody evicts
// until it lets go. The slow path takes `users` under the registry's mutex, which the
// evictor holds throughout. A bump whose eviction is abandoned only costs cache misses.
//
// Lookup cost: a thread-local cache hit (pointer, length, line and column compares; the
// text too for explicit names) plus two atomic read-modify-writes of the record's own
// bookkeeping line (take and release) in the steady state; a mutex and a hash lookup
// otherwise.
//
// Record mutexes are striped: record i uses the registry's mutex i mod site_lock_stripes.
// A record's mutex is taken by the thread that starts a loop (to read history) and that
// ends it (to commit history and statistics), never by workers during the loop, and never
// two at once (two records may share one). Striping bounds what the fork() handler must
// hold (every record mutex, so that a child finds each record whole) to a few locks
// whatever the number of sites; a lock per record made that thousands, more than
// ThreadSanitizer's deadlock detector can track (64 held at once).
#pragma once

#include "loop/loop_stats.hpp"
#include "loop/policy_chain.hpp"
#include "loop/site_counters.hpp"
#include "runtime/arena.hpp"

#include <aloe/loop_site.hpp>
#include <aloe/stats.hpp>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <string>
#include <utility>
#include <vector>

namespace aloe::loop {

/// What a schedule learns from one run of a site for the next.
struct site_history {
    int team_size = 0;                        ///< the team the entries below were measured on
    std::vector<double> weights;              ///< weighted: relative speed per thread
    std::vector<std::int32_t> tasklet_owner;  ///< tasklets: thread that ran each tasklet last
};

/// Internal sites (the adaptive schedule's probes) run and count like any other but are
/// left out of all_site_stats() and the JSON; stats_of() still finds them by name.
enum class site_visibility : std::uint8_t { user, internal };

struct site_state {
    explicit site_state(std::mutex& stripe) : mutex(stripe) {}
    site_state(const site_state&) = delete;
    site_state& operator=(const site_state&) = delete;

    // Identity: written by the registry when it gives the record to a site, under its
    // mutex, while no thread uses the record.
    std::string key_name;  ///< the loop_site name, owned here
    std::uint_least32_t line = 0;
    std::uint_least32_t column = 0;
    std::string display_name;  ///< "file:line:column" or the explicit name
    site_visibility visibility = site_visibility::user;

    std::mutex& mutex;  ///< guards history, stats and chain (a stripe: shared, hold one at a time)
    site_history history;
    site_accumulator stats;
    policy_chain chain;  ///< the policies that plan its runs (policy_chain.hpp)
    /// Its counters (site_counters.hpp): instance `site#<record>`, the record's, kept when the
    /// record goes to another site (the registry never drops a counter; records are bounded
    /// by ALOE_SITE_LIMIT, and so are these). site_stats::counters names it.
    site_counters counters;
    std::uint32_t record = 0;  ///< index in the registry's pool, fixed for the record's life

    // The registry's bookkeeping, on a line of its own: all that acquire()'s fast path
    // writes (users, twice per loop; last_use, once per new site in the program).
    alignas(runtime::cache_line) std::atomic<std::uint64_t> generation{0};  ///< +1 at each eviction
    std::atomic<std::uint32_t> users{0};     ///< site_refs alive
    std::atomic<std::uint64_t> last_use{0};  ///< the registry's epoch at the last lookup
    // Under the registry's mutex only.
    std::size_t hash = 0;
    std::uint64_t order = 0;  ///< when the site got this record (snapshot order)
    std::uint32_t pins = 0;
    bool live = false;  ///< holds a site now; free → live (a new site takes it) → free (evicted,
                        ///< only with users == 0 and pins == 0, generation bumped first)
};

/// Counts a call with no iteration at `st` (stats and the loop.* counter): a site's calls()
/// is how often the program reached the loop, whichever driver ran it.
void record_empty_call(site_state& st, const schedule& used);

/// A loop's hold on a site record: while it exists the record is not evicted. Movable.
class site_ref {
public:
    site_ref() noexcept = default;
    explicit site_ref(site_state* s) noexcept : s_(s) {}
    site_ref(site_ref&& other) noexcept : s_(std::exchange(other.s_, nullptr)) {}
    site_ref& operator=(site_ref&& other) noexcept {
        if (this != &other) {
            release();
            s_ = std::exchange(other.s_, nullptr);
        }
        return *this;
    }
    site_ref(const site_ref&) = delete;
    site_ref& operator=(const site_ref&) = delete;
    ~site_ref() { release(); }

    site_state& operator*() const noexcept { return *s_; }
    site_state* operator->() const noexcept { return s_; }
    site_state* get() const noexcept { return s_; }

private:
    // release: the loop's writes to the record (under its mutex anyway) come before an
    // evictor's seq_cst load that sees the count drop.
    void release() noexcept {
        if (s_ != nullptr) s_->users.fetch_sub(1, std::memory_order_release);
    }
    site_state* s_ = nullptr;
};

struct cached_site;  // a thread's lookup cache entry (site_registry.cpp)

class site_registry {
public:
    /// The process's registry, bounded by ALOE_SITE_LIMIT. Its locks are taken around fork().
    static site_registry& instance();

    /// A registry of its own with at most `limit` (>= 1) live records, more only while the
    /// pinned and in-use ones leave none to evict (tests; the process's is instance()).
    /// Not protected around fork().
    explicit site_registry(std::size_t limit);
    site_registry(const site_registry&) = delete;
    site_registry& operator=(const site_registry&) = delete;

    /// The record for `site`, created on first use (evicting colder ones beyond the limit),
    /// held until the returned ref goes. Thread-safe.
    site_ref acquire(const loop_site& site);

    /// The record for `site`, never evicted (for holders that keep it for ever: the GOMP
    /// interposer's sites, the probes). Thread-safe; takes the registry's mutex.
    site_state& pin(const loop_site& site, site_visibility visibility = site_visibility::user);

    /// Snapshots of every live user site in order of first use, then, once any site was
    /// folded, the folded row (site_stats::folded_sites > 0).
    std::vector<site_stats> snapshot();
    /// One live site, internal ones included; empty when there is none (never seen, or
    /// folded).
    std::optional<site_stats> snapshot(const loop_site& site);

    /// Forgets history and statistics of every site and the folded row (records stay).
    void reset();

    std::size_t limit() const noexcept { return limit_; }
    /// Records holding a site now (live) and records ever made (the pool never shrinks).
    std::size_t live_records();
    std::size_t pool_records();

private:
    site_state* lookup_locked(const loop_site& site, std::size_t hash);
    site_state& locate_locked(const loop_site& site);
    site_ref acquire_slow(const loop_site& site, cached_site& slot);
    void evict_locked();
    bool evict_one_locked(site_state& s);
    void touch(site_state& s) noexcept;

    static void before_fork() noexcept;
    static void after_fork() noexcept;
    static void after_fork_in_child() noexcept;

    // A guess: few enough to take all around fork(), in two copies of aloe (libaloe and
    // libaloe-gomp.so) within TSan's 64, enough that two busy sites rarely share one.
    static constexpr std::size_t site_lock_stripes = 16;
    struct alignas(runtime::cache_line) lock_stripe {
        std::mutex mutex;
    };

    const std::size_t limit_;
    const std::uint64_t id_;  // unique per registry, so a thread's cache never mixes two
    std::atomic<std::uint64_t> epoch_{1};  // +1 per new record: the clock of last_use

    std::mutex mutex_;
    std::array<lock_stripe, site_lock_stripes> stripes_;  // the records' mutexes
    std::vector<std::unique_ptr<site_state>> pool_;  // every record ever made
    std::vector<site_state*> free_;
    std::unordered_multimap<std::size_t, site_state*> by_hash_;  // live records
    std::size_t live_ = 0;
    std::uint64_t next_order_ = 0;
    folded_totals folded_;
};

}  // namespace aloe::loop

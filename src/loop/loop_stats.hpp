// Per-site statistics: folded from the workers' records after each loop, by the thread
// that ran it, under the site's mutex. Kept in ticks; converted to seconds when read.
#pragma once

#include "loop/chunk.hpp"
#include "loop/site_counters.hpp"

#include <aloe/schedule.hpp>
#include <aloe/stats.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace aloe::loop {

struct thread_ticks {
    runtime::ticks static_t = 0;
    runtime::ticks dynamic_t = 0;
    runtime::ticks wait_t = 0;
    std::uint64_t iterations = 0;
    std::uint64_t chunks = 0;
    std::uint64_t steals = 0;
};

/// What folding keeps of evicted sites (site_registry.hpp): sums, no per-thread vectors, no
/// history, no tuner.
struct folded_totals {
    std::uint64_t sites = 0;  ///< records folded in (a name evicted twice counts twice)
    std::uint64_t invocations = 0;
    std::uint64_t serial_invocations = 0;
    std::uint64_t empty_invocations = 0;
    std::uint64_t iterations = 0;
    runtime::ticks total_t = 0;
    double imbalance_sum = 0;

    /// The aggregate row: site "(N colder sites, folded)", folded_sites = N.
    site_stats snapshot() const;
};

/// Parallel runs of one site summed: per worker (its last run and its total), the runs'
/// imbalance (max/mean busy time) and time. add_run is the one fold of a run: a site's
/// statistics keep one of these, and so does a batch of runs committed to the site later
/// (shared_loop's, for the interposer's taken loops: merge).
struct run_sums {
    std::uint64_t runs = 0;
    std::uint64_t iterations = 0;
    runtime::ticks total_t = 0;
    runtime::ticks last_t = 0;
    double imbalance_sum = 0;
    double imbalance_last = 0;
    std::vector<thread_ticks> last;   ///< the last run's, per worker
    std::vector<thread_ticks> total;  ///< per worker, every run (as many as the widest run had)

    /// One run: `records` of every worker, fork at `t0`, join done at `t1`.
    void add_run(std::span<const worker_record> records, runtime::ticks t0, runtime::ticks t1);
    /// `later`'s runs, all after these.
    void merge(const run_sums& later);
    /// No run; the vectors keep their room (a batch reused allocates nothing).
    void clear() noexcept;
};

class site_accumulator {
public:
    /// One parallel run: `records` of every worker, fork at `t0`, join done at `t1`.
    void add_parallel(std::span<const worker_record> records, runtime::ticks t0, runtime::ticks t1,
                      const schedule& used);
    /// Parallel runs summed elsewhere (run_sums), all with `used`.
    void add_parallel_runs(const run_sums& runs, const schedule& used);
    /// One run done serially on the calling thread (counted, not timed: it is not parallel time).
    void add_serial(std::uint64_t iterations, const schedule& used);
    /// One call with no iteration: counted, nothing run, not timed.
    void add_empty(const schedule& used);
    /// Adds this site's sums to `into` (the site is being evicted).
    void fold_into(folded_totals& into) const;

    site_stats snapshot(const std::string& name) const;
    void clear() { *this = site_accumulator{}; }

private:
    schedule last_schedule_;
    run_sums parallel_;
    std::uint64_t serial_invocations_ = 0;
    std::uint64_t empty_invocations_ = 0;
    std::uint64_t serial_iterations_ = 0;
};

/// One parallel run into the counters, once per loop by the thread that commits it: the
/// per-worker ones (/threads{…}/…, /loop{locality#0/total}/parallel-runs) and the site's
/// (site_counters.hpp), from one pass over the records.
void count_loop(std::span<const worker_record> records, runtime::ticks t0, runtime::ticks t1, const site_counters& site);
/// Runs summed in a batch (run_sums) into the same counters, once per batch.
void count_runs(const run_sums& runs, const site_counters& site);
void count_serial_loop(std::uint64_t iterations);
void count_empty_loop();

/// One adaptive site's tuner state as a JSON object (also inside format_stats_json).
std::string format_tuning_json(const tuning_stats& t);
/// The MPI slack policy's statistics of a site as a JSON object (policies[].slack).
std::string format_slack_json(const slack_stats& s);

/// JSON for the given snapshots plus every counter.
std::string format_stats_json(const std::vector<site_stats>& sites);

}  // namespace aloe::loop

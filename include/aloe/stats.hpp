/// @file stats.hpp
/// Per-loop-site statistics and the counter registry, readable at any time.
///
/// Each time a loop runs, every thread records the time in its static part, its dynamic
/// part and waiting at the end, the chunks it took and the chunks it stole. Imbalance is
/// max/mean of the per-thread busy time (static + dynamic). With ALOE_STATS=file the whole
/// set is written as JSON at exit.
#pragma once

#include <aloe/export.h>
#include <aloe/loop_site.hpp>
#include <aloe/schedule.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aloe {

/// One thread's share of one loop (or summed over a site's invocations).
struct thread_loop_stats {
    double static_s = 0;   ///< running its static part
    double dynamic_s = 0;  ///< running dynamic chunks (own and stolen)
    double wait_s = 0;     ///< between finishing and the last thread finishing
    std::uint64_t iterations = 0;
    std::uint64_t chunks = 0;  ///< dynamic chunks taken, stolen ones included
    std::uint64_t steals = 0;  ///< chunks taken from another thread's queue
};

/// One invocation of an adaptive site, as the tuner saw it.
struct tuning_step {
    std::string schedule;  ///< the concrete schedule run
    double fs = 1;         ///< its static fraction (1 for static)
    std::int64_t chunk = 0;
    double seconds = 0;    ///< the loop's wall time, fork to join
};

/// Where a policy of a site's chain is (site_stats::policies).
enum class policy_state : std::uint8_t {
    idle,       ///< attached, changing nothing now
    probing,    ///< measuring before it decides
    searching,  ///< trying candidates
    converged,  ///< settled on its choice
    acting,     ///< applying a decision made elsewhere (a daemon's allocation, a prediction)
};

/// "idle", "probing", "searching", "converged" or "acting".
ALOE_API const char* to_string(policy_state s) noexcept;

/// "local", "nlopt" or "sweep".
ALOE_API const char* to_string(adaptive_search s) noexcept;

/// What the MPI slack policy did at a loop site (libaloe-mpi; Kale's thesis, Eq. 4.11): the
/// slack predicted for the MPI call that follows the loop, the slack that call then had, and
/// the dynamic fraction before and after the adjustment. "last" is the latest invocation,
/// "mean" the mean over the invocations the policy planned.
struct slack_stats {
    std::string call;                  ///< the MPI call that follows the loop, e.g. "MPI_Allreduce at app+0x1234"
    std::uint64_t planned = 0;         ///< invocations the policy planned
    std::uint64_t lowered = 0;         ///< of which the dynamic fraction was lowered
    double predicted_last_s = 0;       ///< this loop's share of the predicted slack
    double actual_last_s = 0;          ///< the share of the slack the call then had
    double predicted_mean_s = 0;
    double actual_mean_s = 0;
    double fd_before_last = 0;         ///< the fraction the schedule (or adaptive) chose
    double fd_after_last = 0;          ///< what ran
    double fd_before_mean = 0;
    double fd_after_mean = 0;
    std::string guard;                 ///< why the last invocation kept or set its fraction
};

/// One policy of a site's chain: which, where it is, and what it chose last.
struct policy_status {
    std::string name;     ///< the policy kind, e.g. "adaptive"
    policy_state state = policy_state::idle;
    std::string choice;   ///< what it set last, e.g. "hybrid,fs=0.8,chunk=16" or "threads=4"
    int threads = 0;      ///< the thread count it left the run with (0: not a loop yet)
    std::optional<slack_stats> slack;  ///< the MPI slack policy only
};

/// What an `adaptive` site's tuner knows and chose (empty for other schedules).
struct tuning_stats {
    adaptive_search search = adaptive_search::local;
    policy_state state = policy_state::probing;  ///< probing, searching or converged
    std::string chosen;  ///< the concrete schedule the site runs now
    std::string reason;  ///< why: the model's guard, the search's verdict, the fallback taken
    double model_fs = 1;          ///< the model's static fraction, 1 − fd
    double delay_noise_s = 0;     ///< δ_noise: noise events (FWQ probe, static-part lateness)
    double delay_app_s = 0;       ///< δ_app = t_static − t_dynamic − overhead
    double dequeue_s = 0;         ///< q per chunk (start-up probe, refined from live loops)
    double iteration_s = 0;       ///< t1 from the static parts
    bool weighted = false;        ///< block sizes follow thread speed (a persistently slow core)
    std::uint64_t trials = 0;     ///< invocations spent probing and searching
    std::uint64_t searches = 0;   ///< 1 + times drift re-opened the search
    std::int64_t converged_at = -1;  ///< invocation (1-based) of the first convergence; 0: recalled from ALOE_TUNING; −1: not yet
    std::vector<tuning_step> steps;  ///< the first 256 invocations
};

/// One loop site's statistics. Every time the program reaches the loop counts once, in one
/// of three fields: calls() is their sum.
///
/// Beyond ALOE_SITE_LIMIT sites the coldest are folded into one row (site
/// "(N colder sites, folded)", folded_sites = N): its counts and times are the sums of the
/// folded sites' at the time they were folded; it has no per-thread records and no tuning.
struct site_stats {
    std::string site;       ///< "file:line:column" or the explicit name
    std::string schedule;   ///< canonical string of the schedule last used (empty: folded row)
    std::uint64_t invocations = 0;         ///< parallel runs
    std::uint64_t serial_invocations = 0;  ///< runs done serially (nested, busy team, 1 thread)
    std::uint64_t empty_invocations = 0;   ///< calls with no iteration (nothing run, not timed)
    std::uint64_t iterations = 0;          ///< over all invocations
    double total_s = 0;       ///< wall time of the parallel runs
    double last_s = 0;
    double imbalance_last = 0;  ///< max/mean busy time of the last run (1 = perfect)
    double imbalance_mean = 0;  ///< mean of the per-run imbalance
    std::vector<thread_loop_stats> last;   ///< per thread, last run
    std::vector<thread_loop_stats> total;  ///< per thread, summed
    std::optional<tuning_stats> tuning;    ///< adaptive sites only
    std::vector<policy_status> policies;   ///< the site's policy chain, in order (may be empty)
    /// Its counters' instance, e.g. "site#12": `/loop{site#12}/iterations` and so on
    /// (read_counters); empty before its first parallel run or on the folded row.
    std::string counters;
    std::uint64_t folded_sites = 0;  ///< the folded row: how many site records it sums; else 0

    /// How many times the program reached the loop: parallel, serial and empty runs.
    std::uint64_t calls() const noexcept { return invocations + serial_invocations + empty_invocations; }
};

/// Every site seen so far, in first-run order, then the folded row if any site was folded
/// (ALOE_SITE_LIMIT). aloe's own internal loops (the adaptive schedule's probes) are left out.
ALOE_API std::vector<site_stats> all_site_stats();

/// One site's statistics; empty when it has not run, or when it was folded (a folded site
/// that runs again starts a fresh record).
ALOE_API std::optional<site_stats> stats_of(const loop_site& site);

/// Writes all_site_stats() and the counters as JSON. Returns false and sets `error_message`
/// when the file cannot be written.
ALOE_API bool write_stats_json(const std::string& path, std::string* error_message = nullptr);

/// The same JSON as a string.
ALOE_API std::string stats_json();

/// One site's tuner state as a JSON object (the "tuning" member of stats_json's sites).
ALOE_API std::string tuning_json(const tuning_stats& t);

/// Forgets all site statistics and history (tuned weights, tasklet owners).
ALOE_API void reset_site_history();

// Counters: HPX-style named measurements, `/object{instance}/counter`. A process-wide
// counter has the instance `locality#0/total` (summed over threads) and one instance per
// worker slot, `locality#0/worker-thread#k`; a counter of one site or region has its own
// instance (`/loop{site#12}/iterations`). aloe's own counters:
//
//   /loop{locality#0/total}/parallel-runs     count  loops run by the team (old name loop.parallel_runs)
//   /loop{locality#0/total}/serial-runs       count  loops run serially    (loop.serial_runs)
//   /loop{locality#0/total}/empty-runs        count  calls with no iteration (loop.empty_runs)
//   /threads{locality#0/total}/iterations     count  iterations run        (loop.iterations)
//   /threads{locality#0/total}/chunks         count  dynamic chunks taken  (loop.chunks)
//   /threads{locality#0/total}/steals         count  chunks stolen         (loop.steals)
//   /threads{locality#0/total}/time/busy      ns     static + dynamic part (loop.busy_ns)
//   /threads{locality#0/total}/time/wait      ns     waiting at the join   (loop.wait_ns)
//   /threads{locality#0/total}/cpu-moves      count  workers moved off their holder's CPU (team.cpu_moves)
//
// The /threads counters of a loop go to the instance of the loop's worker index k; the /loop
// counters to the thread that ended the loop. The old dotted names stay readable by
// counter_value() and read_counter() and are listed by all_counters().
//
// Derived counters (counter_description::derived) are computed from other counters when read,
// as HPX's are: e.g. the task scheduler's /threads{locality#0/total}/idle-rate is
// (time/overall − time/cumulative) / time/overall, in ppm, and its worker-thread#k instance
// the same over worker k's counts. A counter_reader's delta() of one is the formula over the
// interval's changes of its operands (that interval's idle-rate). ALOE_PRINT_COUNTER prints
// any of them, HPX-style (docs/counters.md).

/// What a counter's value measures.
enum class counter_unit : std::uint8_t {
    count,        ///< events or items
    nanoseconds,  ///< time
    bytes,
    ratio,        ///< a fraction, in millionths (1'000'000 is 1)
};

/// The unit as printed: "count", "ns", "bytes", "ppm".
ALOE_API std::string_view unit_name(counter_unit unit) noexcept;

/// One counter instance at one moment.
struct counter_sample {
    std::string name;  ///< full name, e.g. "/threads{locality#0/worker-thread#1}/chunks"
    std::uint64_t value = 0;
    counter_unit unit = counter_unit::count;
};

/// The sample as one line, `name value [unit]`, e.g. "/threads{locality#0/total}/time/busy 1250 [ns]".
ALOE_API std::string to_string(const counter_sample& sample);

/// One registered counter (list_counters()).
struct counter_description {
    std::string name;   ///< full name of its total (or of its one instance)
    std::string alias;  ///< an old dotted name still readable ("loop.chunks"), or empty
    counter_unit unit = counter_unit::count;
    bool per_worker = false;  ///< also readable per worker slot, `.../worker-thread#k}/...`
    std::string help;
    bool derived = false;  ///< computed from other counters when read (never counted itself)
};

/// Every registered counter, in registration order.
ALOE_API std::vector<counter_description> list_counters();

/// One counter instance by exact full name (any `worker-thread#k` of a per-worker counter)
/// or old dotted name; empty if there is none. Thread-safe; takes the registry's lock and
/// sums the live threads' slots (cost grows with the threads that ever counted).
/// Example: `aloe::read_counter("/threads{locality#0/total}/steals")->value`.
ALOE_API std::optional<counter_sample> read_counter(std::string_view name);

/// Every instance whose full name matches `pattern`, where `*` matches any text ('/' too):
/// "/threads{locality#0/*}/chunks" (the total and each worker slot seen so far),
/// "/loop{*}/iterations", "*". A pattern without `*` is read_counter(). Old dotted names
/// match only exactly. In registration order, each counter's total before its workers.
ALOE_API std::vector<counter_sample> read_counters(std::string_view pattern);

/// A named counter's total, e.g. "loop.steals" or "/threads{locality#0/total}/steals";
/// empty if unknown.
ALOE_API std::optional<std::uint64_t> counter_value(std::string_view name);

/// Every counter's total, under its old dotted name where it has one, else its full name.
ALOE_API std::vector<std::pair<std::string, std::uint64_t>> all_counters();

/// One consumer's view of the counters a pattern names (a policy, a printer): delta() is
/// the change since this reader's previous delta() or reset(), whatever other readers do.
/// A derived counter's change is its formula over its operands' changes (an idle-rate over
/// the interval, an average over the interval's tasks). Counters are never reset for
/// everyone (only a child of fork() starts its counts afresh, and a reader copied into it
/// starts from 0). Instances that appear later (a new worker slot, a counter registered
/// later) join with a baseline of 0. Not thread-safe: one reader per consumer; a copy has
/// the same baseline and moves on its own. Cost per call: that of read_counters() for the
/// raw instances its instances are computed from.
///
///     aloe::counter_reader wait("/threads{locality#0/total}/time/wait");
///     run_timestep();
///     std::uint64_t ns = wait.delta().at(0).value;  // waiting during this timestep
class ALOE_API counter_reader {
public:
    /// Reads the instances `pattern` names (as read_counters()); the baseline is now.
    explicit counter_reader(std::string pattern);
    counter_reader(const counter_reader& other);
    counter_reader& operator=(const counter_reader& other);
    ~counter_reader();

    /// Each instance's change since the baseline, then moves the baseline to now.
    std::vector<counter_sample> delta();
    /// The same changes, leaving the baseline where it is.
    std::vector<counter_sample> peek();
    /// Moves this reader's baseline to now (no other reader's).
    void reset();

    const std::string& pattern() const noexcept;

private:
    struct state;  // the runtime's window over the pattern (src/loop/stats_api.cpp)
    std::unique_ptr<state> state_;  // never null
};

}  // namespace aloe

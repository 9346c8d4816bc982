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

/// One policy of a site's chain: which, where it is, and what it chose last.
struct policy_status {
    std::string name;     ///< the policy kind, e.g. "adaptive"
    policy_state state = policy_state::idle;
    std::string choice;   ///< what it set last, e.g. "hybrid,fs=0.8,chunk=16" or "threads=4"
    int threads = 0;      ///< the thread count it left the run with (0: not a loop yet)
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
    std::int64_t converged_at = -1;  ///< invocation (1-based) of the first convergence; −1: not yet
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

/// A named counter's value summed over threads, e.g. "loop.steals"; empty if unknown.
ALOE_API std::optional<std::uint64_t> counter_value(std::string_view name);

/// Every counter with its value.
ALOE_API std::vector<std::pair<std::string, std::uint64_t>> all_counters();

}  // namespace aloe

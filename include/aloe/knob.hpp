/// @file knob.hpp
/// A tuned integer parameter of an application, typically a grain size (a stencil's points
/// per partition, iterations per task of a parallel_for over tasks), set in-run: the
/// application runs in *epochs* (a timestep, or a few) of equal work, asks the knob for the
/// value to use before each, and tells it when each is done; the knob reads the task
/// counters over the epoch, turns them into an objective, and a search picks the next value.
/// It converges in about 10 epochs (where APEX's Nelder–Mead took 29–89 whole runs) and
/// then keeps the best value, re-checking a neighbour now and then.
///
/// @code
///   aloe::knob grain("stencil.partition", aloe::knob_range::divisors_of(nx, 1000, nx / 2),
///                    /*start=*/nx / 100, "objective=overall,search=golden");
///   for (int step = 0; step < steps; ++step) {
///       const std::int64_t g = grain.value();  // the partition size for this epoch
///       repartition(g);
///       grain.epoch_begin();                   // optional: repartitioning does not count
///       run_timestep(g);
///       grain.epoch_done();                    // reads the counters, picks the next value
///   }
/// @endcode
///
/// Options, one string like a schedule's (keys in any order, any case, each at most once):
/// - `objective=overall|idle-rate|overhead|overhead+wait|time` (default overall, the one
///   Grubel found best): what an epoch is judged by, per unit of work (docs/grain-tuning.md);
/// - `search=golden|nelder-mead|bobyqa|sweep` (default golden; sweep measures every value:
///   the oracle for benchmarks);
/// - `epochs=N`: epochs the search may spend (default 10; sweep: every value);
/// - `tolerance=T`: the relative gain worth an epoch (default 0.03);
/// - `recheck=N`: epochs after convergence before re-checking a neighbour, doubling after
///   each (default 32; 0: never);
/// - `warmup=N`: first epochs not judged (set-up, cold caches; default 0);
/// - `fixed=V`: pins the value to V (admissible), no search; history() still records what
///   the objective read there.
/// A bad option throws aloe::error naming the knob, the string and the bad part.
///
/// Thread-safety: value() may be called from any thread at any time (one relaxed load; an
/// epoch's tasks see the value the application read before starting them). The other
/// members are thread-safe but meant for one thread, the one that ends epochs.
#pragma once

#include <aloe/export.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aloe {

/// The admissible values of a knob, ascending. The search works in log value.
class ALOE_API knob_range {
public:
    /// The divisors of `n` within [lo, hi] (a grid of n points split into equal partitions).
    /// Cost O(sqrt(n)). Throws aloe::error when n < 1, lo > hi, or none lies in the range.
    static knob_range divisors_of(std::int64_t n, std::int64_t lo, std::int64_t hi);
    /// lo, lo·ratio, lo·ratio², … rounded, and hi: a grain anywhere in [lo, hi] within a
    /// factor sqrt(ratio) of an admissible one. Throws aloe::error when lo < 1, hi < lo or
    /// ratio is not in (1, 16].
    static knob_range geometric(std::int64_t lo, std::int64_t hi, double ratio = 1.05);
    /// Exactly these values (sorted, duplicates dropped). Throws aloe::error when empty or
    /// when one is < 1.
    static knob_range values(std::vector<std::int64_t> admissible);

    const std::vector<std::int64_t>& admissible() const noexcept { return values_; }
    std::int64_t min() const noexcept { return values_.front(); }
    std::int64_t max() const noexcept { return values_.back(); }
    /// The admissible value nearest to `v` in log (the smaller on a tie; below 1 counts as 1).
    std::int64_t nearest(std::int64_t v) const noexcept;
    bool contains(std::int64_t v) const noexcept;

private:
    explicit knob_range(std::vector<std::int64_t> sorted_values) : values_(std::move(sorted_values)) {}
    std::vector<std::int64_t> values_;
};

/// What an epoch is judged by (lower is better).
enum class knob_objective : std::uint8_t {
    overall,        ///< Σt_func: time the workers spent on tasks, their management included
    idle_rate,      ///< (Σt_func − Σt_exec)/Σt_func, a fraction
    overhead,       ///< Σt_func − Σt_exec
    overhead_wait,  ///< T_o + T_w per core (Grubel's best offline predictor; needs t_d1)
    time,           ///< the epoch's wall time
};
/// "overall", "idle-rate", "overhead", "overhead+wait", "time".
ALOE_API std::string_view to_string(knob_objective objective) noexcept;

enum class knob_search : std::uint8_t { golden, nelder_mead, bobyqa, sweep };
/// "golden", "nelder-mead", "bobyqa", "sweep".
ALOE_API std::string_view to_string(knob_search search) noexcept;

/// One epoch's task counters, as deltas over the epoch.
struct knob_counters {
    double overall_ns = 0;  ///< Σt_func, `/threads{locality#0/total}/time/overall`
    double exec_ns = 0;     ///< Σt_exec, `/threads{locality#0/total}/time/cumulative`
    double tasks = 0;       ///< n_t, `/threads{locality#0/total}/count/cumulative`
    int cores = 1;          ///< n_c, the workers that ran them
};

/// Where a knob gets what it does not measure itself. Every member may be left empty.
struct knob_sources {
    /// This epoch's counter deltas, called once per epoch_done() (and by epoch_begin(), to
    /// move the baseline). Empty: the task runtime's counters through the knob's own
    /// aloe::counter_reader, n_c the process team's size. Tests and applications with
    /// their own pool inject it.
    std::function<knob_counters()> counters;
    /// t_d1, the one-core average task duration in ns at a value, for
    /// objective=overhead+wait. Empty: the knob measures it, one epoch on one worker per new
    /// value, through limit_concurrency.
    std::function<double(std::int64_t value)> one_core_task_ns;
    /// Limits the workers that run tasks to `max_workers` (0 lifts the limit). Empty: the
    /// process's (set_knob_concurrency_limit()).
    std::function<void(int max_workers)> limit_concurrency;
};

/// The process-wide concurrency limit knobs use when their sources name none (the task
/// runtime installs one; an application with another pool may). Returns the previous one.
/// Thread-safe.
using knob_concurrency_limit_fn = void (*)(int max_workers);
ALOE_API knob_concurrency_limit_fn set_knob_concurrency_limit(knob_concurrency_limit_fn limit) noexcept;

/// What an epoch was for.
enum class knob_epoch_kind : std::uint8_t {
    warmup,     ///< one of the first `warmup` epochs: not judged
    search,     ///< a value the search measured
    baseline,   ///< one worker, measuring t_d1 for objective=overhead+wait: not judged
    converged,  ///< the best value, after convergence
    recheck,    ///< after convergence, a neighbour of the best
    fixed,      ///< the value `fixed=` pinned
    no_data,    ///< the counters read nothing: not judged
};
/// "warmup", "search", "baseline", "converged", "recheck", "fixed", "no-data".
ALOE_API std::string_view to_string(knob_epoch_kind kind) noexcept;

/// One epoch, as history() reports it: what a convergence plot needs.
struct knob_epoch {
    int epoch = 0;             ///< 0 for the first
    std::int64_t value = 0;    ///< the value it ran with
    knob_epoch_kind kind = knob_epoch_kind::search;
    double objective = std::numeric_limits<double>::quiet_NaN();  ///< per unit of work; NaN: none
    double wall_seconds = 0;
    double work = 1;
    knob_counters counters;      ///< its counter deltas (zero where the counters are absent)
    bool wait_clamped = false;   ///< overhead+wait: t_d < t_d1, T_w counted as 0
    std::int64_t best_value = 0;  ///< the knob's best after it
    double best_objective = std::numeric_limits<double>::quiet_NaN();
    bool converged = false;       ///< the search had converged after it
};

/// What the application tells epoch_done() beyond the counters.
struct knob_epoch_info {
    double work = 1;            ///< units of work the epoch did (objectives are per unit)
    double wall_seconds = -1;   ///< its wall time; < 0: measured by the knob since the epoch began; NaN or infinite: none (the search skips the epoch)
};

class ALOE_API knob {
public:
    /// A knob over `range`, starting at the admissible value nearest to `start` (or at the
    /// `fixed=` value). The first epoch begins now. Throws aloe::error for a bad option, a
    /// fixed= value outside the range, or objective=overhead+wait with neither t_d1 nor a
    /// concurrency limit to measure it.
    knob(std::string name, knob_range range, std::int64_t start, std::string_view options = {},
         knob_sources sources = {});
    /// Lifts a one-core limit the knob set, if an epoch was running under it.
    ~knob();
    knob(const knob&) = delete;
    knob& operator=(const knob&) = delete;

    /// The value the current epoch should use. Any thread; never blocks.
    std::int64_t value() const noexcept { return value_.load(std::memory_order_relaxed); }
    /// Marks the current epoch's start (optional): its wall clock and counter baselines
    /// start now, so work done since the last epoch_done() (repartitioning) does not count.
    void epoch_begin();
    /// Ends the current epoch: reads the counters since it began, judges it, and picks the
    /// value of the next one. Throws what a counters source throws.
    void epoch_done(const knob_epoch_info& info = {});

    bool converged() const;
    /// The best value so far (the start before any epoch is judged).
    std::int64_t best() const;
    /// The best value's mean objective; NaN before any epoch is judged.
    double best_objective() const;
    /// Epochs ended so far.
    int epochs() const;
    /// Why the search stopped ("searching" until it has; "fixed" for a pinned knob), e.g.
    /// "model: less than tolerance/3 to gain", "evaluation budget spent".
    std::string reason() const;
    /// One record per epoch, the first 4096 of them.
    std::vector<knob_epoch> history() const;

    const std::string& name() const noexcept;
    const knob_range& range() const noexcept;
    /// The options in full, e.g. "objective=overall,search=golden,epochs=10,tolerance=0.03,
    /// recheck=32,warmup=0"; parsing it gives the same knob.
    std::string options() const;

private:
    struct state;
    std::atomic<std::int64_t> value_;
    std::unique_ptr<state> state_;
};

}  // namespace aloe

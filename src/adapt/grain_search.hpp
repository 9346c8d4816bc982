// The search behind a grain knob (include/aloe/knob.hpp): over an ordered list of admissible
// values (divisors of a grid size, a geometric range), it proposes the value the next epoch
// should run with, is told the objective measured there, and proposes the next, until it
// converges; then it proposes the best value, and now and then re-checks a neighbour. No
// clock and no counters: grain_objective.hpp turns counters into the value observe() takes,
// knob.cpp drives it once per epoch, and the tests drive it with synthetic costs.
//
// Searches (all in log value: grain costs are U-shaped in log g, seed 002 §3.1):
// - golden: bracketing plus model-guided golden section, below. The default.
// - nelder-mead, bobyqa: NLopt's, through nlopt_search (its own thread, ask/tell), over
//   ln(value) snapped to the nearest admissible value; a value already measured is answered
//   from its mean without spending an epoch. APEX's Nelder–Mead (Active Harmony) took 29–89
//   whole-run trials (§3.3); these are here to compare with, in-run.
// - sweep: every value once, the start first, then ascending; the best. The oracle.
//
// golden, step by step (each step is one epoch; the start is the first):
// 1. First probe: halfway in log from the start to the far end of the larger side. A start
//    100× off lies towards one end of a useful range, and the optimum lies in the larger
//    part more often than not; both ends are far from it.
// 2. Bracketing: while the best value has no measured neighbour on one side (and is not
//    the domain's edge there), step that way: half the remaining room the first time on
//    that side, then golden growth (×1.618) of the last step, up to the edge (a monotone
//    curve reaches its edge in a few steps instead of halving towards it forever); further
//    where the fitted model (grain_model.hpp) puts its minimum beyond.
// 3. Inside the bracket (best, and a measured neighbour on each side or the edge): the next
//    point is the minimum of the model fitted to the best and its two measured neighbours on
//    each side, kept 10% of the bracket away from its ends; without a usable fit, the golden
//    section point of the larger half (Brent's safeguard, with a grain model in place of a
//    parabola: on these U-shapes a parabola in log g through points on the steep sides
//    lands far from the bottom, a + b/g + c·g lands on it).
// 4. Noise: before narrowing the bracket, a point whose mean is within the noise margin of
//    the best's (k·σ·sqrt(1/n_i + 1/n_b), σ the pooled relative spread of repeated values,
//    prior 2%) by more than the tolerance is re-measured (the one of the pair with fewer
//    samples, at most 3 each): only where noise could hide a gap worth the tolerance.
// 5. Stops, once the best has been measured twice (its second sample also feeds σ): the
//    model predicts less than tolerance/3 to gain and fits at least 4 points within the
//    noise; or the convex lower bound (grain_model.hpp) is within tolerance/3 of the best; or
//    the bracket is narrower than ×1.15; or no admissible value is left inside it; or the
//    budget of evaluations is spent (then the best mean wins).
// On the reference-like curves of the tests (cosh-shaped U's of several steepness, a
// plateau, an asymmetric U, a stencil cost model with and without wave steps, monotone
// costs), from starts 100× too fine and 100× too coarse, exact costs converge in 5–9 epochs
// within 1% of the best value; with multiplicative noise of ±1–2% every run ends within 3%
// in at most 10 epochs, of ±3% and ±5% 99.9% and 99.5% of them (worst +3.7%, +4.5%; 400
// seeds, grain_search_test.cpp). NLopt's two, with the same budget: every exact run within
// 3%; at ±3% noise Nelder–Mead 96% (worst +14.7%), BOBYQA 99% (worst +4.0%).
//
// After convergence (all but sweep): every `recheck_every` epochs, doubling up to 1024, one
// epoch runs a neighbour ×1.25 finer or coarser (alternately); a neighbour faster than the
// recent epochs at the best by more than the tolerance and the noise margin becomes the best
// (a slow walk that follows a drifting optimum). Its cost is bounded by one epoch in
// recheck_every, at a value within 25% of the best.
//
// Not thread-safe: one caller (the knob, under its lock).
#pragma once

#include "adapt/candidate_race.hpp"
#include "adapt/grain_model.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace aloe::adapt {

class nlopt_search;

enum class grain_search_kind : std::uint8_t { golden, nelder_mead, bobyqa, sweep };
/// The kinds as the knob's options spell them, in enum order.
inline constexpr std::array<std::string_view, 4> grain_search_names{"golden", "nelder-mead", "bobyqa", "sweep"};

enum class grain_search_state : std::uint8_t { searching, converged };

/// Why a search converged (none while searching).
enum class grain_stop : std::uint8_t {
    none,
    single_value,  ///< one admissible value: nothing to search
    model,         ///< the fitted model predicts less than tolerance/3 to gain
    certificate,   ///< the convex lower bound is within tolerance/3 of the best
    bracket,       ///< the bracket is narrower than the resolution (×1.15)
    adjacent,      ///< no admissible value left inside the bracket
    budget,        ///< the evaluation budget is spent: the best mean
    optimiser,     ///< NLopt ended its search
    swept,         ///< sweep measured every value
};
std::string_view to_string(grain_stop stop) noexcept;

struct grain_search_options {
    grain_search_kind kind = grain_search_kind::golden;
    /// Epochs the search may spend before settling on the best; 0 is the kind's default:
    /// 10 (the target), sweep every value.
    int max_evaluations = 0;
    /// The relative gap in the objective worth spending an epoch on (the 3%).
    double tolerance = 0.03;
    /// After convergence, epochs to the first re-check of a neighbour (then doubling); 0:
    /// never. sweep never re-checks.
    int recheck_every = 32;
};

class grain_search {
public:
    /// Searches `values` (at least one; each > 0, strictly increasing) from the admissible
    /// value nearest to `start` in log. Throws std::invalid_argument naming the problem (no
    /// values, unsorted or not positive ones, a budget < 0, a tolerance not in (0, 1), a
    /// recheck_every < 0).
    grain_search(std::vector<std::int64_t> values, std::int64_t start, const grain_search_options& options = {});
    ~grain_search();
    grain_search(grain_search&&) noexcept;
    grain_search& operator=(grain_search&&) noexcept;

    /// The index into values() (and the value) the next epoch should run with.
    std::size_t index_to_run() const noexcept { return current_; }
    std::int64_t value_to_run() const noexcept { return values_[current_]; }
    /// The objective the epoch at value_to_run() measured (lower is better, >= 0). A
    /// negative or non-finite value is no evidence: ignored, and the same value is proposed
    /// again.
    void observe(double objective);

    grain_search_state state() const noexcept { return state_; }
    grain_stop stop_reason() const noexcept { return stop_; }
    std::size_t best_index() const noexcept { return best_; }
    std::int64_t best_value() const noexcept { return values_[best_]; }
    /// The mean objective at best_value() while searching (or its first re-check sample, once
    /// a re-check moved the best there); +inf before any observation.
    double best_objective() const noexcept;
    /// Observations taken while searching (converged: the epoch of convergence).
    int evaluations() const noexcept { return evaluations_; }
    /// The pooled relative spread of repeated values (2% until one value has two samples).
    double noise_estimate() const noexcept;
    /// Epochs observed since convergence, and how many of them were re-checks.
    int epochs_since_convergence() const noexcept { return since_converged_; }
    int rechecks() const noexcept { return rechecks_; }

    std::span<const std::int64_t> values() const noexcept { return values_; }
    const grain_search_options& options() const noexcept { return options_; }
    /// Evaluations the search may spend (options' max_evaluations, or the kind's default).
    int budget() const noexcept { return budget_; }
    /// The statistics of one value: samples taken while searching and their mean.
    const running_stats& stats(std::size_t index) const { return stats_.at(index); }

private:
    void decide_next();  // searching: the next index, or convergence
    void converge(grain_stop why);
    void observe_converged(double objective);
    std::optional<std::size_t> golden_next(grain_stop& why);
    std::optional<std::size_t> golden_expand(std::size_t best, std::size_t other, bool down);
    std::optional<std::size_t> golden_confirm(std::size_t best) const;
    std::optional<std::size_t> nlopt_next();
    std::optional<std::size_t> sweep_next() const;

    std::vector<std::size_t> measured() const;      // indices with samples, ascending
    std::size_t best_measured() const;              // least mean among them
    std::size_t nearest(double log_value) const;    // the index nearest in log
    /// The unmeasured index in [lo, hi] nearest to log_value in log; none when all are measured.
    std::optional<std::size_t> nearest_unmeasured(double log_value, std::size_t lo, std::size_t hi) const;
    /// The model fitted to `at` and up to two measured neighbours on each side.
    std::optional<grain_fit> local_fit(const std::vector<std::size_t>& measured, std::size_t at) const;

    grain_search_options options_;
    int budget_ = 0;
    std::vector<std::int64_t> values_;
    std::vector<double> log_;  // ln of each value
    std::vector<running_stats> stats_;
    std::size_t current_ = 0;
    std::size_t best_ = 0;
    grain_search_state state_ = grain_search_state::searching;
    grain_stop stop_ = grain_stop::none;
    int evaluations_ = 0;
    std::array<int, 2> expansions_{};  // golden's bracketing steps towards the low, the high end
    std::unique_ptr<nlopt_search> nlopt_;

    // After convergence.
    int since_converged_ = 0;
    int rechecks_ = 0;
    int recheck_gap_ = 0;    // epochs between re-checks now
    int next_recheck_ = 0;   // since_converged_ at the next one
    bool recheck_up_ = false;
    bool rechecking_ = false;  // current_ is a re-check's neighbour
    std::vector<double> recent_;  // the last samples at the best, a ring
    std::size_t recent_next_ = 0;
};

}  // namespace aloe::adapt

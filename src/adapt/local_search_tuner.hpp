// Online local search for one knob of one loop site (uSched in Kale's thesis, ch. 6: start
// from the model's value, try ±step, walk while it helps). It is driven by the loop itself:
// value_to_run() says what the next invocation should use, observe() takes how long that
// invocation took. Each candidate gets several invocations and is judged by their median (or
// mean, see median.hpp), a move needs a clear gain (min_gain), so noise does not walk the
// knob around. Once converged
// it watches the time at the chosen value (drift_watch.hpp: least times of windows of
// drift_patience invocations, ±drift_threshold) and re-opens the search when it changes.
#pragma once

#include "adapt/drift_watch.hpp"
#include "adapt/median.hpp"

#include <string_view>
#include <vector>

namespace aloe::adapt {

struct local_search_options {
    double step = 0.05;            ///< grid step (uSched's ±0.05)
    double low = 0, high = 1;      ///< the knob's range
    int samples_per_trial = 3;     ///< invocations per candidate; their `statistic` judges it
    sample_statistic statistic = sample_statistic::median;  ///< mean when infrequent noise matters
    double min_gain = 0.01;        ///< relative improvement a move must show
    double drift_threshold = 0.10; ///< relative change of the converged time that re-opens
    int drift_patience = 3;        ///< invocations the change must last (their median)
    int max_trials = 40;           ///< candidates per search, then settle on the best so far
    int walk_patience = 1;         ///< steps tried past one that did not help (one unlucky
                                   ///< median must not end the walk)
};

enum class tuner_state { searching, converged };

class local_search_tuner {
public:
    /// Starts searching at `start` (snapped to the grid, clamped to the range). Throws
    /// std::invalid_argument for a bad range, step or count, naming it.
    explicit local_search_tuner(double start, const local_search_options& options = {});

    double value_to_run() const noexcept;
    void observe(double seconds);

    tuner_state state() const noexcept { return state_; }
    double best_value() const noexcept { return value_of(center_); }
    double best_seconds() const noexcept { return center_seconds_; }
    int trials() const noexcept { return trials_; }          ///< candidates judged, all searches
    int searches() const noexcept { return searches_; }      ///< 1 + times drift re-opened one
    std::string_view last_reason() const noexcept { return reason_; }

private:
    enum class phase { center, left, right, walk };
    double value_of(int index) const noexcept;
    void judged(double median_seconds);
    void try_next(int index, phase p);
    void settle(std::string_view why);
    void start_search();

    local_search_options options_;
    int last_index_ = 0;
    tuner_state state_ = tuner_state::searching;
    phase phase_ = phase::center;
    int center_ = 0;
    int candidate_ = 0;
    int direction_ = 0;
    int misses_ = 0;
    double center_seconds_ = 0;
    double left_seconds_ = -1, right_seconds_ = -1;
    int search_trials_ = 0;
    int trials_ = 0;
    int searches_ = 0;
    std::vector<double> samples_;
    drift_watch drift_;
    std::string_view reason_ = "searching";
};

}  // namespace aloe::adapt

#include "adapt/local_search_tuner.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace aloe::adapt {

local_search_tuner::local_search_tuner(double start, const local_search_options& options)
    : options_(options), drift_(options.drift_patience, options.drift_threshold) {
    if (!(options.high > options.low)) throw std::invalid_argument("local_search_tuner: high must exceed low");
    if (!(options.step > 0 && options.step <= options.high - options.low))
        throw std::invalid_argument("local_search_tuner: step must be in (0, high - low]");
    if (options.samples_per_trial < 1 || options.drift_patience < 1 || options.max_trials < 1 || options.walk_patience < 0)
        throw std::invalid_argument(
            "local_search_tuner: samples_per_trial, drift_patience and max_trials must be >= 1, walk_patience >= 0");
    if (!(options.min_gain >= 0) || !(options.drift_threshold > 0))
        throw std::invalid_argument("local_search_tuner: min_gain must be >= 0 and drift_threshold > 0");
    last_index_ = static_cast<int>(std::floor((options.high - options.low) / options.step + 1e-9));
    const double s = std::clamp(std::isfinite(start) ? start : options.low, options.low, options.high);
    center_ = std::clamp(static_cast<int>(std::lround((s - options.low) / options.step)), 0, last_index_);
    start_search();
}

double local_search_tuner::value_of(int index) const noexcept {
    return std::min(options_.high, options_.low + index * options_.step);
}

double local_search_tuner::value_to_run() const noexcept {
    return value_of(state_ == tuner_state::converged ? center_ : candidate_);
}

void local_search_tuner::start_search() {
    state_ = tuner_state::searching;
    ++searches_;
    search_trials_ = 0;
    left_seconds_ = right_seconds_ = -1;
    samples_.clear();
    reason_ = "searching";
    try_next(center_, phase::center);
}

void local_search_tuner::try_next(int index, phase p) {
    candidate_ = index;
    phase_ = p;
    samples_.clear();
}

void local_search_tuner::settle(std::string_view why) {
    state_ = tuner_state::converged;
    drift_.reset();
    reason_ = why;
    samples_.clear();
}

void local_search_tuner::observe(double seconds) {
    if (!std::isfinite(seconds) || seconds < 0) return;  // a broken timing is not evidence
    if (state_ == tuner_state::converged) {
        if (drift_.observe(seconds)) start_search();
        return;
    }
    samples_.push_back(seconds);
    if (static_cast<int>(samples_.size()) < options_.samples_per_trial) return;
    ++trials_;
    ++search_trials_;
    judged(summarize(samples_, options_.statistic));
}

void local_search_tuner::judged(double t) {
    const bool budget_left = search_trials_ < options_.max_trials;
    const auto better = [&](double candidate, double than) {
        return candidate >= 0 && candidate < than * (1 - options_.min_gain);
    };
    switch (phase_) {
    case phase::center:
        center_seconds_ = t;
        if (!budget_left) return settle("trial budget spent");
        if (center_ > 0) return try_next(center_ - 1, phase::left);
        if (center_ < last_index_) return try_next(center_ + 1, phase::right);
        return settle("no neighbour in range");
    case phase::left:
        left_seconds_ = t;
        if (budget_left && center_ < last_index_) return try_next(center_ + 1, phase::right);
        break;
    case phase::right:
        right_seconds_ = t;
        break;
    case phase::walk:
        if (better(t, center_seconds_)) {
            center_ = candidate_;
            center_seconds_ = t;
            misses_ = 0;
        } else if (++misses_ > options_.walk_patience) {
            return settle("converged: the next steps do not help");
        }
        if (!budget_left) return settle("trial budget spent");
        if (candidate_ + direction_ < 0 || candidate_ + direction_ > last_index_)
            return settle(misses_ == 0 ? "converged at the end of the range" : "converged: the next steps do not help");
        return try_next(candidate_ + direction_, phase::walk);
    }
    // Both neighbours judged (or the one in range): move to the better one if it clearly
    // helps, then keep walking that way.
    const bool go_left = better(left_seconds_, center_seconds_) &&
                         (right_seconds_ < 0 || left_seconds_ <= right_seconds_);
    const bool go_right = !go_left && better(right_seconds_, center_seconds_);
    if (!go_left && !go_right) {
        // Neither clearly helps. If one is lower at all, look one step past it before
        // settling: a neighbour's unlucky median must not end the search at its start.
        const bool left_lower = left_seconds_ >= 0 && left_seconds_ < center_seconds_ &&
                                (right_seconds_ < 0 || left_seconds_ <= right_seconds_);
        const bool right_lower = !left_lower && right_seconds_ >= 0 && right_seconds_ < center_seconds_;
        const int beyond = center_ + (left_lower ? -2 : 2);
        if (options_.walk_patience == 0 || !(left_lower || right_lower) || !budget_left || beyond < 0 ||
            beyond > last_index_)
            return settle("converged: neither neighbour helps");
        direction_ = left_lower ? -1 : 1;
        misses_ = 1;
        return try_next(beyond, phase::walk);
    }
    direction_ = go_left ? -1 : 1;
    misses_ = 0;
    center_ += direction_;
    center_seconds_ = go_left ? left_seconds_ : right_seconds_;
    if (!budget_left) return settle("trial budget spent");
    if (center_ + direction_ < 0 || center_ + direction_ > last_index_)
        return settle("converged at the end of the range");
    try_next(center_ + direction_, phase::walk);
}

}  // namespace aloe::adapt

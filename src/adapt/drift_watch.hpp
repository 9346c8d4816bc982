// Watching a converged choice for a change of regime. The least time of the first `window`
// invocations after settling is the baseline; the least of every later window (sliding) is
// compared with it, and a relative change beyond `threshold`, either way, is drift. Least
// times, because noise only adds time: a slow core or a changed loop moves them, noise that
// strikes even half the steps does not (all of a window of 8 must be hit: 1 in 256).
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

namespace aloe::adapt {

class drift_watch {
public:
    drift_watch(int window, double threshold) : window_(window), threshold_(threshold) {}

    /// Forgets the baseline (call when a new choice settles).
    void reset() {
        samples_.clear();
        baseline_ = 0;
    }

    /// One invocation's time; true when the regime moved (the caller re-opens its search).
    bool observe(double seconds) {
        samples_.push_back(seconds);
        if (static_cast<int>(samples_.size()) < window_) return false;
        const double now = *std::min_element(samples_.begin(), samples_.end());
        if (baseline_ <= 0) {
            baseline_ = now;
            samples_.clear();
            return false;
        }
        samples_.erase(samples_.begin());
        last_change_ = now / baseline_ - 1;
        return std::abs(last_change_) > threshold_;
    }

    /// The relative change the last full window showed.
    double last_change() const noexcept { return last_change_; }

private:
    int window_;
    double threshold_;
    std::vector<double> samples_;
    double baseline_ = 0;
    double last_change_ = 0;
};

}  // namespace aloe::adapt

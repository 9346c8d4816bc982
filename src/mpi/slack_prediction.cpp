#include "mpi/slack_prediction.hpp"

#include <algorithm>
#include <cmath>

namespace aloe::mpi {

void prediction_error::add(double predicted, double actual, double interval) noexcept {
    ++predictions;
    abs_error_s += std::fabs(predicted - actual);
    actual_s += actual;
    interval_s += interval;
}

// Far: more than four robust standard deviations (1.4826 × the median absolute deviation)
// from the window's median, and more than a quarter of it and 1 µs (a window of equal values
// has no deviation: timer jitter must not count as a change).
int slack_predictor::side_if_far(double slack_s) const noexcept {
    if (count_ < 3) return 0;
    const double m = median_s_;
    if (std::fabs(slack_s - m) <= std::max({4 * 1.4826 * deviation_s_, 0.25 * m, 1e-6})) return 0;
    return slack_s > m ? 1 : -1;
}

// The window is also kept sorted (an insertion and a removal per invocation, no sort), so its
// median is one load and its median absolute deviation one merge from the median outwards.
void slack_predictor::summarise_window() noexcept {
    const int c = count_;
    median_s_ = c % 2 == 1 ? sorted_[static_cast<std::size_t>(c / 2)]
                           : (sorted_[static_cast<std::size_t>(c / 2 - 1)] + sorted_[static_cast<std::size_t>(c / 2)]) / 2;
    int right = static_cast<int>(std::lower_bound(sorted_.begin(), sorted_.begin() + c, median_s_) - sorted_.begin());
    int left = right - 1;
    double previous = 0, current = 0;
    for (int taken = 0; taken <= c / 2; ++taken) {  // the (c/2)-th smallest distance, and the one before
        const double below = left >= 0 ? median_s_ - sorted_[static_cast<std::size_t>(left)] : HUGE_VAL;
        const double above = right < c ? sorted_[static_cast<std::size_t>(right)] - median_s_ : HUGE_VAL;
        previous = current;
        if (below <= above) {
            current = below;
            --left;
        } else {
            current = above;
            ++right;
        }
    }
    deviation_s_ = c % 2 == 1 ? current : (previous + current) / 2;
}

void slack_predictor::push(double slack_s) noexcept {
    auto at = [this](int i) -> double& { return sorted_[static_cast<std::size_t>(i)]; };
    if (count_ == window) {  // the oldest leaves the sorted copy
        const double oldest = recent_[static_cast<std::size_t>(next_)];
        int i = 0;
        while (i < count_ - 1 && at(i) != oldest) ++i;
        for (; i < count_ - 1; ++i) at(i) = at(i + 1);
        --count_;
    }
    recent_[static_cast<std::size_t>(next_)] = slack_s;
    next_ = (next_ + 1) % window;
    int j = count_;
    for (; j > 0 && at(j - 1) > slack_s; --j) at(j) = at(j - 1);
    at(j) = slack_s;
    ++count_;
}

void slack_predictor::observe(double slack_s, double interval_s) noexcept {
    slack_s = std::max(slack_s, 0.0);
    last_error_.add(predict_last(), slack_s, interval_s);
    median_error_.add(predict_median(), slack_s, interval_s);
    ++observed_;
    last_s_ = slack_s;
    seen_[static_cast<std::size_t>(seen_next_)] = slack_s;
    seen_next_ = (seen_next_ + 1) % window;
    seen_count_ = std::min(seen_count_ + 1, window);
    const int side = side_if_far(slack_s);
    if (side == 0) {
        far_in_a_row_ = 0;
        push(slack_s);
        summarise_window();
        return;
    }
    // Two far invocations in a row on the same side are a new phase: the window restarts from
    // them. One alone (a late rank, a noise event) is kept out of the window.
    if (far_in_a_row_ > 0 && side != far_side_) far_in_a_row_ = 0;
    far_side_ = side;
    pending_[static_cast<std::size_t>(far_in_a_row_)] = slack_s;
    if (++far_in_a_row_ < 2) return;
    count_ = next_ = far_in_a_row_ = 0;
    push(pending_[0]);
    push(pending_[1]);
    summarise_window();
    ++changes_;
}

}  // namespace aloe::mpi

#include "mpi/slack_prediction.hpp"

#include <algorithm>
#include <cmath>

namespace aloe::mpi {

namespace {

template <std::size_t N>
double median_of(std::array<double, N> values, int count) noexcept {
    const auto mid = values.begin() + count / 2;
    std::nth_element(values.begin(), mid, values.begin() + count);
    if (count % 2 == 1) return *mid;
    const double upper = *mid;
    return (*std::max_element(values.begin(), mid) + upper) / 2;
}

void score(prediction_error& e, double predicted_s, double actual_s, double interval_s) noexcept {
    ++e.predictions;
    e.abs_error_s += std::fabs(predicted_s - actual_s);
    e.actual_s += actual_s;
    e.interval_s += interval_s;
}

}  // namespace

double slack_predictor::predict_median() const noexcept {
    return count_ == 0 ? seed_s_ : median_of(recent_, count_);
}

// Far: more than four robust standard deviations (1.4826 × the median absolute deviation)
// from the window's median, and more than a quarter of it and 1 µs (a window of equal values
// has no deviation: timer jitter must not count as a change).
int slack_predictor::side_if_far(double slack_s) const noexcept {
    if (count_ < 3) return 0;
    const double m = median_of(recent_, count_);
    std::array<double, window> deviation{};
    for (int i = 0; i < count_; ++i) deviation[static_cast<std::size_t>(i)] = std::fabs(recent_[static_cast<std::size_t>(i)] - m);
    const double mad = median_of(deviation, count_);
    if (std::fabs(slack_s - m) <= std::max({4 * 1.4826 * mad, 0.25 * m, 1e-6})) return 0;
    return slack_s > m ? 1 : -1;
}

void slack_predictor::push(double slack_s) noexcept {
    recent_[static_cast<std::size_t>(next_)] = slack_s;
    next_ = (next_ + 1) % window;
    count_ = std::min(count_ + 1, window);
}

void slack_predictor::observe(double slack_s, double interval_s) noexcept {
    slack_s = std::max(slack_s, 0.0);
    score(last_error_, predict_last(), slack_s, interval_s);
    score(median_error_, predict_median(), slack_s, interval_s);
    ++observed_;
    last_s_ = slack_s;
    const int side = side_if_far(slack_s);
    if (side == 0) {
        far_in_a_row_ = 0;
        push(slack_s);
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
    ++changes_;
}

}  // namespace aloe::mpi

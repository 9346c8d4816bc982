// Predicting the slack of a call's next invocation from the slack of its past ones (issue 15,
// item 2), per key (call and call site). Two predictors side by side, each scored on every
// invocation before it learns from it:
//   last     the last slack seen at the key: the Kale thesis's (after Adagio);
//   median   the median of the last `window` slacks, restarted by a change detector when two
//            invocations in a row fall far outside the window on the same side (a new phase):
//            one late rank in one step moves it not at all, a lasting change within two.
// The first prediction at a key is the seed (the thesis's naive one, from a calibration).
// The error is kept two ways: relative to the slack itself (sum |predicted − actual| over sum
// actual; undefined where a rank never waits) and relative to the time between invocations
// (what a scheduler spending the slack can lose: its share of the step).
#pragma once

#include <array>
#include <cstdint>
#include <span>

namespace aloe::mpi {

struct prediction_error {
    std::uint64_t predictions = 0;
    double abs_error_s = 0;  ///< sum of |predicted − actual|
    double actual_s = 0;     ///< sum of the actual slacks
    double interval_s = 0;   ///< sum of the times between invocations, where given

    /// Scores one prediction against what came.
    void add(double predicted, double actual, double interval) noexcept;

    /// sum |error| / sum actual; negative when no slack was ever seen (undefined).
    double relative_to_slack() const noexcept { return actual_s > 0 ? abs_error_s / actual_s : -1; }
    /// sum |error| / sum interval; negative when no interval was given.
    double relative_to_interval() const noexcept { return interval_s > 0 ? abs_error_s / interval_s : -1; }
};

class slack_predictor {
public:
    static constexpr int window = 9;

    slack_predictor() noexcept = default;
    explicit slack_predictor(double seed_s) noexcept : seed_s_(seed_s) {}

    double predict_last() const noexcept { return count_ == 0 ? seed_s_ : last_s_; }
    double predict_median() const noexcept { return count_ == 0 ? seed_s_ : median_s_; }
    /// The last `window` slacks as they came, far ones included, in no particular order (the
    /// lending rule weighs how often a wait is long, which the median's window filters out).
    std::span<const double> recent() const noexcept { return {seen_.data(), static_cast<std::size_t>(seen_count_)}; }

    /// The slack this invocation had, and the time since the previous invocation at the key
    /// (0: unknown). Scores both predictions, then learns.
    void observe(double slack_s, double interval_s = 0) noexcept;

    const prediction_error& error_of_last() const noexcept { return last_error_; }
    const prediction_error& error_of_median() const noexcept { return median_error_; }
    /// Times the change detector restarted the window.
    std::uint64_t changes() const noexcept { return changes_; }
    std::uint64_t observed() const noexcept { return observed_; }

private:
    int side_if_far(double slack_s) const noexcept;  // -1 far below the window, +1 far above, 0 not far
    void push(double slack_s) noexcept;
    void summarise_window() noexcept;  // median_s_ and deviation_s_ of the window, once per change

    double seed_s_ = 0;
    double last_s_ = 0;
    std::array<double, window> recent_{};  // a ring of the last `count_` slacks
    std::array<double, window> sorted_{};  // the same values in order
    double median_s_ = 0;                  // the window's median and median absolute deviation,
    double deviation_s_ = 0;               // kept so a prediction costs a load
    int count_ = 0;
    int next_ = 0;
    int far_in_a_row_ = 0;
    int far_side_ = 0;
    std::array<double, 2> pending_{};  // the far values of the run the detector is watching
    std::array<double, window> seen_{};  // a ring of the last slacks, unfiltered
    int seen_count_ = 0;
    int seen_next_ = 0;
    std::uint64_t changes_ = 0;
    std::uint64_t observed_ = 0;
    prediction_error last_error_;
    prediction_error median_error_;
};

}  // namespace aloe::mpi

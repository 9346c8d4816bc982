// The efficiency a client reports (thesis notes §2.6): what it measured since its last
// report, blended with its serial time and smoothed by SCAF's simulated RC low-pass filter.
//
// - blended_efficiency is SCAF's E_recent: the last parallel region's efficiency over its
//   wall time, and 1/N over the serial time since (serial code uses one of the N threads
//   it was given), weighted by time, so a program held back by Amdahl's law scores lower.
// - efficiency_filter: E ← α·E_recent + (1 − α)·E with α = Δt/(RC + Δt), Δt the time the
//   sample covers. One value of state; poor performance long ago fades. The constants are
//   SCAF's code's: RC = 4 s, initial value 0.5; reset() returns to 0.5 when a client joins,
//   which pulls every client's report, and so the allocation, towards equal shares for a
//   few RC before the new reports take over.
// Non-finite input is ignored, not folded in: one bad counter read must not poison the
// state for good. No clock inside: the caller passes the times, so tests are exact.
#pragma once

#include <algorithm>
#include <cmath>

namespace aloe::coord {

/// (E_par·T_par + T_ser/N) / (T_par + T_ser); E_par when both times are 0. Negative or
/// non-finite times count as 0; threads 0 is taken as 1.
inline double blended_efficiency(double parallel_efficiency, double parallel_seconds, double serial_seconds,
                                 unsigned threads) noexcept {
    const auto duration = [](double s) { return std::isfinite(s) && s > 0 ? s : 0.0; };
    parallel_seconds = duration(parallel_seconds);
    serial_seconds = duration(serial_seconds);
    const double total = parallel_seconds + serial_seconds;
    if (total == 0) return parallel_efficiency;
    const double serial_efficiency = 1.0 / std::max(threads, 1u);
    const double parallel_part = parallel_seconds > 0 ? parallel_efficiency * parallel_seconds : 0.0;
    return (parallel_part + serial_efficiency * serial_seconds) / total;
}

/// The simulated RC low-pass filter over a client's efficiency. Not thread-safe: one
/// owner (the client's reporting path).
class efficiency_filter {
public:
    /// SCAF's RC (it was once 40 s on the Xeon Phi).
    static constexpr double default_time_constant_seconds = 4.0;
    /// The value before any sample and after reset() (SCAF's).
    static constexpr double initial_efficiency = 0.5;

    /// A negative or non-finite time constant is taken as 0: no smoothing (α = 1).
    explicit efficiency_filter(double time_constant_seconds = default_time_constant_seconds) noexcept
        : time_constant_seconds_(std::isfinite(time_constant_seconds) && time_constant_seconds > 0
                                     ? time_constant_seconds
                                     : 0.0) {}

    /// Folds in `recent` measured over the last `elapsed_seconds` and returns the new value.
    /// A non-finite sample, or an elapsed time <= 0 or non-finite, leaves it unchanged.
    double update(double recent, double elapsed_seconds) noexcept {
        if (!std::isfinite(recent) || !std::isfinite(elapsed_seconds) || elapsed_seconds <= 0) return value_;
        const double alpha = elapsed_seconds / (time_constant_seconds_ + elapsed_seconds);
        value_ = alpha * recent + (1 - alpha) * value_;
        return value_;
    }

    double value() const noexcept { return value_; }
    double time_constant_seconds() const noexcept { return time_constant_seconds_; }
    /// Back to initial_efficiency (a client joined).
    void reset() noexcept { value_ = initial_efficiency; }
    /// Starts over from `value` instead of the prior (a client's first report, taken as it
    /// is); a non-finite value is ignored like a sample.
    void restart(double value) noexcept {
        if (std::isfinite(value)) value_ = value;
    }

private:
    double time_constant_seconds_;
    double value_ = initial_efficiency;
};

}  // namespace aloe::coord

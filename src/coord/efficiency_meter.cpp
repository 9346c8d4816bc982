#include "coord/efficiency_meter.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace aloe::coord {
namespace {

// Reports cover at least this long (below the client's 5 Hz limit, so a report taken is a
// report sent).
constexpr double least_report_interval = 0.25;
// Weight of a new value in the running means: samples are single runs, so noisy.
constexpr double ewma_weight = 0.5;

double ewma(double old, double fresh) { return old > 0 ? (1 - ewma_weight) * old + ewma_weight * fresh : fresh; }

}  // namespace

bool site_efficiency::wants_sample(double now) const noexcept {
    return parallel_threads_ > 1 && last_seconds_ > 0 && last_seconds_ <= most_sampled_seconds &&
           (serial_ <= 0 || now - sampled_at_ >= resample_seconds);
}

std::optional<double> site_efficiency::observe(unsigned threads, double units, double seconds, double now) noexcept {
    if (!(seconds > 0) || !std::isfinite(seconds) || !(units > 0) || !std::isfinite(units)) return std::nullopt;
    const double per_unit = seconds / units;
    if (!(per_unit > 0) || !std::isfinite(per_unit)) return std::nullopt;
    if (threads <= 1) {
        // Any run on one thread is a serial baseline, sampled or not (SCAF does the same).
        serial_ = ewma(serial_, per_unit);
        sampled_at_ = now;
        return std::nullopt;
    }
    parallel_threads_ = threads;
    last_seconds_ = seconds;
    if (serial_ <= 0) return std::nullopt;
    const double e = serial_ / (threads * per_unit);
    if (!std::isfinite(e)) return std::nullopt;
    return std::clamp(e, 0.0, 2.0);
}

std::optional<double> instruction_efficiency(double serial_rate, double parallel_rate, unsigned threads) noexcept {
    if (threads == 0 || !(serial_rate > 0) || !std::isfinite(serial_rate) || !(parallel_rate >= 0) ||
        !std::isfinite(parallel_rate))
        return std::nullopt;
    const double e = parallel_rate / (static_cast<double>(threads) * serial_rate);
    if (!std::isfinite(e)) return std::nullopt;
    return std::clamp(e, 0.0, 2.0);
}

std::optional<double> site_instruction_rates::observe(unsigned threads, std::optional<double> rate) noexcept {
    if (rate && (!(*rate >= 0) || !std::isfinite(*rate))) rate.reset();
    if (threads <= 1) {
        if (rate && *rate > 0) serial_ = ewma(serial_, *rate);
        return std::nullopt;
    }
    if (!rate) return last_threads_ == threads ? last_ : std::nullopt;
    const auto e = serial_ > 0 ? instruction_efficiency(serial_, *rate, threads) : std::nullopt;
    if (e) {
        last_ = e;
        last_threads_ = threads;
    }
    return e;
}

bool process_efficiency::may_sample(double now) noexcept {
    std::lock_guard lock(mutex_);
    if (now - last_sample_ < least_seconds_between_samples) return false;
    if (first_sample_ >= 0 && sampled_seconds_ > sample_budget * (now - first_sample_)) return false;
    if (first_sample_ < 0) first_sample_ = now;
    last_sample_ = now;
    return true;
}

void process_efficiency::sampled(double seconds) noexcept {
    if (!(seconds > 0) || !std::isfinite(seconds)) return;
    std::lock_guard lock(mutex_);
    sampled_seconds_ += seconds;
}

void process_efficiency::add(std::optional<double> efficiency, double seconds, unsigned threads, double now) noexcept {
    if (!(seconds > 0) || !std::isfinite(seconds)) return;
    const bool measured = efficiency.has_value() && std::isfinite(*efficiency);
    const double e = measured ? *efficiency : 0.0;
    std::lock_guard lock(mutex_);
    if (!since_) since_ = now - seconds;
    // A run that began before the interval (a take() in between) counts only its part in it.
    seconds = std::min(seconds, now - *since_);
    if (!(seconds > 0)) return;
    if (!measured) {
        unmeasured_ += seconds;
        return;
    }
    // One report speaks of one thread count: a change starts a new interval.
    if (threads != threads_ && seconds_ > 0) {
        weighted_ = seconds_ = unmeasured_ = 0;
        since_ = now - seconds;
    }
    threads_ = threads;
    weighted_ += e * seconds;
    seconds_ += seconds;
}

std::optional<report_message> process_efficiency::take(double now, efficiency_measure measure) noexcept {
    std::lock_guard lock(mutex_);
    if (seconds_ <= 0 || !since_ || now - *since_ < least_report_interval) return std::nullopt;
    report_message r;
    r.efficiency = std::clamp(weighted_ / seconds_, 0.0, 64.0);
    r.parallel_seconds = seconds_;
    r.serial_seconds = std::max(0.0, now - *since_ - seconds_ - unmeasured_);
    r.threads = std::max(threads_, 1u);
    r.measure = measure;
    weighted_ = seconds_ = unmeasured_ = 0;
    since_ = now;
    return r;
}

process_efficiency& process_meter() noexcept {
    static process_efficiency meter;
    return meter;
}

}  // namespace aloe::coord

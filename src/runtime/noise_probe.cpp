#include "runtime/noise_probe.hpp"

#include "runtime/clock.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace aloe::runtime {
namespace {

// One unit of work: a dependent multiply-add chain the compiler cannot fold or vectorise.
std::uint64_t work(std::uint64_t units, std::uint64_t x) noexcept {
    for (std::uint64_t i = 0; i < units; ++i) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        asm volatile("" : "+r"(x));
    }
    return x;
}

// Keeps the results alive; one per thread, since `aloe noise` measures every CPU at once.
thread_local volatile std::uint64_t sink;

// The q-quantile of an already sorted, non-empty sample, interpolated between neighbours.
double percentile(const std::vector<double>& sorted, double q) {
    const double pos = q * static_cast<double>(sorted.size() - 1);
    const auto lo = static_cast<std::size_t>(std::floor(pos));
    const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
    const double frac = pos - static_cast<double>(lo);
    return sorted[lo] * (1 - frac) + sorted[hi] * frac;
}

// One sorted copy serves every quantile (the trace can hold millions of samples).
std::vector<double> sorted_copy(const std::vector<double>& values) {
    std::vector<double> out = values;
    std::sort(out.begin(), out.end());
    return out;
}

// Shared by both methods: `delay_us[i]` is how late sample i was, `start_us(i)` when it began
// (called in order of i, once per sample); `measured_us` the total.
template <class StartOf>
void fill_events(noise_summary& s, const std::vector<double>& delay_us, StartOf&& start_us, double threshold_us,
                 double measured_us) {
    double lost = 0, sum = 0;
    for (std::size_t i = 0; i < delay_us.size(); ++i) {
        const double d = delay_us[i];
        const double start = start_us(i);
        lost += d;
        if (d > threshold_us) {
            ++s.events;
            sum += d;
            s.event_max_us = std::max(s.event_max_us, d);
            s.event_list.push_back({start, d});  // in order of i, so by start
        }
    }
    s.measured_s = measured_us * 1e-6;
    s.lost_fraction = measured_us > 0 ? lost / measured_us : 0;
    s.events_per_s = s.measured_s > 0 ? static_cast<double>(s.events) / s.measured_s : 0;
    s.event_mean_us = s.events > 0 ? sum / static_cast<double>(s.events) : 0;
}

}  // namespace

noise_summary summarize_fwq(const std::vector<double>& durations_ns, int cpu, double threshold_fraction) {
    if (durations_ns.empty()) throw std::invalid_argument("summarize_fwq: empty trace");
    noise_summary s;
    s.method = "fwq";
    s.cpu = cpu;
    s.samples = durations_ns.size();
    std::vector<double> us(durations_ns.size());
    std::transform(durations_ns.begin(), durations_ns.end(), us.begin(), [](double ns) { return ns * 1e-3; });
    {
        const std::vector<double> sorted = sorted_copy(us);
        // The 5th percentile, not the minimum: one lucky sample must not set the baseline.
        s.quantum_us = percentile(sorted, 0.05);
        s.p50_us = percentile(sorted, 0.5);
        s.p99_us = percentile(sorted, 0.99);
        s.max_us = sorted.back();
    }
    std::vector<double> delay(us.size());
    double measured = 0;
    for (std::size_t i = 0; i < us.size(); ++i) {
        delay[i] = std::max(0.0, us[i] - s.quantum_us);
        measured += us[i];
    }
    double elapsed = 0;  // the durations before sample i
    const auto start_of = [&](std::size_t i) {
        const double start = elapsed;
        elapsed += us[i];
        return start;
    };
    fill_events(s, delay, start_of, std::max(threshold_fraction * s.quantum_us, 1.0), measured);
    return s;
}

noise_summary summarize_ftq(const std::vector<std::uint64_t>& work_done, double slice_us, int cpu,
                            double threshold_fraction) {
    if (work_done.empty()) throw std::invalid_argument("summarize_ftq: empty trace");
    if (!(slice_us > 0)) throw std::invalid_argument("summarize_ftq: slice must be positive");
    noise_summary s;
    s.method = "ftq";
    s.cpu = cpu;
    s.samples = work_done.size();
    s.quantum_us = slice_us;
    const auto best = static_cast<double>(*std::max_element(work_done.begin(), work_done.end()));
    std::vector<double> delay(work_done.size());
    for (std::size_t i = 0; i < work_done.size(); ++i)
        delay[i] = best > 0 ? (best - static_cast<double>(work_done[i])) / best * slice_us : 0;
    {
        const std::vector<double> sorted = sorted_copy(delay);
        s.p50_us = percentile(sorted, 0.5);
        s.p99_us = percentile(sorted, 0.99);
        s.max_us = sorted.back();
    }
    const auto start_of = [&](std::size_t i) { return static_cast<double>(i) * slice_us; };
    fill_events(s, delay, start_of, threshold_fraction * slice_us, slice_us * static_cast<double>(work_done.size()));
    return s;
}

std::size_t samples_in(double seconds, double quantum_us) noexcept {
    if (!(seconds > 0) || !(quantum_us > 0) || !std::isfinite(seconds) || !std::isfinite(quantum_us)) return 0;
    // A part in 10^9 more: decimal inputs are inexact in binary, and 0.003 s of 1000 µs slices
    // must give the 3 the user meant even where the quotient comes out as 2.9999….
    const double n = std::floor(seconds * 1e6 / quantum_us * (1 + 1e-9));
    // Compared as doubles: SIZE_MAX converts up to 2^64 exactly, and any n at or past it saturates.
    if (!(n < static_cast<double>(std::numeric_limits<std::size_t>::max()))) return std::numeric_limits<std::size_t>::max();
    return static_cast<std::size_t>(n);
}

std::uint64_t calibrate_work_units(double quantum_us) {
    if (!(quantum_us > 0)) throw std::invalid_argument("calibrate_work_units: quantum must be positive");
    std::uint64_t units = 1000;
    // Grow until one run takes at least 2 ms, then scale; the best of 5 runs sets the rate.
    for (;;) {
        const ticks t0 = now_ticks();
        sink = work(units, sink);
        if (ticks_to_seconds(now_ticks() - t0) >= 2e-3) break;
        units *= 2;
    }
    double best = 1e30;
    for (int r = 0; r < 5; ++r) {
        const ticks t0 = now_ticks();
        sink = work(units, sink);
        best = std::min(best, ticks_to_seconds(now_ticks() - t0));
    }
    const double per_us = static_cast<double>(units) / (best * 1e6);
    return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(per_us * quantum_us));
}

std::vector<double> run_fwq(std::uint64_t units, std::size_t samples) {
    std::vector<double> out(samples);
    std::uint64_t x = sink;
    for (std::size_t i = 0; i < samples; ++i) {
        const ticks t0 = now_ticks();
        x = work(units, x);
        out[i] = static_cast<double>(ticks_to_ns(now_ticks() - t0));
    }
    sink = x;
    return out;
}

std::vector<std::uint64_t> run_ftq(double slice_us, std::size_t slices) {
    std::vector<std::uint64_t> out(slices, 0);
    const auto slice = static_cast<ticks>(slice_us * 1e-6 * ticks_per_second());
    std::uint64_t x = sink;
    const ticks start = now_ticks();
    for (std::size_t i = 0; i < slices; ++i) {
        const ticks end = start + slice * (i + 1);
        std::uint64_t n = 0;
        // Small steps of work between clock reads, so a slice's count is exact to a step.
        while (now_ticks() < end) {
            x = work(64, x);
            ++n;
        }
        out[i] = n;
    }
    sink = x;
    return out;
}

}  // namespace aloe::runtime

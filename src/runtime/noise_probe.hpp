// Measuring a machine's own noise the way FWQ and FTQ do (the fixed-work and fixed-time
// quantum benchmarks of the OS-noise literature): repeat a quantum of work pinned to one CPU
// and see how much longer some repetitions take (FWQ), or how much less work fits in some
// time slices (FTQ). The measuring loops and the arithmetic are separate, so the summaries are
// tested on recorded traces and `aloe noise` and the adaptive probes share one definition.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace aloe::runtime {

/// One event of a trace: a sample delayed by more than the detection threshold.
struct noise_event {
    double start_us = 0;   ///< when the sample began, since the CPU's measurement began
                           ///< (FWQ: the durations before it, summed; FTQ: slice index × slice)
    double length_us = 0;  ///< its delay beyond the quiet quantum (what `events` counts)
};

/// What a trace says about one CPU. Times in microseconds.
struct noise_summary {
    std::string method;        ///< "fwq" or "ftq"
    int cpu = -1;
    std::size_t samples = 0;
    double quantum_us = 0;     ///< the quiet quantum (FWQ: 5th-percentile duration; FTQ: the slice)
    double p50_us = 0, p99_us = 0, max_us = 0;  ///< FWQ: sample durations; FTQ: time lost per slice
    double lost_fraction = 0;  ///< time taken from the work / time measured
    std::size_t events = 0;    ///< samples delayed by more than the detection threshold
    double events_per_s = 0;
    double event_mean_us = 0;  ///< mean delay of those samples: the δ a schedule must absorb
    double event_max_us = 0;
    double measured_s = 0;
    std::vector<noise_event> event_list;  ///< the `events` themselves, by start
};

/// FWQ: `durations_ns[i]` = time of the i-th repetition of the same work. A repetition is an
/// event when it exceeds the quiet quantum by more than max(threshold_fraction × quantum,
/// 1 µs). Throws std::invalid_argument on an empty trace. An event starts at the sum of the
/// durations before it and lasts its delay (duration − quantum).
noise_summary summarize_fwq(const std::vector<double>& durations_ns, int cpu, double threshold_fraction = 0.5);

/// FTQ: `work_done[i]` = units finished in the i-th slice of `slice_us`. The quiet rate is the
/// largest count; a slice's delay is (max − count) / max × slice, and a slice that lost more
/// than threshold_fraction of its time is an event; it starts at index × slice and lasts its
/// delay.
noise_summary summarize_ftq(const std::vector<std::uint64_t>& work_done, double slice_us, int cpu,
                            double threshold_fraction = 0.05);

/// Whole quanta of `quantum_us` in `seconds`: floor(seconds · 10^6 / quantum_us), 0 when not
/// even one fits or an argument is not a positive finite number, saturated at SIZE_MAX. The
/// caller checks it is at least 1 before measuring (the summaries refuse an empty trace).
std::size_t samples_in(double seconds, double quantum_us) noexcept;

/// Most samples one CPU takes per method in `aloe noise`: a trace costs 8 bytes per sample
/// and its summary about 3 times that again, so 2^22 samples is ~130 MB per CPU at the peak;
/// that is 42 s of the default 10 µs quanta, past which a longer quantum says as much. A
/// guess at what a node's memory per core bears, not a measurement.
inline constexpr std::size_t max_samples_per_cpu = std::size_t{1} << 22;

/// Work units that take about `quantum_us` on this CPU (calibrated on the caller's thread).
std::uint64_t calibrate_work_units(double quantum_us);

/// Runs `samples` repetitions of `units` work units on the calling thread; durations in ns.
std::vector<double> run_fwq(std::uint64_t units, std::size_t samples);

/// Counts work units finished in each of `slices` consecutive slices of `slice_us`.
std::vector<std::uint64_t> run_ftq(double slice_us, std::size_t slices);

}  // namespace aloe::runtime

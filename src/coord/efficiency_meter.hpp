// The efficiency a client reports to aloed, measured without hardware counters, or with
// instruction counts where the machine has them (the last part of this comment).
//
// SCAF divides a region's per-thread IPC by the IPC of a serial copy run in a forked,
// ptrace-sandboxed child (thesis notes §2.5). aloe needs neither counters nor a sandbox: it
// runs the work itself on one thread, now and then, and compares times.
// - Serial sample: once in a while one run of a site (an OpenMP region under `aloe run`, or
//   a loop aloe runs) goes on a single thread; its time per unit of work (per iteration
//   for loops, per run for regions) is the site's serial baseline T1.
// - Every other run at p threads taking T per unit has efficiency E = T1 / (p · T), the
//   speedup over p. A site with no baseline yet contributes nothing.
// - The process's report blends the sites' E weighted by their time, with the time outside
//   them counted at 1/N (SCAF's E_recent: serial code uses one of the N threads it holds).
//
// What a sample costs, and its bounds: a sampled run takes about E·p times its parallel
// time, on one thread, while the program's other threads wait. Sites are sampled only
// while another program shares the node (SCAF's lazy experiments: alone, efficiency
// decides nothing), only if their runs take at most `most_sampled_seconds` in parallel,
// at most once per `resample_seconds` per site, at most one run per
// `least_seconds_between_samples` in the whole process, and only while the samples so far
// took at most `sample_budget` of the time since the first (2%: a program's many sites get
// their baselines within a second or two, and sampling never costs it more than that).
//
// Limits, said where they bite: a site whose runs do different work each time (a loop
// whose iteration cost drifts) is compared at the work of its last sample; a region that
// only runs once is never measured (SCAF's experiment would measure it). Both only make
// the estimate noisier, never unbounded: E is clamped to [0, 2] (SCAF's cap).
//
// Instruction counts (measure `instructions`, preferred where perf_event_open counts them:
// instruction_counter.hpp). The same serial samples, counted on the thread that runs them,
// give a site's serial rate R1 in instructions per second; a parallel run's rate R, summed
// over the process's threads, gives E = R / (p · R1). The rates need no unit of work, so a
// site whose runs differ is measured too. Counting a run costs reads that interrupt the
// CPUs of its threads: only samples are always counted, other runs within a 1% budget, and
// a run not counted reuses its site's last counted E. Limits: instructions spent spinning
// at barriers count as work (SCAF's caveat), and a run counts what all of the process's
// threads execute meanwhile (another thread's work too).
#pragma once

#include "runtime/clock.hpp"

#include "coord/message.hpp"

#include <array>
#include <mutex>
#include <optional>

namespace aloe::coord {

inline constexpr double most_sampled_seconds = 0.02;
inline constexpr double resample_seconds = 20.0;
inline constexpr double least_seconds_between_samples = 0.01;
inline constexpr double sample_budget = 0.02;

/// One site's serial baseline and recent parallel times. Not thread-safe: one owner (the
/// site's policy link, under its site's lock).
class site_efficiency {
public:
    /// Whether the run starting now should be a serial sample (the process-wide limits are
    /// the caller's: process_efficiency::may_sample).
    bool wants_sample(double now) const noexcept;
    /// A run of `units` of work on `threads` threads took `seconds`. Returns its efficiency
    /// when the site has a serial baseline (and the run was not the sample itself).
    std::optional<double> observe(unsigned threads, double units, double seconds, double now) noexcept;
    /// The serial time per unit, 0 while unknown.
    double serial_per_unit() const noexcept { return serial_; }

private:
    double serial_ = 0;           // EWMA of serial seconds per unit
    double sampled_at_ = -1e300;
    unsigned parallel_threads_ = 0;
    double last_seconds_ = 0;       // the last parallel run's wall time
};

/// The `instructions` measure's efficiency (instruction_counter.hpp counts): a parallel run
/// that executed `parallel_rate` instructions per second on `threads` threads, against a
/// serial sample's `serial_rate` on one, has E = parallel_rate / (threads · serial_rate)
/// (SCAF's per-thread IPC over serial IPC), clamped to [0, 2] like the time measures.
/// nullopt when the serial rate is not a positive finite number, the parallel rate is
/// negative or not finite, or threads is 0.
std::optional<double> instruction_efficiency(double serial_rate, double parallel_rate, unsigned threads) noexcept;

/// One site's instruction rates: the serial baseline and the efficiency of its last counted
/// parallel run. Rates, not times per unit, so runs of different work compare (a region
/// site that runs different grids). Not thread-safe: one owner, as site_efficiency.
class site_instruction_rates {
public:
    /// A run on `threads` threads: `rate` instructions per second when it was counted (one
    /// thread: the serial baseline). Returns its efficiency; a parallel run that was not
    /// counted gets the last counted run's at the same thread count (SCAF reuses a region's
    /// last IPC when it skips the instrumentation), else nothing.
    std::optional<double> observe(unsigned threads, std::optional<double> rate) noexcept;
    /// Serial instructions per second, 0 while unknown.
    double serial_rate() const noexcept { return serial_; }

private:
    double serial_ = 0;          // EWMA of the serial samples' rates
    std::optional<double> last_; // the last counted parallel run's efficiency
    unsigned last_threads_ = 0;  // and its thread count
};

/// The process's measurements between two reports. Thread-safe.
class process_efficiency {
public:
    /// Whether a serial sample may start now (the process-wide rate and budget); takes the slot.
    bool may_sample(double now) noexcept;
    /// A sample that was granted took `seconds` (charged to the budget).
    void sampled(double seconds) noexcept;
    /// A run that ended at `now`: its efficiency if measured (else its time is left out of
    /// the report: neither parallel nor serial), wall time and thread count.
    void add(std::optional<double> efficiency, double seconds, unsigned threads, double now) noexcept;
    // (A run that began before the open interval counts only its part inside it.)
    /// The report covering everything since the last one taken (nothing when no run was
    /// measured). `now` closes the interval: the time not covered by runs is serial time.
    std::optional<report_message> take(double now, efficiency_measure measure) noexcept;

private:
    std::mutex mutex_;
    double last_sample_ = -1e300;
    double first_sample_ = -1;  // when the budget started (-1: no sample yet)
    double sampled_seconds_ = 0;
    std::optional<double> since_;  // start of the open interval
    double weighted_ = 0;      // Σ E·t
    double seconds_ = 0;       // Σ t of measured runs
    double unmeasured_ = 0;    // Σ t of runs at sites without a baseline
    unsigned threads_ = 1;     // the last run's
};

/// The process's meter (one per process, shared by every site).
process_efficiency& process_meter() noexcept;

/// Seconds on a monotonic clock (runtime/clock.hpp).
using runtime::monotonic_seconds;

}  // namespace aloe::coord

/// @file schedule.hpp
/// A schedule is a value naming how a loop's iterations are spread over a team.
///
/// One string syntax, `kind[,key=value…]`, is used alike in the API, in ALOE_SCHEDULE and
/// on the command line:
///
/// | string                               | meaning |
/// |--------------------------------------|---------|
/// | `static`                             | one contiguous block per thread |
/// | `static,chunk=c`                     | chunks of c dealt round-robin |
/// | `dynamic[,chunk=c]`                  | chunks of c from one shared counter |
/// | `guided[,chunk=c][,divisor=k]`       | shrinking chunks (remaining/(k·threads)), at least c |
/// | `hybrid,fs=f[,chunk=c]`              | static share of the fraction f, then dynamic chunks |
/// | `staggered,fs=f[,chunk=c][,queue=atomic\|mutex]` | own queue after own static block, neighbour stealing |
/// | `weighted[,fs=f][,chunk=c]`          | static shares proportional to measured thread speed |
/// | `tasklets,n=k[,fs=f][,skew=r][,locality=0\|1]` | dynamic part cut into k tasklets, largest first when r>1 |
/// | `adaptive[,search=race\|local\|nlopt\|sweep][,chunk=c\|auto][,delay=optimistic\|pessimistic]` | tunes itself per loop site (below) |
/// | `tasks[,grain=g\|auto]`              | the range split recursively into tasks of at most g iterations on the task scheduler (include/aloe/task.hpp); auto: tuned per loop site from the task counters |
///
/// Defaults: chunk=1, fs=1 for weighted, fs=0 for tasklets, skew=1 (uniform), locality=1,
/// queue=atomic; for adaptive search=race, chunk=auto, delay=optimistic; for tasks grain=auto.
///
/// `slack=on|off` (hybrid, staggered, weighted, tasklets, adaptive): spend the MPI slack
/// libaloe-mpi predicts for the call that follows the loop by lowering the dynamic fraction
/// (Kale's thesis, Eq. 4.11; docs/mpi.md). Unset, it is on for `adaptive` when libaloe-mpi is
/// loaded and off for the fixed schedules; it is printed only when given.
///
/// `adaptive` measures each loop site (one static and one dynamic invocation, the team's
/// dequeue cost, the machine's noise), sizes the dynamic fraction with Kale's model, then
/// refines it online: `race` (the default) races a few candidates (static, the model's
/// fs, dynamic, guided, coarse chunks, weighted blocks replayed from measured speed) by
/// confidence intervals within 20 invocations and keeps re-checking the runners-up, `local`
/// walks fs in ±0.05 steps, `nlopt` searches fs and the chunk
/// together with a derivative-free optimiser, `sweep` tries every fs in 0.05 steps once
/// (the thesis's "besf"). It runs `staggered` with the tuned fraction, with block sizes
/// weighted by thread speed when a core is persistently slow, and plain `static` when the
/// loop is balanced and quiet. After converging it watches for drift. What it chose and
/// why is in the site's statistics (site_stats::tuning).
///
/// Parsing is strict: an unknown kind or key, a repeated key, an empty value, or a value out
/// of range throws aloe::error naming the bad part (control bytes and invalid UTF-8 in it
/// escaped as `\xNN`). chunk and n are decimal integers (an optional sign; not `4.0`, `1e3`
/// or `0x10`). fs and skew are decimals rounded to the nearest double: `1e-400` is 0, `-0` is
/// 0 (and prints as `0`), `1e400` and `inf` are outside every range, `nan` is not a number.
#pragma once

#include <aloe/export.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace aloe {

/// The largest chunk a schedule accepts (2^40): far beyond any loop, small enough that
/// chunk × threads never overflows the claim arithmetic.
inline constexpr std::int64_t max_schedule_chunk = std::int64_t{1} << 40;

enum class schedule_kind : std::uint8_t {
    static_block,  ///< `static` (with chunk: cyclic)
    dynamic,
    guided,
    hybrid,
    staggered,
    weighted,
    tasklets,
    adaptive,
    tasks,  ///< `tasks`: work-stealing tasks of `grain` iterations (chunk(); 0: auto)
};

namespace loop {
/// Internal: each kind's string syntax, defaults and builder, beside the kind's
/// implementation (src/loop/schedules/spec_text.hpp); it sets the fields of a schedule.
template <schedule_kind K>
struct kind_text;
}  // namespace loop

/// How `adaptive` searches (see the table above).
enum class adaptive_search : std::uint8_t { local, nlopt, sweep, race };

/// How `adaptive`'s model combines noise and the application's own imbalance into one delay:
/// the larger of the two (optimistic) or their sum (pessimistic: noise hits the most loaded
/// thread). Kale's thesis, ch. 6 (modelSched).
enum class delay_model : std::uint8_t { optimistic, pessimistic };

/// How a staggered queue is claimed: one atomic fetch-add (default), or a mutex per queue
/// as in the Kale thesis (kept to measure the difference).
enum class queue_claim : std::uint8_t { atomic, mutex };

/// Whether a loop spends MPI slack (`slack=`): unset (`automatic`: on for adaptive when
/// libaloe-mpi is loaded, off for the fixed schedules), on, or off.
enum class slack_mode : std::uint8_t { automatic, on, off };

class ALOE_API schedule {
public:
    /// `static`.
    schedule() = default;

    /// Parses `spec`; throws aloe::error naming the bad part.
    /// Implicit so that `parallel_for(0, n, "dynamic,chunk=4", body)` reads naturally.
    schedule(std::string_view spec);            // NOLINT(google-explicit-constructor)
    schedule(const char* spec) : schedule(std::string_view(spec)) {}  // NOLINT
    schedule(const std::string& spec) : schedule(std::string_view(spec)) {}  // NOLINT

    /// Parses without throwing; on failure returns false and sets `error_message`.
    static bool try_parse(std::string_view spec, schedule& out, std::string& error_message);

    /// The canonical string; `schedule(s.to_string()) == s` always holds.
    std::string to_string() const;

    schedule_kind kind() const noexcept { return kind_; }
    std::int64_t chunk() const noexcept { return chunk_; }       ///< 0 for `static` blocks and adaptive's auto
    double static_fraction() const noexcept { return fs_; }      ///< fs in [0, 1]
    std::int64_t tasklet_count() const noexcept { return tasklets_; }
    std::int64_t divisor() const noexcept { return divisor_; }   ///< guided: remaining/(divisor·threads)
    double skew() const noexcept { return skew_; }               ///< largest/smallest tasklet
    bool locality() const noexcept { return locality_; }
    queue_claim claim() const noexcept { return claim_; }
    adaptive_search search() const noexcept { return search_; }  ///< adaptive only
    delay_model delay() const noexcept { return delay_; }        ///< adaptive only
    slack_mode slack() const noexcept { return slack_; }         ///< as given (`automatic`: unset)
    /// Whether the kind takes `slack=` (a static fraction to lower: hybrid, staggered,
    /// weighted, tasklets, adaptive).
    bool takes_slack() const noexcept;
    /// This schedule with `slack=` set; throws aloe::error for a kind that takes no slack.
    schedule with_slack(slack_mode mode) const;

    /// Builders for code that prefers values to strings. Each validates like the parser (the
    /// same ranges, and on a bad value the same aloe::error as parsing the string it stands
    /// for, e.g. dynamic(0): "schedule 'dynamic,chunk=0': chunk=0 is outside [1, …]"), and
    /// gives a value equal to that parse. Cost: a few nanoseconds; no string is made.
    static schedule static_blocks();
    static schedule static_cyclic(std::int64_t chunk);
    static schedule dynamic(std::int64_t chunk = 1);
    static schedule guided(std::int64_t chunk = 1, std::int64_t divisor = 1);
    static schedule hybrid(double fs, std::int64_t chunk = 1);
    static schedule staggered(double fs, std::int64_t chunk = 1, queue_claim claim = queue_claim::atomic);
    static schedule weighted(double fs = 1.0, std::int64_t chunk = 1);
    static schedule tasklets(std::int64_t count, double fs = 0.0, double skew = 1.0, bool locality = true);
    /// chunk 0: chosen by the tuner.
    static schedule adaptive(adaptive_search search = adaptive_search::race, std::int64_t chunk = 0,
                             delay_model delay = delay_model::optimistic);
    /// grain 0: auto (tuned per loop site).
    static schedule tasks(std::int64_t grain = 0);

    friend bool operator==(const schedule&, const schedule&) = default;

private:
    template <schedule_kind K>
    friend struct loop::kind_text;

    schedule_kind kind_ = schedule_kind::static_block;
    std::int64_t chunk_ = 0;
    double fs_ = 1.0;
    std::int64_t tasklets_ = 0;
    std::int64_t divisor_ = 1;
    double skew_ = 1.0;
    bool locality_ = true;
    queue_claim claim_ = queue_claim::atomic;
    adaptive_search search_ = adaptive_search::race;
    delay_model delay_ = delay_model::optimistic;
    slack_mode slack_ = slack_mode::automatic;
};

/// The schedule named by ALOE_SCHEDULE, or `static` when it is unset. A malformed value is
/// reported once (naming the variable and the value) and `static` is used.
ALOE_API schedule schedule_from_environment();

}  // namespace aloe

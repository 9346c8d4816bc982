// Cheap measurements the dynamic-fraction model needs (Kale's thesis §4.5.2, done with
// aloe's own machinery): q, the cost of one dynamically scheduled iteration, timed on the
// team; δ, the length of this machine's noise events, from fixed-work quanta
// (runtime/noise_probe); t1, one iteration's time, from a loop site's statistics.
#pragma once

#include <aloe/stats.hpp>
#include <aloe/team.hpp>

#include <cstdint>
#include <optional>

namespace aloe::adapt {

/// q in seconds: `repetitions` interleaved pairs of empty loops of `iterations` on team `t`,
/// `static` against `dynamic,chunk=1`; q = (median dynamic − median static) · p / N, at least
/// 0. The loops run at the internal sites "aloe.probe.static" and "aloe.probe.dynamic" (pinned,
/// left out of all_site_stats() and the JSON; stats_of() finds them). Costs about
/// 2 · repetitions loops of a few hundred microseconds; call once (at start-up) and refine
/// from live loops. Throws std::invalid_argument for repetitions or iterations < 1.
double measure_dequeue_cost(team& t, int repetitions = 7, std::int64_t iterations = 1 << 14);

/// δ in seconds: the mean length of the noise events a fixed-work quantum of `quantum_us`
/// met on the calling thread during `seconds` (FWQ; 0 when none). The thesis takes max − min
/// of the quanta, which one outlier sets; the mean of the detected events is what a schedule
/// meets on average.
double measure_noise_length(double quantum_us = 10, double seconds = 0.05);

/// t1 in seconds from a site's last run: the least busy time per iteration over its threads
/// (the least disturbed thread, as the thesis's minimum static-section time); empty when the
/// site has no parallel run or no thread ran an iteration.
std::optional<double> iteration_time(const site_stats& s);

}  // namespace aloe::adapt

// SCAF's speedup model (thesis notes §2.3): each client's speedup is modelled as
// S(p) = 1 + C·ln p, the one-parameter curve through (1, 1) and the client's last report
// (p threads, efficiency E, so speedup E·p), refitted on every report:
//     C = (E·p − 1) / ln p.
// Maximising Σ S_i(p_i) with Σ p_i = N gives p_i = N·C_i/ΣC (Eq. 4.9); integer_partition.hpp
// turns those shares into whole chunks. greedy_optimum() is the thesis's Algorithm 1, the
// exact optimum for concave speedups, which the tests hold the proportional split against:
// in whole chunks it reaches 0.999 of the optimum's modelled sum of speedups when every
// share is at least a chunk, 0.95 in the worst case seen, where tiny shares are raised to a
// chunk taken from donors and the rest is not re-shared in proportion.
//
// The thesis leaves the fit's edge cases open (notes §8 item 2); settled here:
// - p <= 1: ln 1 = 0, so a report from one thread says nothing about scaling. The client
//   keeps its previous slope if it has one (> 0), else the prior `unknown_slope`. SCAF's
//   code always used 1.0 there, so a client squeezed to one thread bounced back to an
//   average share whatever its history; keeping the last fitted slope keeps what was
//   learnt, and a client that scaled well before it was squeezed gets its share back.
// - E·p − 1 below `least_gain` (a slowdown, E = 0, negative or non-finite E): SCAF's code
//   clamps the numerator at 1.0, which credits a program that slows down with a modelled
//   speedup of 2 at p, as much as one that truly doubles. A small floor keeps such a client
//   at a small share (the partition still gives it one chunk) and keeps every slope > 0,
//   so shares stay defined when every client slows down (equal floors: equal shares).
// - E above `efficiency_cap` is capped (SCAF's client cap: a glitch in the counters must not
//   take the whole machine); NaN and ±inf count as 0.
#pragma once

#include <functional>
#include <span>
#include <vector>

namespace aloe::coord {

/// The slope assumed for a client with no usable report: SCAF's SERIAL_LOG_FACTOR. S(p) =
/// 1 + ln p is a middling scaler (efficiency 0.85 on 2 threads, 0.24 on 16), and clients
/// that are all unknown get equal shares.
inline constexpr double unknown_slope = 1.0;
/// The least modelled gain E·p − 1 a report is credited with (a guess: a 5% speedup, small
/// next to any program worth running in parallel, large enough to stay clear of 0).
inline constexpr double least_gain = 0.05;
/// Reported efficiencies above this are capped (SCAF's client cap, notes §2.3).
inline constexpr double efficiency_cap = 2.0;

/// The slope C of S(p) = 1 + C·ln p fitted to `efficiency` measured on `threads` threads;
/// `previous_slope` is the client's last slope (<= 0 when it has none), used when
/// threads <= 1. Always finite and > 0.
double log_speedup_slope(double efficiency, unsigned threads, double previous_slope);

/// C_i / ΣC (Eq. 4.9): each client's share of the cores. Empty in, empty out; negative and
/// non-finite slopes count as 0; all 0: equal shares.
std::vector<double> proportional_shares(std::span<const double> slopes);

/// 1 + slope·ln threads; 0 for threads <= 0 (a program given nothing makes no progress).
double modelled_speedup(double slope, double threads);

/// Algorithm 1: every client starts at one chunk, then the remaining whole chunks of
/// `cores` go one at a time to the client whose speedup gains most, S(p + chunk) − S(p)
/// (ties to the lower index; a NaN gain counts as the least). Optimal for concave speedups.
/// chunk 0 is taken as 1. More clients than chunks: every client gets 1 thread, as in
/// partition_by_shares. Cost: O(chunks · clients) comparisons, 2·chunks calls.
std::vector<unsigned> greedy_optimum(unsigned cores, unsigned chunk,
                                     std::span<const std::function<double(unsigned)>> speedup);

}  // namespace aloe::coord

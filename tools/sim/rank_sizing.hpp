// Phase-start sizing (issue 19's predictive policy): how many of a node's cores each rank
// runs a phase with, so that the ranks, whose work for the phase is predicted, finish
// together. A rank predicted to wait runs with fewer cores instead of lending them only
// after it blocks; the cores it gives serve the critical rank for the whole phase.
//
// Cores are whole (a thread per core), so the ranks finish together only when the work
// divides; otherwise the best split is the one whose slowest rank is fastest: start every
// rank at one core, then give each next core to the rank whose work per core is largest
// (ties to the lower rank). Giving a core to any other rank leaves that largest quotient
// where it was, so each step keeps the maximum as small as any split can make it.
#pragma once

#include <span>

namespace aloe::sim {

/// Cores per rank (`out`, one per rank) for ranks of predicted `work` (core-seconds, any
/// unit; ≥ 0) sharing `cores` (≥ the number of ranks): every rank gets at least one, and
/// max(work[r] / out[r]) is the smallest whole numbers allow.
void size_ranks(std::span<const double> work, int cores, std::span<int> out) noexcept;

/// The phase's time under that split, in the work's unit per core: max(work[r] / cores[r]).
double sized_phase(std::span<const double> work, std::span<const int> cores) noexcept;

}  // namespace aloe::sim

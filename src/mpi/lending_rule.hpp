// When a rank lends its cores and when it asks for more (issue 19): the decisions of the
// reactive and predictive rules, as functions of what the rank knows, so the tests work
// them out by hand. polite_wait.hpp carries them out inside a blocking call.
//
// reactive (DLB LeWI's rule, with one fix): a rank lends its whole share once its blocking
// call has waited `grace` (LeWI lends at the call's entry; most calls of a balanced job end
// within microseconds, and a lend and its take-back are two messages and two rebalances of
// the daemon: the grace keeps a balanced job from paying them); every rank asks for cores
// while it computes (whoever computes while others wait is behind).
//
// predictive (aloe's): the path's predicted slack (mpi/slack_prediction.hpp) decides at the
// call's entry: a rank predicted to wait at least `least_slack` lends at once, without
// spinning first; a rank predicted not to wait does not lend and is the one that asks for
// cores after the call (it is critical). The guard: a prediction that missed (no slack
// predicted, yet the call has waited `least_slack` already) lends as the reactive rule
// would, and a path with no prediction yet (its first calls) follows the reactive rule.
//
// predictive also sizes each compute phase (the time between two blocking calls): at the
// return of a call, with the compute time the next phase took last time (t, on its `own`
// cores) and the slack its closing call is predicted to have (s), the rank lends for the
// whole phase the cores that let it and the rank it waits for finish together. That rank's
// work is taken as (t + s)·own (it computes while this one waits): finish_together() splits
// the pair's 2·own cores by work, and what this rank gives up is lent now instead of after
// it blocks. Integer cores: a rank of one core lends nothing here, only at its wait's entry
// (time-sharing the core, the same core-seconds). The guard: a phase after which the rank
// waited less than `least_slack` (it lent too much, or the prediction missed) stops phase
// lending on that path for `guard_phases` phases.
//
// Cores lent for less than the time a borrower needs to notice them (its poll every 0.5 ms
// from a loop, then a chunk) help nobody, hence `least_slack` (1 ms by default). Nor do
// cores lent for less than the lender loses getting them back (`lend_cost`, measured as
// the run goes, lend_cost.hpp): predictive lends at a wait only for a predicted (or, when
// the prediction missed, an already waited) slack of least_slack + lend_cost.
#pragma once

#include "runtime/config.hpp"

#include <optional>
#include <span>
#include <vector>

namespace aloe::mpi {

struct lending_settings {
    runtime::lend_mode mode = runtime::lend_mode::off;  ///< reactive or predictive act; others do nothing
    double grace_s = 50e-6;                              ///< reactive: waited this long, it lends
    double least_slack_s = 1e-3;                         ///< predictive: worth lending for
    unsigned guard_phases = 8;                           ///< predictive: phases without phase lending after a miss
    double lend_cost_s = 0;  ///< predictive: what a lend costs the lender's next phase, measured (lend_cost.hpp)
};

/// At a blocking call's entry, with its path's predicted slack (nullopt: none yet): lend now?
bool lend_at_entry(const lending_settings& s, std::optional<double> predicted_s) noexcept;

/// After the call has waited `waited_s` without lending: lend now?
bool lend_while_waiting(const lending_settings& s, std::optional<double> predicted_s, double waited_s) noexcept;

/// After the call, with the path's predicted next slack: ask for cores while computing?
bool ask_after(const lending_settings& s, std::optional<double> predicted_next_s) noexcept;

/// Splits `cores` between ranks of known `work` (core-seconds) so that the last to finish
/// finishes first: every rank at least one core, then each further core to the rank whose
/// time (work / cores) is the longest (the first of equals). Greedy is exact for this
/// min-max split. Empty when there are fewer cores than ranks.
std::vector<unsigned> finish_together(std::span<const double> work, unsigned cores);

/// Predictive, at a compute phase's start: the cores to lend until the phase's closing call
/// (0: none), for `own` cores, the phase's compute time last time and its closing call's
/// predicted slack (nullopt: unknown).
unsigned cores_for_phase(const lending_settings& s, unsigned own, std::optional<double> compute_s,
                         std::optional<double> predicted_s);

}  // namespace aloe::mpi

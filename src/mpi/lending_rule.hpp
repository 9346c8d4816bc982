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
// predictive (aloe's): the path's recent slacks (its last few waits, mpi/slack_prediction.hpp)
// decide how long a wait lasts before it lends, worked out at the call's entry. A lend after
// waiting w pays, for a wait of slack x > w, what is left of it beyond `least_slack` and the
// lend's cost: x - w - least_slack - lend_cost (negative: a wasted lend, its messages and a
// take-back); a wait that ends before w lends nothing. The rule takes the w, 0 or just past
// one of the recent waits (+ grace), that pays most over the recent waits, when it pays at
// all. Slacks that are all long: at the entry. All short: not on their account. Two kinds, as
// under OS noise or a load that comes and goes (most waits short, some long): just past the
// short ones, so a short wait does not lend and a long one lends at once. Where nothing pays
// (the path is not predicted to wait), the guard: a wait that has lasted least_slack + cost
// lends as the reactive rule would. A path with no waits yet follows the reactive rule. (This
// replaces a point prediction, the window's median, which under noise half the time swung to
// the long waits and lent at the entry of the short ones; see docs/mpi.md.) Every rank asks
// for cores while it computes, as under the reactive rule: under noise any rank may be the
// late one, and a rank that did not ask is given nothing (aloe sim: asking only where the
// next wait does not lend at the entry left the rank noise delayed without cores, 0.91-0.98
// of no lending under the VM's noise at 1,000 x 16 against 0.74-0.82; docs/sim.md).
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

struct lending_wait {
    double after_s = 0;  ///< how long the call waits before it lends: 0 at its entry, infinity never
    bool paid = false;   ///< predictive: a lend after after_s pays on the recent slacks (false: the
                         ///< guard's wait, the reactive rule's grace, or never)
};

/// How long a blocking call waits before it lends its cores. `recent_s`: the slacks of the
/// path's recent calls, in any order (empty: none known yet).
lending_wait wait_before_lending(const lending_settings& s, std::span<const double> recent_s) noexcept;

/// After the call: ask for cores while computing? Reactive and predictive: yes.
bool ask_after(const lending_settings& s) noexcept;

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

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
// Cores lent for less than the time a borrower needs to notice them (its poll every 0.5 ms
// from a loop, then a chunk) help nobody, hence `least_slack` (1 ms by default).
#pragma once

#include "runtime/config.hpp"

#include <optional>

namespace aloe::mpi {

struct lending_settings {
    runtime::lend_mode mode = runtime::lend_mode::off;  ///< reactive or predictive act; others do nothing
    double grace_s = 50e-6;                              ///< reactive: waited this long, it lends
    double least_slack_s = 1e-3;                         ///< predictive: worth lending for
};

/// At a blocking call's entry, with its path's predicted slack (nullopt: none yet): lend now?
bool lend_at_entry(const lending_settings& s, std::optional<double> predicted_s) noexcept;

/// After the call has waited `waited_s` without lending: lend now?
bool lend_while_waiting(const lending_settings& s, std::optional<double> predicted_s, double waited_s) noexcept;

/// After the call, with the path's predicted next slack: ask for cores while computing?
bool ask_after(const lending_settings& s, std::optional<double> predicted_next_s) noexcept;

}  // namespace aloe::mpi

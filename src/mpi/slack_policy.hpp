// The slack-conscious dynamic fraction (Kale's thesis ch. 4, slackSched; issue 15 item 3): a
// policy kind that libaloe-mpi registers when it loads. A loop site whose schedule asks for
// slack (slack=on, or adaptive unless slack=off) gets a link after adaptive's in its chain.
// Per invocation it finds the MPI call that followed the site last time (slack_board.hpp),
// takes the site's share of that call's predicted slack, and lowers the dynamic fraction of
// the run the links before it chose by Eq. 4.11 (adapt/dynamic_fraction_model.hpp):
//   fd' = max(fd − S / ((p−1)·N·t1/p − N·q), 0)
// with t1 the least static time per iteration the site has shown, q the probed dequeue cost
// per chunk over the chunk, p the threads, N the iterations. On a staggered run that is the
// thesis's comboSched, with its order: the layout and fraction first, then the slack.
// It leaves the run alone while adaptive is still measuring (loop_plan::measuring).
#pragma once

#include "loop/policy_chain.hpp"

namespace aloe::mpi {

/// The kind (registered at load by slack_policy.cpp; exposed for tests).
const loop::policy_kind& slack_policy_kind() noexcept;

/// The schedule `run` with dynamic fraction `fd` (kinds with fs; dynamic becomes hybrid with
/// its chunk). Unchanged for kinds without a static fraction to set.
schedule with_dynamic_fraction(const schedule& run, double fd);

/// The dynamic fraction of `run`: 1 − fs, 1 for dynamic, −1 for kinds slack cannot adjust.
double dynamic_fraction_of(const schedule& run) noexcept;

}  // namespace aloe::mpi

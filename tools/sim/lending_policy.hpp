// Which rule moves cores between the ranks of a node (issue 19), and what each move costs,
// as the simulated ranks (node_ranks.hpp) apply them. Each policy is a model of what a
// runtime does; the latencies default to aloe's own constants and measurements.
//
//  off         static allocation: each rank keeps its cores, a waiting rank's cores idle
//  lewi        DLB LeWI, reactive: a rank lends its cores when it enters its blocking call
//              (after `lewi`); a rank uses lent cores only from its next parallel region's
//              start, as threads of that region (its static part too), and keeps them until
//              the lender's call returns. `mpi=busy`: the MPI busy-polls (OpenMPI's
//              default), so the lender keeps spinning on the core it lent and the borrower's
//              thread gets it in alternate scheduler slices (`slice`): half its speed, and a
//              region may wait a whole slice for that thread
//  reactive    aloe's LeWI rule (src/mpi/lending_rule.hpp): a rank lends once its call has
//              waited `grace`; every computing rank asks; the daemon gives the lent cores to
//              the asking ranks, lowest rank first (src/coord/core_lending.hpp: equal wants,
//              ties to the lower pid), after `daemon`; the borrower learns it at its next poll
//              (uniform in [0, `poll`)); its running loop lets the cores in at participant 0's
//              next dynamic chunk (loop/participant_limit.hpp), each after `move`; they take
//              dynamic chunks only; its next regions plan with them
//  predictive  aloe's rule, the runtime's own functions (src/mpi/lending_rule.hpp) on each
//              rank's last 9 waits: a rank lends after the wait that pays most for a lend
//              (at the call's entry when its waits are long, just past the short ones when
//              some are long, after `least-slack` when none pays; no wait yet: the reactive
//              rule); every computing rank asks.
//              `sizing=on` (default): phase-start sizing. At a step's start, when every
//              rank's busy core-seconds agreed within `guard` over the last two steps, the
//              ranks run with the cores rank_sizing.hpp gives them for the core-seconds their
//              loops held last step (threads × region time), so that the node's ranks finish
//              together, if that split's predicted phase is more than `guard` shorter than
//              the plain allocation's; a rank's given cores serve the taker for the whole phase, a new split
//              after `daemon` + poll + `move`, an unchanged one at once (the offer stands
//              across the call). `sizing=renew`: every phase's split goes through the daemon
//              and the poll again. `sizing=off`: lending around the call only.
//              `guard=G` (0.1): a sized step that took more than (1 + G) × its prediction
//              sends the node back to the plain allocation for a step. `ask=critical`: a
//              rank asks only where its next wait does not lend at the entry (aloe's rule
//              until 2026-11-28, a what-if now); `ask=all` is the default
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace aloe::sim {

struct lending_policy {
    enum class kind { off, lewi, reactive, predictive };
    kind type = kind::off;
    bool busy_mpi = false;  ///< lewi: the lender spins on the core it lent
    enum class sizing_mode { off, standing, renewed };
    sizing_mode sizing = sizing_mode::standing;  ///< predictive: phase-start sizing
    double guard = 0.1;     ///< predictive: how far a prediction may miss
    bool ask_critical = false;  ///< predictive: only a rank whose next wait does not lend at the entry asks
    /// Canonical text: "off", "lewi", "lewi,mpi=busy", "reactive", "predictive",
    /// "predictive,sizing=renew,guard=0.2,ask=critical" (defaults omitted).
    std::string to_string() const;
};

/// "off,lewi,lewi,mpi=busy,reactive,predictive": a word with '=' belongs to the policy
/// before it; ';' separates too. Throws std::invalid_argument naming the bad word.
std::vector<lending_policy> parse_lending_policies(std::string_view text);

/// What moving cores costs and how soon it can happen. Defaults: aloe's constants and
/// measurements, each with its source.
struct lending_latencies {
    double grace_s = 50e-6;        ///< reactive: waited this long, a rank lends (lending_rule.hpp)
    double least_slack_s = 1e-3;   ///< predictive: predicted wait worth lending (lending_rule.hpp)
    double poll_s = 0.5e-3;        ///< a lending rank's client reads the daemon (daemon_client.cpp, poll_fast_ns)
    /// An offer to the borrower's allocation through aloed: the measured median of a client's
    /// message to the daemon's answer (bench/results/coord-reaction-20261126, "join", 2-core VM).
    double daemon_s = 0.33e-3;
    /// A spare worker woken (futex) and moved to the borrowed CPU (sched_setaffinity, the
    /// migration) before its first chunk: the median measured on the 2-core VM, 68–78 us
    /// (a wake alone: 13 us; docs/sim.md).
    double move_s = 70e-6;
    /// DLB's lend and borrow through its shared memory: a placeholder (DLB publishes no
    /// figure; a few atomic updates and an OMPT callback), not measured here.
    double lewi_s = 5e-6;
    /// Busy MPI: the scheduler's slice between the spinning lender and the borrower's thread;
    /// < 0: Linux's base slice for the node, 0.75 ms × (1 + log2 min(cores, 8)).
    double slice_s = -1;
    double nap_max_s = 100e-6;     ///< polite wait: its longest sleep between tests (polite_wait.hpp)
};

/// "zero" (every latency 0; least-slack, a threshold, stays), or "key=us,..." with keys
/// grace, least-slack, poll, daemon, move, lewi, slice (microseconds; slice may be "auto").
/// Changes only the keys given. Throws
/// std::invalid_argument naming the bad key or value.
void parse_lending_latencies(std::string_view text, lending_latencies& out);

/// The slice `l` gives on a node of `cores` cores.
double busy_slice_s(const lending_latencies& l, int cores) noexcept;

}  // namespace aloe::sim

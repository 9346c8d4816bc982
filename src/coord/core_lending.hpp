// Lending cores between the clients of one job: what the daemon does with offers and
// requests (message.hpp) after the policy has shared the node out. A function of a snapshot
// (no clock, no sockets), like the policies, so the tests compute its cases by hand;
// client_table.hpp keeps the standing offers and requests and applies the result.
//
// Issue 19's use: an MPI rank about to wait in MPI lends its cores to the rank everyone
// waits for (the critical one) on the same node, and takes them back when its wait ends.
//
// The rules, each for a reason:
// - Only clients of the same user and the same non-empty job (the MPI job id the launcher
//   exports, sent in the hello) lend to each other: ranks of one job wait for each other,
//   strangers do not, and a user's cores are never handed to another user by a message.
// - A lender keeps at least 1 thread (a program cannot run on none): it lends at most its
//   policy share minus 1, whatever it offered. A lender blocked in MPI (offer_whole: it
//   waits politely, on no core of its own) lends up to its whole share: a rank bound to one
//   core has nothing else to lend. Its allocation still says 1 thread, what it runs with if
//   it returns before its offer is taken back.
// - A requester takes at most what it can use: what it asked for, and its limit minus its
//   share. The table passes the user's cap as the limit (not the own thread count: a rank
//   keeps spare workers for borrowed cores and asks for as many as it has).
// - Cores offered that no one in the job wants stay with the lender: lending to nobody
//   helps no one, and handing them to members that did not ask would change their counts
//   behind the policy's back. A lender's count drops only by what was taken.
// - Requesters are served largest want first (the rank furthest behind is the one the rest
//   wait for), ties by lower pid, then by order in the snapshot; each takes what it wants
//   while the pool lasts. Lenders give in the same order (largest lendable first): the
//   result is deterministic, whatever the order offers arrived in.
// - An offer ends at its time (`offer_ends`); one that has ended counts as none.
// - Counts are threads, as in allocations; the daemon's --chunk shapes the policy's shares,
//   not what a client lends (a rank lends what it says it leaves idle).
#pragma once

#include <cstddef>
#include <limits>
#include <span>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace aloe::coord {

/// No end: an offer that stands until the client takes it back.
inline constexpr double offer_no_end = std::numeric_limits<double>::infinity();

struct lending_view {
    pid_t pid = 0;
    uid_t uid = 0;
    std::string_view job;            ///< "" : not in a job, neither lends nor borrows
    unsigned share = 1;              ///< the policy's threads (>= 1)
    unsigned limit = 0;              ///< most threads it may run (own count, cap); 0: no limit
    unsigned offered = 0;            ///< cores it offers (0: no offer)
    double offer_ends = offer_no_end;///< when the offer ends, on the caller's clock
    unsigned requested = 0;          ///< cores it asks for beyond its share (ignored while it offers)
    bool whole = false;              ///< the offer may take its whole share (offer_whole)
};

/// Cores that moved from one client to another (indices into the snapshot).
struct lending_transfer {
    std::size_t lender = 0;
    std::size_t borrower = 0;
    unsigned cores = 0;
};

struct lending_result {
    std::vector<unsigned> threads;   ///< one per client: share − lent + borrowed (>= 1)
    std::vector<unsigned> lent;
    std::vector<unsigned> borrowed;
    /// Who gave to whom: lenders in their giving order are paired with requesters in their
    /// serving order, so a borrower's cores come from as few lenders as possible.
    std::vector<lending_transfer> transfers;
};

/// Each client's threads once the offers standing at `now` are taken by the requests of
/// the same user and job.
lending_result lend_cores(std::span<const lending_view> clients, double now);

}  // namespace aloe::coord

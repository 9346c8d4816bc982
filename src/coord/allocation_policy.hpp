// The daemon's allocation policies: how many threads each client gets from the cores the
// daemon shares out. Each policy is a function of a snapshot (no clock, no sockets), so the
// tests drive it with hand-made clients; client_table.hpp takes the snapshot and applies it.
//
// - efficiency (the default): SCAF's efficiency-proportional shares, p_i = N·C_i/ΣC
//   (speedup_model.hpp), cut into whole chunks by intpart with the donor fix
//   (integer_partition.hpp). A client that has not reported yet counts with the mean slope
//   of those that have (unknown_slope when none has): a newcomer starts near an equal
//   share and moves as soon as it reports, instead of SCAF's whole machine on hello.
// - equipartition: equal shares (Eq. 4.1), no feedback.
//
// Beyond SCAF, for both: a client never gets more than it would run with alone (its own
// thread count, e.g. OMP_NUM_THREADS=4 on a 16-core node) nor more than a cap its user set
// (`aloe daemon steer`): what it cannot use goes to the others in proportion to their
// shares (water-filling), instead of idling. More clients than cores: every client gets one
// thread (a program cannot run on none) and the allocation says it is oversubscribed.
#pragma once

#include "coord/message.hpp"

#include <span>
#include <vector>

namespace aloe::coord {

struct client_view {
    double slope = 0;        ///< fitted C (speedup_model.hpp); <= 0: not reported yet
    unsigned limit = 0;      ///< most threads it may get (own count, user's cap); 0: no limit
};

struct allocation_result {
    std::vector<unsigned> threads;  ///< one per client, in the snapshot's order
    bool oversubscribed = false;
};

/// Threads for each client from `cores` (>= 0), in multiples of `chunk` (>= 1).
allocation_result allocate(policy_id policy, std::span<const client_view> clients, unsigned cores,
                           unsigned chunk = 1);

}  // namespace aloe::coord

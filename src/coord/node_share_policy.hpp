// The `node-share` policy kind (node_share_policy.cpp): the daemon's allocation in every
// loop and region plan. It registers itself when the library loads (unless ALOE_DAEMON=off).
#pragma once

namespace aloe::coord {

/// Keeps the kind registered even while no daemon answers, so that a daemon started later
/// is joined (the GOMP interposer calls it when it loads).
void keep_node_share_policy() noexcept;

}  // namespace aloe::coord

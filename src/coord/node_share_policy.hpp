// The `node-share` policy kind (node_share_policy.cpp): the daemon's allocation in every
// loop and region plan. It registers itself when the library loads (unless ALOE_DAEMON=off).
#pragma once

namespace aloe::coord {

/// The GOMP interposer, when it loads: regions watch for a daemon from now on
/// (watch_daemon_for_regions), and aloe's own loops in this process do not ask it (they run
/// on their region's team, whose size the region kind already set).
void keep_node_share_policy() noexcept;

/// At every region that leaves its thread count to the runtime, before its chain is asked:
/// polls the daemon (dials one at most once a second, drains it at most every 10 ms: a
/// clock read otherwise) and puts the region kind in the chains while one is joined, takes
/// it out when it is gone. `own`: the region's thread count without a daemon.
void watch_daemon_for_regions(unsigned own) noexcept;

}  // namespace aloe::coord

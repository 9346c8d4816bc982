// The closed set of schedules, resolved from an aloe::schedule once per loop.
#pragma once

#include "loop/schedules/dynamic.hpp"
#include "loop/loop_stats.hpp"
#include "loop/site_registry.hpp"
#include "loop/schedules/guided.hpp"
#include "loop/schedules/hybrid.hpp"
#include "loop/schedules/staggered.hpp"
#include "loop/schedules/static.hpp"
#include "loop/schedules/tasklets.hpp"
#include "loop/schedules/weighted.hpp"

#include <variant>

namespace aloe::loop {

using any_schedule = std::variant<std::monostate, static_blocks, static_cyclic, dynamic_chunks, guided_chunks,
                                  hybrid_split, staggered_queues<queue_claim::atomic>,
                                  staggered_queues<queue_claim::mutex>, weighted_split, tasklet_queue>;

static_assert(loop_schedule<static_blocks> && loop_schedule<static_cyclic> && loop_schedule<dynamic_chunks> &&
              loop_schedule<guided_chunks> && loop_schedule<hybrid_split> &&
              loop_schedule<staggered_queues<queue_claim::atomic>> &&
              loop_schedule<staggered_queues<queue_claim::mutex>> && loop_schedule<weighted_split> &&
              loop_schedule<tasklet_queue>);

/// True for the schedules whose setup reads the site's history or tuner (and so needs its mutex).
inline bool reads_history(const schedule& s) noexcept {
    return s.kind() == schedule_kind::weighted || s.kind() == schedule_kind::tasklets ||
           s.kind() == schedule_kind::adaptive;
}

/// Builds the state of `setup.spec`'s schedule into `out` (setup.count > 0).
void make_schedule(any_schedule& out, const loop_setup& setup);

/// Calls commit() of whichever schedule `s` holds.
void commit_schedule(const any_schedule& s, std::span<const worker_record> records, site_history& h);

/// Plans one run at site `st` (its policy chain, on at most `available` threads) and builds
/// the planned schedule into `out` (count > 0), for the plan's thread count. Takes st.mutex
/// when the schedule reads the site's history or the chain has a say. `name` is the site's
/// (policies may select sites by it).
loop_plan setup_site_run(any_schedule& out, site_state& st, const schedule& spec, std::uint64_t count, int available,
                         runtime::arena& scratch, std::string_view name);

/// After the join, under st.mutex: the schedule's history, the counters (count_loop), the
/// chain's observation and the site's statistics, from the workers' records (fork at t0, join done at t1).
void commit_site_run(const any_schedule& s, site_state& st, const schedule& spec, std::span<const worker_record> records,
                     runtime::ticks t0, runtime::ticks t1);
/// Under st.mutex: runs summed in a batch (shared_loop's batched commits) into the counters
/// and the site's statistics. For runs no policy observed, of a schedule with no history.
void commit_site_runs(site_state& st, const schedule& spec, const run_sums& runs);

}  // namespace aloe::loop

// The interposer around fork(): its site tables, the region pool, the trace buffers and the
// guests' seats are
// locked in the parent just before fork() (so a child never finds one held by a thread that
// was creating a site, starting a region or registering a trace buffer), and in the child the
// counts and events inherited from the parent are dropped: a forked child reports what it
// runs itself, never the parent's loops a second time. Registered with runtime/team.hpp's
// fork hooks at rank omp_sites, first of all (creating a site pins a loop site under its
// table's mutex), so the child's statistics are cleared by the loop sites' own child hook.
#include "omp/guest_seats.hpp"
#include "omp/omp_site.hpp"
#include "omp/team_region.hpp"
#include "omp/trace_log.hpp"
#include "runtime/team.hpp"

namespace aloe::omp {
namespace {

void before_fork() noexcept {
    lock_site_tables_for_fork();
    lock_region_pool_for_fork();
    lock_trace_for_fork();
    lock_guest_seats_for_fork();
}

void after_fork_in_parent() noexcept {
    unlock_guest_seats_after_fork(false);
    unlock_trace_after_fork();
    unlock_region_pool_after_fork();
    unlock_site_tables_after_fork();
}

void after_fork_in_child() noexcept {
    unlock_guest_seats_after_fork(true);
    forget_trace_in_child();
    unlock_trace_after_fork();
    unlock_region_pool_after_fork();
    forget_taken_runs_in_child();
    forget_site_counts_in_child();
    unlock_site_tables_after_fork();
}

__attribute__((constructor)) void arm_fork_hooks() {
    runtime::register_fork_hooks(runtime::fork_rank::omp_sites,
                                 {&before_fork, &after_fork_in_parent, &after_fork_in_child});
}

}  // namespace
}  // namespace aloe::omp

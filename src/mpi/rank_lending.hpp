// A rank's side of lending cores between the ranks of its job on one node (issue 19): the
// mode this process runs (ALOE_LEND), whether its blocking calls wait politely, and what a
// wrapper does around one (lend per lending_rule.hpp while it waits, take back and ask
// after). The daemon's side is coord/core_lending.hpp; the borrower's, the team's spare
// workers (runtime/borrowed_cores.hpp) joining its loops (loop/participant_limit.hpp).
//
// Which calls wait politely: MPI_Wait, Waitall, Waitany, Waitsome, Recv, Sendrecv and
// Probe always may (their nonblocking forms are the same operation); the blocking
// collectives Barrier, Bcast, Reduce, Allreduce, Allgather, Alltoall, Gather and Scatter
// only when every rank of the job agreed at MPI_Init (a nonblocking collective does not
// match a blocking one, MPI-3.1 §5.12, so all ranks use the same form). Other calls wait
// as the library does and lend nothing.
#pragma once

#include "mpi/polite_wait.hpp"

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace aloe::mpi {

/// At MPI_Init (collective on `world`): resolves ALOE_LEND for this process, and the job
/// agrees whether blocking collectives wait politely (all do when any rank lends).
void lending_after_init(MPI_Comm world) noexcept;

/// Whether this process's blocking point-to-point calls and (job-wide) collectives wait
/// politely.
bool polite_point_to_point() noexcept;
bool polite_collectives() noexcept;

/// The rule, the link to the daemon, and the bookkeeping around one polite wait of the
/// path at `row`. Not re-entrant: a nested or concurrent call waits without lending.
wait_outcome lend_during(std::size_t row, int (*test)(void* ctx, bool& done), void* ctx) noexcept;

/// The same with a callable `int test(bool& done)` (the C and the Fortran wrappers' tests).
template <class Test>
wait_outcome lend_during(std::size_t row, Test& test) noexcept {
    return lend_during(row, [](void* c, bool& done) noexcept { return (*static_cast<Test*>(c))(done); }, &test);
}

/// What this rank lent and asked for, for the statistics.
struct lending_totals {
    std::uint64_t polite_waits = 0;
    std::uint64_t lends = 0;
    std::uint64_t lends_at_entry = 0;  ///< of those, at the wait's entry on a predicted slack (the rest after waiting)
    double lent_s = 0;
    std::uint64_t asks = 0;        ///< requests for cores sent (a change of mind each)
    std::uint64_t take_backs = 0;
    std::uint64_t phase_lends = 0;   ///< predictive: phases run with cores lent from their start
    std::uint64_t phase_misses = 0;  ///< of those, phases after which the rank hardly waited (the guard)
    double phase_core_s = 0;         ///< core-seconds lent that way
    double lend_cost_s = 0;              ///< predictive: what a lend cost the lender's next phase (lend_cost.hpp)
    std::uint64_t refused_for_cost = 0;  ///< predictive: lends refused because the slack did not cover it
    std::uint64_t idle_core_wakes = 0;   ///< naps of lent waits ended because the lent core fell idle
    bool idle_core_watch = false;        ///< the SCHED_IDLE sentinel runs (idle_core_watch.hpp)
    const char* mode = "off";
    bool collectives = false;
};
lending_totals lending_statistics() noexcept;

/// The per-step report (lending_steps.hpp): JSON members, trace events, summary lines. Read
/// at the end of the run, after the last polite wait.
std::string lending_steps_json();
std::string lending_trace_events(long pid, int rank);
std::string lending_summary(int rank);

}  // namespace aloe::mpi

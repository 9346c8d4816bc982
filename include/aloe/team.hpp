/// @file team.hpp
/// The team: the persistent worker threads of one process, created once and reused by
/// every loop.
#pragma once

#include <aloe/export.h>

#include <memory>

namespace aloe {

namespace runtime { class worker_team; }

/// A set of worker threads. The thread that runs a loop on the team is its worker 0; the
/// team owns size()-1 more threads, which wait between loops according to
/// ALOE_WAIT_POLICY (spin, then yield, then sleep on a futex by default).
///
/// Thread-safety: one loop runs on a team at a time. A loop started from inside a loop body
/// of the same team runs on its caller and the workers idle at that moment (none idle: on
/// its caller alone). A loop started on a busy team from another thread, or from inside a
/// loop body of another team, runs serially on the calling thread.
///
/// fork(): a child process has none of the workers of the teams made before the fork. A
/// loop on such a team in the child runs serially on the calling thread (warning W010 once;
/// size() still says the size it was made with), and destroying it there leaves its thread
/// handles behind instead of joining threads that do not exist. A child that calls fork()
/// inside a loop body must exec or _exit before that body returns (else fatal F013).
class team;
namespace detail {
team* make_process_team_object();  // the runtime's: the process team, spares included
}

class ALOE_API team {
public:
    /// A team of `threads` workers (>= 1); throws aloe::error otherwise. Cost: starts
    /// threads-1 threads.
    explicit team(int threads);
    ~team();
    team(const team&) = delete;
    team& operator=(const team&) = delete;

    int size() const noexcept;

    /// The process team, created on first use with ALOE_NUM_THREADS, else OMP_NUM_THREADS,
    /// else one worker per core hwloc reports. In a child of fork(), the first call makes a
    /// fresh team of the same size (the parent's is left behind, still valid, and runs its
    /// loops serially); if no thread can be started there, the fresh team has one worker.
    /// Cost in the steady state: four loads and two compares.
    static team& global();

    runtime::worker_team& workers() noexcept { return *workers_; }

private:
    // The process team: `threads` of the program's own plus `spare` workers for cores that
    // other ranks of its MPI job lend it (not counted in size()).
    team(int threads, int spare);
    friend team* detail::make_process_team_object();

    std::unique_ptr<runtime::worker_team> workers_;
};

}  // namespace aloe

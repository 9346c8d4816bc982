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
/// Thread-safety: one loop runs on a team at a time. A loop started on a busy team (from
/// another thread, or from inside a loop body) runs serially on the calling thread.
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
    /// else one worker per core hwloc reports.
    static team& global();

    runtime::worker_team& workers() noexcept { return *workers_; }

private:
    std::unique_ptr<runtime::worker_team> workers_;
};

}  // namespace aloe

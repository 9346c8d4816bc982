// An epoch of stencil1d-tasks: `steps` timesteps of the ring, one task per partition per
// timestep, each task waiting only for its own partition and its two neighbours at the
// timestep before (1d_stencil_4's futurized structure: no barrier between timesteps; the
// epoch ends when its last timestep's tasks are done). One runner per runtime, each in that
// runtime's own idiom:
//   serial    the timesteps in order, partition by partition (the reference)
//   aloe      aloe::dataflow over a shared_future<void> per partition per timestep, the whole
//             epoch's graph spawned at once, as HPX's example does; the caller then waits
//   tbb       a oneTBB flow graph: a continue_node per partition per timestep, edges from the
//             three it reads, built once per partitioning and re-run every epoch
//   OpenMP    `#pragma omp task` per partition per timestep with depend(in: the three
//             partitions' tokens of the timestep before) depend(out: its own), from one thread
//             of a parallel region whose end waits for them
//   taskflow  a tf::Taskflow of the same graph as oneTBB's, built once per partitioning,
//             run with executor.run(flow).wait()
// Buffers: two for the whole ring (ring.hpp). The task of partition p at timestep s + 1
// overwrites p's points of timestep s - 1, whose readers are exactly the three tasks it
// waits for, so every runner is race-free with the dependences alone.
#pragma once

#include "ring.hpp"

#include <memory>

namespace aloe_apps {
class harness;
}

namespace aloe_apps::stencil {

class epoch_runner {
public:
    virtual ~epoch_runner() = default;
    /// Readies the runner for `parts` and `steps` (builds a graph when they changed); called
    /// before each epoch, outside its timing.
    virtual void prepare(const partitioning& parts, int steps) = 0;
    /// Runs `steps` timesteps of `r` from its current state (r.now moves on by `steps`).
    virtual void run(ring& r, const partitioning& parts, int steps) = 0;
    /// Tasks (or graph nodes) one epoch runs.
    static std::int64_t tasks(const partitioning& parts, int steps) noexcept { return parts.count * steps; }
};

/// The runner of the harness's runtime (started).
std::unique_ptr<epoch_runner> make_epoch_runner(harness& h);

}  // namespace aloe_apps::stencil

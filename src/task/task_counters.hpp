// The task scheduler's counters, with HPX's names and meanings (reference 002, §1.4, §2):
// every one process-wide, so readable for the total and per worker slot
// (`/threads{locality#0/worker-thread#3}/time/overall`).
//
//   raw (written by the scheduling loop of each thread, on its own lines):
//   /threads/time/overall              ns     Σt_func: time in the scheduling loop (running
//                                             tasks, looking for them, waiting for one)
//   /threads/time/cumulative           ns     Σt_exec: time in task bodies (by phases)
//   /threads/count/cumulative          count  tasks executed (n_t)
//   /threads/count/cumulative-phases   count  phases: a task's first run and each resumption
//                                             after it waited and ran others meanwhile
//   /threads/count/pending-accesses    count  looks into the own deque
//   /threads/count/pending-misses      count  of them, found it empty
//   /threads/count/stolen-from-pending count  tasks other threads stole from this slot
//   /threads/count/stolen-to-pending   count  tasks this thread stole
//   /threads/wait-time/pending-sum     ns     queue wait (spawn to start) of sampled tasks
//   /threads/wait-time/pending-samples count  the tasks sampled (one spawn in 16 per thread)
//
//   derived by the registry from the raw ones (over any reader's interval):
//   /threads/idle-rate                 ppm    (Σt_func − Σt_exec) / Σt_func
//   /threads/time/average              ns     Σt_exec / n_t            (t_d)
//   /threads/time/average-overhead     ns     (Σt_func − Σt_exec) / n_t (t_o)
//   /threads/time/cumulative-overhead  ns     Σt_func − Σt_exec
//   /threads/time/average-phase        ns     Σt_exec / phases
//   /threads/time/average-phase-overhead ns   (Σt_func − Σt_exec) / phases
//   /threads/wait-time/pending         ns     mean queue wait of the sampled tasks
//
// Queue wait time is NOT Grubel's "wait time" (task-duration inflation against a one-core
// run, t_d − t_d1), which needs a baseline no counter has: adapt/grain_objective computes
// that one. No helper tasks run through the scheduler (a dataflow's input arrivals run inline
// in the completing task), so n_t counts only tasks the program made: the reference's
// negative-wait-time distortion from helper tasks cannot happen here.
#pragma once

#include "runtime/clock.hpp"
#include "runtime/counters.hpp"

namespace aloe::task {

struct counters {
    runtime::counter_handle overall, cumulative, tasks, phases, pending_accesses, pending_misses, stolen_from,
        stolen_to, wait_sum, wait_samples;

    /// Registers the raw counters and the derived ones (once per process; later calls return
    /// the same handles).
    static counters registered();
};

/// One spawn in this many per thread is stamped for the queue wait time.
inline constexpr unsigned wait_sample_period = 16;

}  // namespace aloe::task

// What the task workloads (apps/fib, uts, sort, nqueens, stencil1d-tasks) share: starting a
// task program on the selected runtime, and each runtime's fork-join group, the way its users
// write one.
//
// A recursive workload is written once, as a template over a `Tasks` context whose group()
// gives a fork-join group: run(f) spawns f, wait() returns once every f run into the group
// has finished. Each runtime's group is its own primitive:
//   serial_tasks    runs f at once, inline (the serial reference: the same program, no runtime)
//   aloe_tasks      aloe::task_group (run / wait)
//   tbb_tasks       tbb::task_group (run / wait)
//   omp_tasks       `#pragma omp task` per run, `#pragma omp taskwait` (which waits for every
//                   child task of the current task: the workloads' groups are the only ones
//                   open in a task, so that is the group)
//   taskflow_tasks  tf::TaskGroup (silent_async / corun), made from the executor
// with_tasks(h, program) starts program(context) on the selected runtime (run_root). A
// workload whose structure is not fork-join (stencil1d-tasks: dataflow) writes each runtime's
// version itself and starts it with run_root.
//
// The harness (harness.hpp, task_workload()) owns the threads: aloe's process team, oneTBB's
// arena, OpenMP's pool and Taskflow's executor, each of --threads threads, pinned alike.
#pragma once

#include "harness.hpp"
#include "taskflow_header.hpp"

#include <aloe/task.hpp>

#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>


#include <stdexcept>
#include <type_traits>
#include <utility>

namespace aloe_apps {

/// Runs `root()` once, on the harness's runtime, and returns when it and every task it
/// spawned have finished (the workload's own groups wait for their tasks):
///   serial, aloe  the calling thread (aloe: it holds the process team's outside slot, and
///                 its waits run tasks, so the team's workers and it share the work);
///   tbb           inside the harness's arena, on the calling thread (its master slot);
///   libgomp, libomp  one thread of a parallel region of --threads (`omp single`); the
///                 region's others run the tasks, and the region's end waits for them all;
///   taskflow      as a task on the executor (a tf::TaskGroup may only be made on one of its
///                 workers), the caller blocked until it returns.
/// root must not throw on OpenMP (an exception may not leave a structured block).
template <class F>
void run_root(harness& h, F&& root) {
    switch (h.runtime()) {
    case runtime_kind::serial:
    case runtime_kind::aloe:
        root();
        return;
    case runtime_kind::tbb:
        h.tbb_arena().execute([&] { root(); });
        return;
    case runtime_kind::libgomp:
    case runtime_kind::libomp:
#pragma omp parallel
#pragma omp single
        root();
        return;
    case runtime_kind::taskflow:
#ifdef ALOE_APPS_TASKFLOW
        h.taskflow_executor().async([&] { root(); }).get();
        return;
#else
        break;
#endif
    }
    throw std::logic_error("run_root: this build has no task program for the runtime");
}

struct serial_tasks {
    struct group {
        template <class F>
        void run(F&& f) {
            f();
        }
        void wait() noexcept {}
    };
    group make_group() const noexcept { return {}; }
};

/// A runtime whose task group already is run(f) / wait() (aloe::task_group, tbb::task_group).
template <class Group>
struct group_tasks {
    using group = Group;
    group make_group() const { return group(); }
};
using aloe_tasks = group_tasks<aloe::task_group>;
using tbb_tasks = group_tasks<tbb::task_group>;

struct omp_tasks {
    struct group {
        template <class F>
        void run(F&& f) {
            std::decay_t<F> fn(std::forward<F>(f));
#pragma omp task firstprivate(fn)
            fn();
        }
        void wait() noexcept {
#pragma omp taskwait
        }
    };
    group make_group() const noexcept { return {}; }
};

#ifdef ALOE_APPS_TASKFLOW
struct taskflow_tasks {
    tf::Executor* executor;
    class group {
    public:
        explicit group(tf::Executor& e) : g_(e.task_group()) {}
        template <class F>
        void run(F&& f) {
            g_.silent_async(std::forward<F>(f));
        }
        void wait() { g_.corun(); }

    private:
        tf::TaskGroup g_;
    };
    group make_group() const { return group(*executor); }
};
#endif

/// Starts `program(tasks)` with the selected runtime's context (one of the above), through
/// run_root; program is a generic lambda, instantiated once per runtime.
template <class Program>
void with_tasks(harness& h, Program&& program) {
    run_root(h, [&] {
        switch (h.runtime()) {
        case runtime_kind::serial: program(serial_tasks{}); return;
        case runtime_kind::aloe: program(aloe_tasks{}); return;
        case runtime_kind::tbb: program(tbb_tasks{}); return;
        case runtime_kind::libgomp:
        case runtime_kind::libomp: program(omp_tasks{}); return;
        case runtime_kind::taskflow:
#ifdef ALOE_APPS_TASKFLOW
            program(taskflow_tasks{&h.taskflow_executor()});
#endif
            return;
        }
    });
}

}  // namespace aloe_apps

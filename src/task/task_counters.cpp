#include "task/task_counters.hpp"

namespace aloe::task {

namespace {

runtime::counter_handle raw(std::string_view name, aloe::counter_unit unit, std::string_view help) {
    return runtime::register_counter({.object = "threads", .name = name, .unit = unit, .help = help});
}

counters make() {
    using aloe::counter_unit;
    counters c;
    c.overall = raw("time/overall", counter_unit::nanoseconds,
                    "time in the task scheduling loop: running tasks, finding them, waiting for one (HPX t_func)");
    c.cumulative = raw("time/cumulative", counter_unit::nanoseconds, "time in task bodies (HPX t_exec)");
    c.tasks = raw("count/cumulative", counter_unit::count, "tasks executed");
    c.phases = raw("count/cumulative-phases", counter_unit::count,
                   "task phases: a task's first run and each resumption after it waited");
    c.pending_accesses = raw("count/pending-accesses", counter_unit::count, "looks into the thread's own task deque");
    c.pending_misses = raw("count/pending-misses", counter_unit::count, "looks into the own deque that found it empty");
    c.stolen_from = raw("count/stolen-from-pending", counter_unit::count, "tasks other threads stole from this one");
    c.stolen_to = raw("count/stolen-to-pending", counter_unit::count, "tasks this thread stole from others");
    c.wait_sum = raw("wait-time/pending-sum", counter_unit::nanoseconds,
                     "queue wait (spawn to start) of the sampled tasks (one spawn in 16)");
    c.wait_samples = raw("wait-time/pending-samples", counter_unit::count, "tasks sampled for the queue wait time");

    // HPX's derived counters, computed by the registry over any reader's interval.
    const auto derived = [](std::string_view name, counter_unit unit, std::string_view help, runtime::counter_handle a,
                            runtime::counter_handle b, runtime::counter_handle c_, std::uint64_t scale = 1,
                            std::uint64_t empty = 0) {
        runtime::register_derived_counter({.object = "threads", .name = name, .unit = unit, .help = help, .a = a,
                                           .b = b, .c = c_, .scale = scale, .empty_value = empty});
    };
    const runtime::counter_handle none{};
    constexpr std::uint64_t ppm = 1'000'000;
    // As HPX: 100% idle when no time was spent in the loop.
    derived("idle-rate", counter_unit::ratio, "(t_func - t_exec) / t_func", c.overall, c.cumulative, c.overall, ppm, ppm);
    derived("time/average", counter_unit::nanoseconds, "average task duration t_d = t_exec / tasks", c.cumulative, none,
            c.tasks);
    derived("time/average-overhead", counter_unit::nanoseconds, "average task overhead (t_func - t_exec) / tasks",
            c.overall, c.cumulative, c.tasks);
    derived("time/cumulative-overhead", counter_unit::nanoseconds, "t_func - t_exec", c.overall, c.cumulative, none);
    derived("time/average-phase", counter_unit::nanoseconds, "t_exec / phases", c.cumulative, none, c.phases);
    derived("time/average-phase-overhead", counter_unit::nanoseconds, "(t_func - t_exec) / phases", c.overall,
            c.cumulative, c.phases);
    derived("wait-time/pending", counter_unit::nanoseconds, "mean queue wait (spawn to start) of the sampled tasks",
            c.wait_sum, none, c.wait_samples);
    return c;
}

}  // namespace

counters counters::registered() {
    static const counters c = make();
    return c;
}

}  // namespace aloe::task

#include "adapt/grain_objective.hpp"

#include <algorithm>
#include <cmath>

namespace aloe::adapt {
namespace {

constexpr double ns_to_s = 1e-9;

}  // namespace

std::string_view to_string(objective_status status) noexcept {
    switch (status) {
    case objective_status::ok: return "ok";
    case objective_status::wait_clamped: return "wait time below 0, counted as 0";
    case objective_status::no_time: return "no task time in the epoch";
    case objective_status::no_wall: return "no wall time";
    case objective_status::no_baseline: return "no one-core task duration";
    case objective_status::bad_work: return "work not positive";
    }
    return "?";
}

double one_core_task_ns(const knob_counters& c) noexcept {
    if (!(c.tasks > 0) || !(c.exec_ns >= 0)) return std::numeric_limits<double>::quiet_NaN();
    return c.exec_ns / c.tasks;
}

objective_result evaluate_objective(knob_objective objective, const epoch_measure& m) noexcept {
    objective_result r;
    if (!(m.work > 0) || !std::isfinite(m.work)) {
        r.status = objective_status::bad_work;
        return r;
    }
    if (objective == knob_objective::time) {
        if (!(m.wall_seconds > 0) || !std::isfinite(m.wall_seconds)) r.status = objective_status::no_wall;
        else r.value = m.wall_seconds / m.work;
        return r;
    }
    const knob_counters& c = m.counters;
    if (!(c.overall_ns > 0) || !std::isfinite(c.overall_ns)) {
        r.status = objective_status::no_time;
        return r;
    }
    const double exec = std::clamp(std::isfinite(c.exec_ns) ? c.exec_ns : 0.0, 0.0, c.overall_ns);
    // Σt_exec above Σt_func is skew between two counters read at slightly different times:
    // the overhead is then 0, not negative.
    const double overhead_ns = c.overall_ns - exec;
    switch (objective) {
    case knob_objective::overall: r.value = c.overall_ns * ns_to_s / m.work; break;
    case knob_objective::idle_rate: r.value = overhead_ns / c.overall_ns; break;
    case knob_objective::overhead: r.value = overhead_ns * ns_to_s / m.work; break;
    case knob_objective::overhead_wait: {
        const double cores = std::max(c.cores, 1);
        double wait_ns = 0;
        if (c.tasks > 0) {
            if (!(m.one_core_task_ns > 0) || !std::isfinite(m.one_core_task_ns)) {
                r.status = objective_status::no_baseline;
                return r;
            }
            wait_ns = exec - c.tasks * m.one_core_task_ns;  // (t_d − t_d1)·n_t
            if (wait_ns < 0) {
                wait_ns = 0;
                r.status = objective_status::wait_clamped;
            }
        }
        r.value = (overhead_ns + wait_ns) / cores * ns_to_s / m.work;
        break;
    }
    case knob_objective::time: break;  // handled above
    }
    return r;
}

}  // namespace aloe::adapt

// What a grain knob judges an epoch by, from the task counters' deltas over it (seed 002,
// §2.1–2.6, Grubel's notation): Σt_func (time/overall: the workers' time on tasks, their
// management included), Σt_exec (time/cumulative: in task bodies), n_t (count/cumulative),
// n_c (workers). Pure arithmetic: knob.cpp reads the counters, the tests feed recorded
// deltas.
//
// Every time objective is per unit of work: the epoch's value divided by the work the
// application says the epoch did (1 by default: epochs of equal work, e.g. one timestep of
// a fixed grid each). Values are in seconds per unit; idle-rate is a fraction.
//
// - overall       Σt_func. Charges both the management overhead (left side of the U) and
//                 compute inflation and starvation (right side): the only counter whose
//                 minimum coincided with the least wall time in APEX's trials (§2.9, Table 9).
// - idle-rate     (Σt_func − Σt_exec)/Σt_func (Eq. 1). Computed from the two time deltas,
//                 not read from the registry's ppm counter: a ratio's delta means nothing,
//                 and this is its definition. As a ratio it favours big tasks (7–17% slower).
// - overhead      Σt_func − Σt_exec, the total management overhead (Eq. 4 without 1/n_c).
// - overhead+wait T_o + T_w with T_o = (Σt_func − Σt_exec)/n_c (Eq. 4) and
//                 T_w = (t_d − t_d1)·n_t/n_c (Eq. 6), t_d = Σt_exec/n_t and t_d1 the average
//                 task duration at the same value on one core: Grubel's "wait time", the
//                 growth of task duration with concurrency (NOT time in a queue). t_w turns
//                 negative where helper tasks dilute t_d at coarse grain (§2.5: correlation
//                 −0.8 there) or noise makes t_d < t_d1: T_w is then counted as 0 (wait
//                 cannot be negative; a negative one would reward the value for measuring
//                 faster on many cores than on one) and the result says so. Note
//                 T_o + T_w = (Σt_func − n_t·t_d1)/n_c when t_w >= 0: overall less the
//                 one-core work, so it ranks values as overall does, except where the
//                 one-core work itself depends on the value (cache effects).
// - time          the epoch's wall time (the caller's or the knob's clock): the oracle.
#pragma once

#include <aloe/knob.hpp>

#include <cstdint>
#include <limits>
#include <string_view>

namespace aloe::adapt {

enum class objective_status : std::uint8_t {
    ok,
    wait_clamped,  ///< overhead+wait: t_d < t_d1, T_w counted as 0 (the value is valid)
    no_time,       ///< Σt_func is 0: no task ran, or the counters are absent
    no_wall,       ///< time: the wall time is not positive
    no_baseline,   ///< overhead+wait: tasks ran but t_d1 is unknown
    bad_work,      ///< the work is not positive and finite
};
std::string_view to_string(objective_status status) noexcept;

/// One epoch's measurements.
struct epoch_measure {
    knob_counters counters;
    double wall_seconds = 0;
    double work = 1;
    double one_core_task_ns = std::numeric_limits<double>::quiet_NaN();  ///< t_d1 at its value
};

struct objective_result {
    double value = std::numeric_limits<double>::quiet_NaN();  ///< NaN unless valid()
    objective_status status = objective_status::ok;
    bool valid() const noexcept { return status == objective_status::ok || status == objective_status::wait_clamped; }
};

objective_result evaluate_objective(knob_objective objective, const epoch_measure& m) noexcept;

/// Whether the objective is computed from the task counters (all but time).
constexpr bool needs_counters(knob_objective objective) noexcept { return objective != knob_objective::time; }

/// t_d1 from a one-core epoch's deltas: Σt_exec/n_t in ns; NaN when no task ran.
double one_core_task_ns(const knob_counters& c) noexcept;

}  // namespace aloe::adapt

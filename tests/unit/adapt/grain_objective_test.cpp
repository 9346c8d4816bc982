// adapt/grain_objective: each objective's arithmetic on recorded counter deltas (seed 002,
// §2.2–2.6), per unit of work, and the guards: a negative wait time counted as 0, no task,
// no task time, counters out of step, a missing one-core baseline, bad work and wall times.
#include "adapt/grain_objective.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace {
using namespace aloe::adapt;
using aloe::knob_counters;
using aloe::knob_objective;

// One epoch on 4 cores: 100 tasks of 800 ns each (Σt_exec 80 µs) in 100 µs of Σt_func.
epoch_measure recorded(double work = 1) {
    epoch_measure m;
    m.counters = knob_counters{100'000, 80'000, 100, 4};
    m.wall_seconds = 30e-6;
    m.work = work;
    m.one_core_task_ns = 700;
    return m;
}

TEST(GrainObjective, OverallIsTaskTimePerUnitOfWork) {
    const objective_result r = evaluate_objective(knob_objective::overall, recorded(2));
    ASSERT_TRUE(r.valid());
    EXPECT_DOUBLE_EQ(r.value, 100'000e-9 / 2);
}

TEST(GrainObjective, IdleRateIsOverheadOverOverallAndIgnoresWork) {
    const objective_result r = evaluate_objective(knob_objective::idle_rate, recorded(5));
    ASSERT_TRUE(r.valid());
    EXPECT_DOUBLE_EQ(r.value, 0.2);  // (100 − 80) / 100
}

TEST(GrainObjective, OverheadIsOverallLessExecution) {
    const objective_result r = evaluate_objective(knob_objective::overhead, recorded(4));
    ASSERT_TRUE(r.valid());
    EXPECT_DOUBLE_EQ(r.value, 20'000e-9 / 4);
}

TEST(GrainObjective, OverheadPlusWaitFollowsGrubelsEquations) {
    // T_o = (Σt_func − Σt_exec)/n_c = 20000/4 = 5000 ns;
    // T_w = (t_d − t_d1)·n_t/n_c = (800 − 700)·100/4 = 2500 ns.
    const objective_result r = evaluate_objective(knob_objective::overhead_wait, recorded());
    ASSERT_EQ(r.status, objective_status::ok);
    EXPECT_NEAR(r.value, 7500e-9, 1e-18);
    // Identity: with t_w >= 0, T_o + T_w = (Σt_func − n_t·t_d1)/n_c.
    const epoch_measure m = recorded();
    EXPECT_NEAR(r.value, (m.counters.overall_ns - m.counters.tasks * m.one_core_task_ns) / 4 * 1e-9, 1e-18);
}

TEST(GrainObjective, NegativeWaitTimeCountsAsZero) {
    // t_d1 = 900 ns > t_d = 800 ns (helper tasks diluting t_d at coarse grain, or noise):
    // T_w would be −2500 ns; it counts as 0 and the result says so.
    epoch_measure m = recorded();
    m.one_core_task_ns = 900;
    const objective_result r = evaluate_objective(knob_objective::overhead_wait, m);
    ASSERT_TRUE(r.valid());
    EXPECT_EQ(r.status, objective_status::wait_clamped);
    EXPECT_NEAR(r.value, 5000e-9, 1e-18);  // T_o alone
}

TEST(GrainObjective, OverheadPlusWaitNeedsTheBaselineOnlyWhenTasksRan) {
    epoch_measure m = recorded();
    m.one_core_task_ns = std::numeric_limits<double>::quiet_NaN();
    EXPECT_EQ(evaluate_objective(knob_objective::overhead_wait, m).status, objective_status::no_baseline);
    m.one_core_task_ns = 0;
    EXPECT_EQ(evaluate_objective(knob_objective::overhead_wait, m).status, objective_status::no_baseline);
    // No task: no wait time to judge, only the overhead (workers looked for work).
    m.counters.tasks = 0;
    const objective_result r = evaluate_objective(knob_objective::overhead_wait, m);
    ASSERT_EQ(r.status, objective_status::ok);
    EXPECT_NEAR(r.value, 5000e-9, 1e-18);
}

TEST(GrainObjective, ZeroTasksStillJudgesTheTimeSpent) {
    epoch_measure m = recorded();
    m.counters.tasks = 0;
    EXPECT_DOUBLE_EQ(evaluate_objective(knob_objective::overall, m).value, 100'000e-9);
    EXPECT_DOUBLE_EQ(evaluate_objective(knob_objective::idle_rate, m).value, 0.2);
}

TEST(GrainObjective, ZeroOverallIsNoData) {
    epoch_measure m = recorded();
    m.counters = knob_counters{};  // counters absent, or no task ran
    for (const auto o : {knob_objective::overall, knob_objective::idle_rate, knob_objective::overhead,
                         knob_objective::overhead_wait}) {
        const objective_result r = evaluate_objective(o, m);
        EXPECT_FALSE(r.valid()) << aloe::to_string(o);
        EXPECT_EQ(r.status, objective_status::no_time) << aloe::to_string(o);
        EXPECT_TRUE(std::isnan(r.value));
    }
    // The wall time does not need the counters.
    EXPECT_DOUBLE_EQ(evaluate_objective(knob_objective::time, m).value, 30e-6);
}

TEST(GrainObjective, ExecutionAboveOverallIsSkewNotNegativeOverhead) {
    epoch_measure m = recorded();
    m.counters.exec_ns = 100'500;  // read a moment after overall
    EXPECT_DOUBLE_EQ(evaluate_objective(knob_objective::overhead, m).value, 0);
    EXPECT_DOUBLE_EQ(evaluate_objective(knob_objective::idle_rate, m).value, 0);
}

TEST(GrainObjective, TimeIsWallPerUnitOfWork) {
    epoch_measure m = recorded(3);
    m.wall_seconds = 0.9;
    EXPECT_DOUBLE_EQ(evaluate_objective(knob_objective::time, m).value, 0.3);
    m.wall_seconds = 0;
    EXPECT_EQ(evaluate_objective(knob_objective::time, m).status, objective_status::no_wall);
}

TEST(GrainObjective, WorkMustBePositive) {
    for (const double work : {0.0, -1.0, std::numeric_limits<double>::quiet_NaN(),
                              std::numeric_limits<double>::infinity()}) {
        const objective_result r = evaluate_objective(knob_objective::overall, recorded(work));
        EXPECT_EQ(r.status, objective_status::bad_work) << work;
    }
}

TEST(GrainObjective, NoCoresCountsAsOne) {
    epoch_measure m = recorded();
    m.counters.cores = 0;
    EXPECT_NEAR(evaluate_objective(knob_objective::overhead_wait, m).value, 30'000e-9, 1e-18);
}

TEST(GrainObjective, OneCoreTaskDurationIsExecutionPerTask) {
    EXPECT_DOUBLE_EQ(one_core_task_ns(knob_counters{1000, 900, 3, 1}), 300);
    EXPECT_TRUE(std::isnan(one_core_task_ns(knob_counters{1000, 900, 0, 1})));
}

}  // namespace

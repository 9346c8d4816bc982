// Calibration from recorded measurements: which number comes from which file.
#include "sim/calibration.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace aloe::sim {
namespace {

const char* const noise_with_events = R"({"tool": "aloe noise", "format": "aloe-noise-trace/1", "cpus": [
  {"method": "fwq", "cpu": 0, "events": 2, "events_per_s": 4, "event_mean_us": 30, "measured_s": 0.5,
   "events_us": [[1000, 20], [300000, 40]]},
  {"method": "fwq", "cpu": 1, "events": 1, "events_per_s": 2, "event_mean_us": 60, "measured_s": 0.5,
   "events_us": [[250000, 60]]},
  {"method": "ftq", "cpu": 0, "events": 9, "events_per_s": 18, "event_mean_us": 70}]})";

const char* const noise_without_events = R"({"tool": "aloe noise", "cpus": [
  {"method": "fwq", "cpu": 0, "events": 2, "events_per_s": 4, "event_mean_us": 30},
  {"method": "fwq", "cpu": 1, "events": 1, "events_per_s": 2, "event_mean_us": 60}]})";

const char* const overhead =
    "variant,peer,test,chunk,threads,reps,median_us,min_us,max_us,per_unit_us\n"
    "aloe static,gomp parallel for static,fork,0,2,51,0.47,0.45,0.61,0.39\n"
    "\"aloe dynamic,chunk=1\",\"gomp dynamic,1\",chunk,1,2,51,110,93,124,0.0078\n"
    "\"aloe staggered,fs=0,chunk=1,queue=mutex\",\"aloe staggered,fs=0,chunk=1,queue=atomic\",chunk,1,2,51,101,97,141,0.0043\n";

std::string error_of(const calibration_inputs& in) {
    std::vector<std::string> notes;
    try {
        calibrate(in, notes);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "";
}

TEST(Calibration, ReplaysATracedNoiseFile) {
    calibration_inputs in;
    in.noise_json = noise_with_events;
    in.iterations = 100;
    std::vector<std::string> notes;
    const machine_profile p = calibrate(in, notes);
    EXPECT_EQ(p.cores, 2);  // FWQ CPUs
    ASSERT_EQ(p.noise.size(), 1u);
    EXPECT_EQ(p.noise[0].type, noise_source::kind::trace);
    ASSERT_EQ(p.noise[0].traces.size(), 2u);
    EXPECT_DOUBLE_EQ(p.noise[0].traces[0].events_us[1].first, 300000);
    EXPECT_DOUBLE_EQ(p.noise[0].traces[0].events_us[1].second, 40);
    EXPECT_DOUBLE_EQ(p.noise[0].traces[1].measured_s, 0.5);
}

TEST(Calibration, PoissonFromTheSummariesAlone) {
    calibration_inputs in;
    in.noise_json = noise_without_events;
    in.iterations = 100;
    in.cores = 16;
    std::vector<std::string> notes;
    const machine_profile p = calibrate(in, notes);
    EXPECT_EQ(p.cores, 16);
    ASSERT_EQ(p.noise.size(), 1u);
    EXPECT_EQ(p.noise[0].type, noise_source::kind::poisson);
    EXPECT_DOUBLE_EQ(p.noise[0].rate_hz, 3);                // mean of 4 and 2
    EXPECT_DOUBLE_EQ(p.noise[0].length.mean_s, 40e-6);      // (2·30 + 1·60) / 3
    EXPECT_FALSE(notes.empty());
}

TEST(Calibration, OverheadAndWorkloadGiveQAndT1) {
    calibration_inputs in;
    in.noise_json = noise_without_events;
    in.overhead_csv = overhead;
    in.iterations = 10;
    in.workload_json = R"({"workload": "jacobi3d", "threads": 2, "schedule": "static",
        "step_s": [0.010, 0.011, 0.0105, 0.030, 0.0102, 0.0101, 0.0103, 0.0104, 0.0106, 0.0107, 0.0108]})";
    std::vector<std::string> notes;
    const machine_profile p = calibrate(in, notes);
    EXPECT_DOUBLE_EQ(p.dequeue_s, 0.0078e-6);
    EXPECT_DOUBLE_EQ(p.steal_s, 0.0078e-6 > 0.0043e-6 ? 0.0078e-6 : 0.0043e-6);
    EXPECT_DOUBLE_EQ(p.fork_join_s, 0.39e-6);
    // The mean step less the noise's share (3 events/s of 40 us: 0.012%) × 2 threads / 10.
    const double mean = (0.010 + 0.011 + 0.0105 + 0.030 + 0.0102 + 0.0101 + 0.0103 + 0.0104 + 0.0106 + 0.0107 + 0.0108) / 11;
    EXPECT_NEAR(p.iteration_s, mean * (1 - 3 * 40e-6) * 2 / 10, 1e-15);
    // The first rule: the quiet step (10th percentile: 0.0101 s of 11 sorted) as it is.
    in.t1_from = calibration_inputs::t1_rule::quiet;
    EXPECT_DOUBLE_EQ(calibrate(in, notes).iteration_s, 0.0101 * 2 / 10);
}

TEST(Calibration, UnevenCostsAreReplayed) {
    calibration_inputs in;
    in.noise_json = noise_without_events;
    in.costs_json = R"({"format": "aloe-iteration-costs/1", "loops": [
        {"site": "small", "iterations": 2, "cost_s": [1e-6, 1e-6]},
        {"site": "main", "iterations": 4, "cost_s": [1e-6, 2e-6, 3e-6, 4e-6]}]})";
    std::vector<std::string> notes;
    const machine_profile p = calibrate(in, notes);
    EXPECT_EQ(p.iterations, 4);  // the loop of most iterations
    EXPECT_EQ(p.costs.shape, iteration_costs_spec::kind::replay);
    EXPECT_DOUBLE_EQ(p.iteration_s, 2.5e-6);
    in.site = "small";
    const machine_profile q = calibrate(in, notes);
    EXPECT_EQ(q.iterations, 2);
    EXPECT_EQ(q.costs.shape, iteration_costs_spec::kind::uniform);
}

TEST(Calibration, BadInputsAreNamed) {
    calibration_inputs in;
    in.noise_json = "[]";
    in.iterations = 10;
    EXPECT_NE(error_of(in).find("--noise: no \"cpus\""), std::string::npos);
    in.noise_json = "not json";
    EXPECT_NE(error_of(in).find("--noise: not JSON"), std::string::npos);
    in.noise_json = R"({"cpus": [{"method": "ftq"}]})";
    EXPECT_NE(error_of(in).find("no FWQ"), std::string::npos);
    in.noise_json = noise_without_events;
    in.iterations.reset();
    EXPECT_NE(error_of(in).find("iteration count is unknown"), std::string::npos);
    in.iterations = 10;
    in.overhead_csv = "a,b\n1,2\n";
    EXPECT_NE(error_of(in).find("--overhead"), std::string::npos);
    in.overhead_csv.reset();
    in.workload_json = R"({"steps": 3})";
    EXPECT_NE(error_of(in).find("--workload: no step_s"), std::string::npos);
}

}  // namespace
}  // namespace aloe::sim

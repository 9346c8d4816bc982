// `aloe sim calibrate`: a machine profile from measurements taken on the machine.
//
//  noise      `aloe noise --json` (with --trace: the events themselves, replayed; without:
//             a Poisson source per core at the measured event rate, exponential lengths of
//             the measured mean delay); FWQ entries only (FTQ sees the same events blurred
//             over its slices)
//  overhead   the overhead benchmark's overhead.csv (bench/micro: aloe_overhead): q = the
//             per-chunk cost of `aloe dynamic,chunk=1`, the own-queue and steal cost from
//             staggered's row, fork-join from `aloe static`'s fork row
//  workload   a workload's JSON record (--json of any apps/ program): t1 from its quiet steps
//             (the 10th percentile of step_s × threads / iterations: noise only adds)
//  costs      the --record-costs file of a workload: the loop's iteration count and, where
//             iterations differ by more than 5% (coefficient of variation), their costs
//             replayed
//
// What was read and what was assumed (no overhead file, no workload) is kept verbatim in
// the profile's "measured" object, so a profile says where each number came from.
#pragma once

#include "sim/machine_profile.hpp"

#include <optional>
#include <string>
#include <vector>

namespace aloe::sim {

struct calibration_inputs {
    std::string noise_json;                  ///< required
    std::optional<std::string> overhead_csv;
    std::optional<std::string> workload_json;
    std::optional<std::string> costs_json;
    std::optional<std::string> site;         ///< which loop of the costs file (default: the largest)
    std::optional<std::int64_t> iterations;  ///< when no costs file says it
    std::optional<int> cores;                ///< default: the CPUs in the noise file
    double alpha_s = 1.5e-6, beta_s_per_byte = 1e-10;  ///< network (no measurement read here)
    std::string name, made_by;
    bool replay_trace = true;                ///< with events in the noise file: replay them
};

/// Builds the profile; `notes` receives one line per assumption. Throws
/// std::invalid_argument naming the input and what was wrong with it.
machine_profile calibrate(const calibration_inputs& in, std::vector<std::string>& notes);

}  // namespace aloe::sim

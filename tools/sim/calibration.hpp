// `aloe sim calibrate`: a machine profile from measurements taken on the machine.
//
//  noise      `aloe noise --json` (with --trace: the events themselves, replayed; without:
//             a Poisson source per core at the measured event rate, exponential lengths of
//             the measured mean delay); FWQ entries only (FTQ sees the same events blurred
//             over its slices)
//  overhead   the overhead benchmark's overhead.csv (bench/micro: aloe_overhead): q = the
//             per-chunk cost of `aloe dynamic,chunk=1`, the own-queue and steal cost from
//             staggered's row, fork-join from `aloe static`'s fork row
//  workload   a workload's JSON record (--json of any apps/ program): t1 so that the
//             simulated mean step equals the run's mean step: mean step × threads / iterations
//             × (1 − f), f the share of a core's time the profile's noise takes (a core busy
//             for W of work is busy W/(1 − f) when events take f of its time). The run's step
//             times vary more than the FWQ events explain (a memory-bound loop's own jitter,
//             delays under the event threshold); its 10th percentile (`t1_from = quiet`, the
//             first rule) left every prediction 10–18% short on the VM (sim-validation)
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
    enum class t1_rule { mean, quiet };
    t1_rule t1_from = t1_rule::mean;         ///< quiet: the 10th-percentile step, noise not taken off
};

/// Builds the profile; `notes` receives one line per assumption. Throws
/// std::invalid_argument naming the input and what was wrong with it.
machine_profile calibrate(const calibration_inputs& in, std::vector<std::string>& notes);

}  // namespace aloe::sim

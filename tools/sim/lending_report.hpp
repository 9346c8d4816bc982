// What `aloe sim --ranks-per-node` prints and writes for issue 19's model: per run the
// simulated time, efficiency against the ideal (the ranks' total work / all cores), the
// ratio to `off` (the run of the same case without lending), and the core-seconds moved.
#pragma once

#include "sim/lending_simulation.hpp"

#include <string>
#include <vector>

namespace aloe::sim {

struct lending_report {
    std::string table;        ///< markdown, one row per run
    std::string summary_csv;  ///< one row per run, every figure
    std::string steps_csv;    ///< one row per run and step
    std::string json;         ///< the runs as JSON
};

/// The ratio to `off` is left empty for a case that has no `off` run.
lending_report report_lending(const std::vector<lending_result>& runs, const std::string& profile_name, std::uint64_t seed);

/// The `off` run of the same case as `run` (nodes, cores, ranks, work, noise, regions),
/// or nullptr.
const lending_result* off_run_of(const std::vector<lending_result>& runs, const lending_result& run) noexcept;

}  // namespace aloe::sim

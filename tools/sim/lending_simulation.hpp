// The engine of issue 19's model: P nodes × c cores, R MPI ranks per node sharing its cores
// (node_ranks.hpp), each step every rank's k parallel regions, then one collective of all
// the job's ranks. A lending policy (lending_policy.hpp) moves the cores of ranks that wait
// to ranks that compute. Nodes are simulated in parallel on an aloe team between
// collectives; every draw comes from a stream keyed by (seed, node, core, purpose) and the
// reductions over nodes run in node order, so a seed gives the same bits on any number of
// threads (as simulation.hpp).
#pragma once

#include "sim/lending_policy.hpp"
#include "sim/machine_profile.hpp"

#include <aloe/schedule.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace aloe::sim {

struct lending_options {
    std::int64_t nodes = 1;
    int cores = 0;                        ///< per node; 0: the profile's
    int ranks = 1;                        ///< MPI ranks per node, cores/ranks each (the first ones one more)
    std::vector<double> rank_work{1.0};   ///< weights repeating across a node's ranks ("1:3": 1, 3, 1, 3, ...)
    int regions = 1;                      ///< k: parallel regions per step (the rank's loop cut into k slabs)
    std::int64_t iterations = 0;          ///< per node and step, shared by weight; 0: the profile's (weak scaling)
    double iteration_s = 0;               ///< 0: the profile's
    int steps = 100;
    std::uint64_t seed = 1;
    lending_policy policy;
    lending_latencies latencies;
    /// The ranks' loops: static (blocks), dynamic (a pool) or hybrid (both); borrowed cores
    /// join a running loop's pool only.
    aloe::schedule rank_schedule = aloe::schedule::dynamic(1);
    std::vector<double> rank_noise_p;     ///< chance per step of an injected event, repeating per rank (empty: none)
    double rank_noise_s = 3e-3;           ///< its length
    double rank_noise_delay_s = 100e-6;   ///< when it starts into the step (the workloads' default)
    int threads = 1;                      ///< simulation threads
    std::function<void(int)> progress;    ///< called now and then with the steps done
};

struct lending_result {
    std::string policy;                   ///< canonical text
    std::string rank_work;                ///< the weights as given, "1:3"
    std::string rank_noise;               ///< "" or the probabilities, "0:0.5"
    std::int64_t nodes = 0;
    int cores = 0, ranks = 0, regions = 0, steps = 0;
    std::vector<std::int64_t> rank_iterations;  ///< per rank of a node, per step
    double iteration_s = 0;
    double total_s = 0;                   ///< until the last collective ends
    double ideal_s = 0;                   ///< steps × the node's work / its cores: no overhead, noise or network
    double network_s = 0;                 ///< the collectives' own time
    std::vector<double> step_s;           ///< per step: collective end − the last one's
    double work_s = 0, expected_work_s = 0;          ///< iterations' own costs run, and the loops' total
    std::int64_t iterations_run = 0, expected_iterations = 0;
    double busy_s = 0;                    ///< core-seconds running iterations
    double moved_s = 0;                   ///< ... on cores their rank does not own (lent, sized)
    double schedule_s = 0;                ///< core-seconds claiming chunks
    std::int64_t claims = 0, lends = 0, sized_steps = 0, guard_trips = 0;
    std::uint64_t noise_events = 0;
    double wall_s = 0;
};

/// Runs one simulation. Throws std::invalid_argument for options the profile cannot serve.
lending_result simulate_lending(const machine_profile& profile, const lending_options& options);

/// "1:3" → {1, 3}: numbers in [lo, hi] separated by ':'. Throws std::invalid_argument
/// naming `what` and the bad part.
std::vector<double> parse_rank_pattern(std::string_view text, double lo, double hi, std::string_view what);
/// {1, 3} → "1:3".
std::string rank_pattern_text(const std::vector<double>& pattern);

}  // namespace aloe::sim

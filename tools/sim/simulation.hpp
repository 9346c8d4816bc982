// The engine: P nodes × c cores, bulk-synchronous steps. Each step every node runs its loop
// (node_loop) under its own noise, then the nodes meet in a collective (every `every`
// steps) and/or exchange halos with their grid neighbours; a node starts its next step when
// both let it. Nodes are independent within a step, so they are simulated in parallel on an
// aloe team; every draw comes from a stream keyed by (seed, node, core, purpose), so the
// result is the same bit for bit whatever the number of threads.
#pragma once

#include "sim/machine_profile.hpp"
#include "sim/node_loop.hpp"

#include <aloe/schedule.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace aloe::sim {

struct sim_options {
    std::int64_t nodes = 1;
    int cores = 0;                  ///< 0: the profile's
    std::int64_t iterations = 0;    ///< per node per step; 0: the profile's
    double iteration_s = 0;         ///< mean cost of one iteration; 0: the profile's
    int steps = 100;
    std::uint64_t seed = 1;
    aloe::schedule schedule;
    int threads = 1;                ///< simulation threads (aloe team size)
    std::int64_t watch_node = 0;    ///< whose loop times are kept per step (Kale & Gropp's node 0)
    /// Called now and then with the steps done (from the calling thread).
    std::function<void(int)> progress;
};

struct sim_result {
    std::string schedule;           ///< canonical text
    std::int64_t nodes = 0;
    int cores = 0;
    std::int64_t iterations = 0;
    double iteration_s = 0;
    int steps = 0;
    double total_s = 0;             ///< simulated time until the last node leaves the last step
    double ideal_s = 0;             ///< steps × work / cores: no overhead, no noise, no network
    double network_s = 0;           ///< collectives and halos along the critical path
    std::vector<double> step_s;     ///< per step: latest start of the next step − of this one
    std::vector<double> watch_loop_s;  ///< the watched node's loop time per step
    loop_tally tally;               ///< summed over nodes and steps
    double idle_s = 0;              ///< core-seconds waiting at the join (nodes × cores)
    double wait_s = 0;              ///< node-seconds waiting at collectives and halos
    double mean_fs = 0;             ///< static fraction run, averaged over node-steps
    double slack_spent_fraction = 0;///< node-steps whose fs slack raised
    std::uint64_t noise_events = 0; ///< events that delayed a busy core
    double wall_s = 0;              ///< what simulating took
};

/// Runs one simulation. Throws std::invalid_argument for options the profile cannot serve.
sim_result simulate(const machine_profile& profile, const sim_options& options);

}  // namespace aloe::sim

// A machine profile: what the simulator knows of a machine and of the loop it runs there.
// Written by `aloe sim calibrate` from measurements (aloe noise, the overhead benchmark, a
// workload run) or by hand for a machine described in a paper; read by `aloe sim`. JSON,
// format "aloe-sim-profile/1" (docs/sim.md lists every field). Reading is strict: an unknown
// key, a missing one, a value of the wrong type or outside its range is an error naming the
// field's path (`noise[1].rate_hz`), so a typo never silently falls back to a default.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace aloe::sim {

/// How long one noise event lasts.
struct length_distribution {
    enum class kind { fixed, exponential, lognormal, bimodal, pareto };
    kind shape = kind::fixed;
    double mean_s = 0;       ///< fixed, exponential, lognormal (mean), pareto (mean)
    double sigma = 0;        ///< lognormal: σ of the underlying normal
    double short_s = 0;      ///< bimodal: the two lengths and the chance of the long one
    double long_s = 0;
    double long_fraction = 0;
    double alpha = 0;        ///< pareto: shape (> 1, so the mean exists)
    double mean() const noexcept;
};

/// One source of noise. Each core of each node gets its own independent draws.
struct noise_source {
    enum class kind {
        poisson,    ///< events at `rate_hz` per core, lengths from `length`
        periodic,   ///< a daemon: `length` every `period_s`, phase per core drawn or aligned
        per_step,   ///< the workloads' injector: per node-step, with `probability`, one core
                    ///< loses `length` at `delay_s` into the step
        slow_core,  ///< core `core` runs at 1/`factor` of the speed on every node
        slow_node,  ///< a `fraction` of nodes (drawn by seed) run at 1/`factor`
        trace,      ///< replay of measured events (aloe noise --json --trace)
    };
    kind type = kind::poisson;
    double rate_hz = 0;
    length_distribution length;
    double period_s = 0;
    bool aligned = false;            ///< periodic: the same phase on every core of every node
    std::vector<int> cores;          ///< periodic/poisson: only these cores (empty: all)
    double probability = 0, delay_s = 0;
    int core = 0;
    double factor = 1, fraction = 0;
    /// trace: per measured CPU, its length of record (s) and its events (start, length) in
    /// microseconds, as aloe noise writes them (so a profile round-trips exactly).
    struct cpu_trace {
        double measured_s = 0;
        std::vector<std::pair<double, double>> events_us;
    };
    std::vector<cpu_trace> traces;
    bool trace_offsets = true;       ///< trace: each core starts at a drawn point of its trace
};

/// Where a loop's iterations cost what.
struct iteration_costs_spec {
    enum class kind { uniform, ramp, heavy_tail, replay };
    kind shape = kind::uniform;
    double ratio = 1;                 ///< ramp: the last iteration's cost / the first's
    double alpha = 2;                 ///< heavy_tail: Pareto shape of the per-iteration cost
    std::vector<double> replay_s;     ///< replay: recorded seconds per iteration
};

struct machine_profile {
    std::string name;                 ///< what machine this describes
    std::string made_by;              ///< the command (or paper) it came from
    int cores = 1;                    ///< cores per node the loop runs on

    // The loop each node runs every step: N iterations of t1 on average.
    std::int64_t iterations = 1;
    double iteration_s = 1e-6;
    iteration_costs_spec costs;

    // What scheduling costs.
    double dequeue_s = 0;             ///< q: one claim from a shared pool
    double dequeue_per_thread_s = 0;  ///< contention: q grows by this per thread beyond one
    double steal_s = 0;               ///< a claim from another core's queue (staggered, tasklets)
    double fork_join_s = 0;           ///< starting and joining the loop, per step
    double locality_penalty = 0;      ///< extra cost fraction of an iteration that left its core

    std::vector<noise_source> noise;

    // The network.
    enum class collective_kind { none, recursive_doubling, binomial };
    collective_kind collective = collective_kind::recursive_doubling;
    double alpha_s = 0;               ///< latency of one message
    double beta_s_per_byte = 0;       ///< inverse bandwidth
    std::int64_t collective_bytes = 8;
    int collective_every = 1;         ///< steps between collectives (1: every step)
    int halo_dims = 0;                ///< 0: no halo exchange; 1–3: neighbours in a 1–3-D grid
    std::int64_t halo_bytes = 0;

    std::string measured_json;        ///< calibration's record of what it read (kept verbatim)
};

/// Parses a profile; throws std::invalid_argument naming the field. `base_dir` resolves a
/// trace source's relative "file".
machine_profile parse_profile(const std::string& json_text, const std::string& base_dir = ".");
/// Reads and parses a file; errors name the file.
machine_profile read_profile(const std::string& path);
/// The canonical JSON of a profile (parse_profile(to_json(p)) == p).
std::string to_json(const machine_profile& p);
/// Checks ranges that involve several fields; throws std::invalid_argument.
void validate(const machine_profile& p);
/// The names a profile's enumerations print as.
const char* name_of(noise_source::kind k) noexcept;
const char* name_of(machine_profile::collective_kind k) noexcept;

/// The profile of the development VM committed in tools/sim/profiles/ (compiled in).
machine_profile builtin_profile();
const std::string& builtin_profile_text();

}  // namespace aloe::sim

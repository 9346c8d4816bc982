// One node running its loop for one step: the schedule executed as aloe executes it, on
// simulated cores that noise delays (node_noise.hpp).
//
//  blocks     static's split (libgomp's: thread t < n mod p gets one more), or weighted
//             shares, of the first floor(fs·N) iterations; run with no claim cost
//  cyclic     static,chunk=c: chunks dealt round robin
//  pool       then chunks of c from one shared counter (dynamic, hybrid, weighted): each
//             claim costs q(p) = q + q_thread·(p−1); the core that is free first takes the
//             next chunk (greedy list scheduling, exact)
//  guided     chunks of max(ceil(remaining/(k·p)), c) from the shared counter
//  staggered  own block: static part, then the rest as an own queue of chunks (cost q),
//             then steals from the neighbour with more left, distance 1, 2, … (cost
//             steal_s); a stolen chunk has left its core (locality penalty)
//  tasklets   the dynamic part cut into k tasklets (skewed largest first by r); a core takes
//             the tasklets last run by it first, then any in queue order; a tasklet run by
//             another core than last step pays the locality penalty
//
// A shared pool hands chunks in arrival order, which jitter below the simulator's grain
// reshuffles every step, so its chunks pay the penalty's expected value (1 − 1/p); the other
// schedules' placements are tracked exactly.
//
// Cost: blocks O(p); a pool of identical chunks (uniform costs) O(p·(noise events + p)) by
// advancing every core over the claims nobody can contest, then claim by claim for the last
// ~2p; other pools, guided, staggered with non-uniform costs and tasklets O(claims·p).
#pragma once

#include "sim/iteration_costs.hpp"
#include "sim/machine_profile.hpp"
#include "sim/node_noise.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace aloe::sim {

/// What one node runs in one step: the concrete schedule after any policy (adaptive's
/// choice, slack) decided.
struct step_plan {
    enum class kind { blocks, cyclic, pool, guided, staggered, tasklets };
    kind type = kind::blocks;
    double fs = 1;                   ///< static fraction (blocks: 1)
    std::int64_t chunk = 1;
    std::int64_t divisor = 1;        ///< guided
    std::int64_t tasklets = 0;       ///< tasklets: k
    double skew = 1;                 ///< tasklets: largest / smallest
    bool locality = true;            ///< tasklets: own tags first
    bool weighted = false;           ///< blocks by the node's weights instead of equal
};

/// Where the node's core-seconds went in one step.
struct loop_tally {
    double busy_s = 0;       ///< iterations (with speed factors and locality penalties)
    double schedule_s = 0;   ///< claims and steals
    std::int64_t claims = 0, steals = 0;
    void add(const loop_tally& o) noexcept {
        busy_s += o.busy_s;
        schedule_s += o.schedule_s;
        claims += o.claims;
        steals += o.steals;
    }
};

/// What a node keeps from step to step for its schedules.
struct node_memory {
    std::vector<double> weights;          ///< weighted blocks (1 each at first)
    std::vector<std::uint16_t> tags;      ///< tasklets: the core that last ran each one
    std::vector<double> static_s;         ///< last step: each core's static time ...
    std::vector<std::int64_t> static_its; ///< ... and iterations (for the weights)
};

class node_loop {
public:
    node_loop(const machine_profile& profile, const iteration_costs& costs, int cores);

    /// Runs `plan` from `start`; returns when the last core is done. `speed[c]` ≥ 1 slows
    /// core c. Adds to `tally`; updates `memory`.
    double run(const step_plan& plan, node_noise& noise, std::span<const double> speed, double start,
               node_memory& memory, loop_tally& tally) const;

private:
    /// Core c takes iterations [lo, hi) from a shared pool at its free time: q and the work.
    void claim_from_pool(int c, std::int64_t lo, std::int64_t hi, std::span<double> free, node_noise& noise,
                         std::span<const double> speed, loop_tally& tally) const;
    double run_pool(std::int64_t from, std::int64_t chunk, std::span<double> free, node_noise& noise,
                    std::span<const double> speed, loop_tally& tally) const;
    double run_guided(std::int64_t from, std::int64_t chunk, std::int64_t divisor, std::span<double> free,
                      node_noise& noise, std::span<const double> speed, loop_tally& tally) const;
    double run_staggered(std::span<const std::int64_t> lo, std::span<const std::int64_t> hi, std::int64_t chunk,
                         std::span<double> free, node_noise& noise, std::span<const double> speed,
                         loop_tally& tally) const;
    double run_tasklets(std::int64_t from, const step_plan& plan, std::span<double> free, node_noise& noise,
                        std::span<const double> speed, node_memory& memory, loop_tally& tally) const;

    const machine_profile& profile_;
    const iteration_costs& costs_;
    int p_;
    double q_;            // claim cost from a shared counter with p cores
    double pool_penalty_; // expected locality factor of a shared pool's chunk
};

/// libgomp's static split: [lo, hi) of `count` for thread t of p.
inline void block_of(std::int64_t t, std::int64_t count, std::int64_t p, std::int64_t& lo, std::int64_t& hi) noexcept {
    const std::int64_t q = count / p, r = count % p;
    lo = t * q + (t < r ? t : r);
    hi = lo + q + (t < r ? 1 : 0);
}

/// Splits `count` by `weights` (largest remainder, contiguous, in core order): bounds[0..p].
void weighted_bounds(std::int64_t count, std::span<const double> weights, std::span<std::int64_t> bounds);

}  // namespace aloe::sim

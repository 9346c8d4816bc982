// One node whose cores are shared by several MPI ranks (issue 19): each step every rank runs
// k parallel regions (loops) of its own work on the cores it holds, then waits in the
// job-wide collective; a lending policy (lending_policy.hpp) moves the cores of ranks that
// wait to ranks that still compute.
//
// Event-driven within a node-step, in time order (at equal times the other events before a
// core's, those in the order they were made, cores lowest first: a node's step depends only
// on its inputs and its own random streams):
//  region start   the rank's threads on the cores it may use then (its own, the ones sizing
//                 gave it, LeWI's lent pool, the daemon's borrowed ones it has heard of);
//                 each gets a block of the static part, then all take chunks from one pool
//  core free      a core finished its block or chunk: the next claim (q) and chunk, or the
//                 pool is empty and it leaves; the last one out ends the region, the next
//                 starts after the fork (or the rank arrives at the collective).
//                 Participant 0 (the rank's first own core) lets heard-of borrowed cores in
//                 before its claims, as aloe's loop door does
//  offer          a waiting rank lends its cores (when is the policy's rule)
//  rebalance      the daemon gives offered cores to the asking ranks (core_lending.hpp's
//                 order), each borrower hearing of it at its next poll
// Noise is the profile's, per physical core (node_noise): an event delays whichever rank's
// thread runs on the core then, and costs nothing while the core idles or is lent unused.
#pragma once

#include "mpi/lending_rule.hpp"
#include "mpi/slack_prediction.hpp"
#include "sim/iteration_costs.hpp"
#include "sim/lending_policy.hpp"
#include "sim/machine_profile.hpp"
#include "sim/node_noise.hpp"
#include "sim/random_stream.hpp"

#include <cstdint>
#include <vector>

namespace aloe::sim {

/// When an event happens, and its place among equals (the order it was made in).
struct node_ranks_event_order {
    double t;
    std::uint32_t seq;
};

/// What every node's ranks are: the same on every node.
struct rank_layout {
    int ranks = 1, cores = 1;
    std::vector<int> first_core, own_cores;       ///< the plain allocation, per rank
    std::vector<const iteration_costs*> costs;    ///< per rank: its loop of one step (all regions)
    int regions = 1;                              ///< k: the step's loop cut into k slabs
    double fs = 0;                                ///< the ranks' loops: static part, then a pool
    std::int64_t chunk = 1;
    std::vector<double> noise_p;                  ///< per rank: chance per step of an injected event
    double noise_s = 0, noise_delay_s = 0;        ///< its length, and when it starts into the step
    std::vector<int> spare;                       ///< per rank: cores it asks for (its spare workers)
    std::vector<double> core_speed;               ///< per core: ≥ 1 slows it (slow-core)
};

/// What the collective that ended the last step told every rank.
struct step_boundary {
    bool first = true;            ///< no step before
    double latest_arrival = 0;    ///< the last rank (job-wide) to reach the collective
    double completion = 0;        ///< when the collective ended
};

/// A node's sums over its steps.
struct ranks_tally {
    double busy_s = 0;            ///< core-seconds running iterations (noise, penalties included)
    double moved_s = 0;           ///< ... of which on cores the rank does not own
    double schedule_s = 0;        ///< claims
    double work_s = 0;            ///< the iterations' own costs (no noise, speed or penalty)
    std::int64_t iterations = 0, claims = 0;
    std::int64_t lends = 0;       ///< calls during which a rank lent (before the collective ended)
    std::int64_t sized_steps = 0; ///< steps run with sizing's split
    std::int64_t guard_trips = 0; ///< sized steps whose prediction missed
    void add(const ranks_tally& o) noexcept;
};

class node_ranks {
public:
    node_ranks(const rank_layout& layout, const machine_profile& profile, const lending_policy& policy,
               const lending_latencies& latencies, std::uint64_t seed, std::uint64_t node, double slow);

    /// Runs the node's next step from the collective that ended the last one.
    void run_step(const step_boundary& b);
    /// Counts the lends of the last step run (the next run_step does it otherwise).
    void finish(const step_boundary& b) noexcept { count_lends(b); }
    /// When this step's last rank reached the collective.
    double last_arrival() const noexcept { return last_arrival_; }
    /// When rank `r` reached the collective this step, and started it.
    double arrival(int r) const noexcept { return ranks_[static_cast<std::size_t>(r)].arrival; }
    double start(int r) const noexcept { return ranks_[static_cast<std::size_t>(r)].start; }
    /// Cores rank `r` held at this step's start (sizing's split, or the plain allocation).
    int held_cores(int r) const noexcept { return ranks_[static_cast<std::size_t>(r)].held; }
    const ranks_tally& tally() const noexcept { return tally_; }
    std::uint64_t noise_events() const noexcept { return noise_.events(); }

private:
    enum class event_kind : std::uint8_t { core_free, region_start, notice, offer, rebalance };
    struct event : node_ranks_event_order {
        event_kind kind;
        std::int32_t who;
    };
    struct core_state {
        int owner = 0;              // the plain allocation
        int holder = 0;             // this step's (sizing may give it to another rank)
        int lent_to = -1;           // the borrower it was lent to (-1: none)
        int runner = -1;            // whose thread runs on it now (-1: idle)
        int placed_for = 0;         // whose thread ran on it last (a change costs a move)
        bool guest = false;         // joined a running loop: no static block, full locality penalty
        double usable_from = 0;     // when its user (borrower, else holder) may start on it
        double free_at = 0;
        double slice_phase = 0;     // busy MPI: where the lender's and borrower's slices start
        std::int64_t block_lo = 0, block_hi = 0;  // its static block still to run
    };
    struct rank_state {
        double start = 0, arrival = 0;
        double arrival_last = 0;    // when it reached the last collective (its slack's start)
        double lend_at = never;     // when it offered its cores this step (never: it did not)
        int region = 0, members = 0, active = 0, held = 0;
        int planned = 0;            // threads the current region started with
        double region_start = 0;
        std::int64_t pool_next = 0, pool_end = 0;
        double region_end = 0, penalty = 0;
        bool in_region = false, door = false, arrived = false, offering = false, requesting = false;
        // Its waits at the step's call, kept as libaloe-mpi keeps a path's: the predictive rule
        // decides from their last ones (slack_predictor::recent, mpi/lending_rule.hpp).
        mpi::slack_predictor waits;
        // This step's work as sizing predicts it for the next step: the core-seconds its
        // loops held on the threads each region started with (threads × region time: what
        // a runtime measures of a loop; unlike busy time it includes the idle at each join,
        // which grows with k and the cores), plus what guests ran (not their idle: a guest
        // that came late to a loop says nothing of the rank's need).
        double held_step = 0;
        double work_last = 0;
        // Busy core-seconds (its iterations, noise included) this step and the two before:
        // whether its work is stable, which, unlike the time held, does not change with the
        // cores it had.
        double busy_step = 0, busy_last = 0, busy_before = 0;
    };

    int user(const core_state& c) const noexcept { return c.lent_to >= 0 ? c.lent_to : c.holder; }
    bool polite() const noexcept;
    void push(double t, event_kind k, int who);
    void begin_step(const step_boundary& b);
    void count_lends(const step_boundary& b) noexcept;
    void size_phase();
    void begin_region(int r, double t);
    void on_core_free(int c, double t);
    void open_door(int r, double t);
    void leave(int c, int r, double t);
    void end_region(int r);
    void arrive(int r, double t);
    /// The predictive rule's settings (mpi/lending_rule.hpp) with this run's latencies.
    mpi::lending_settings lending_rule() const;
    /// How long rank `s`'s wait at the step's call waits before it lends, from its last waits.
    mpi::lending_wait wait_before_lending(const rank_state& s) const;
    void offer(int r, double t);
    void rebalance(double t);
    double run_on(int c, int r, double t, double work_s);
    int next_region(int r, int from) const noexcept;
    void slab(int r, int j, std::int64_t& lo, std::int64_t& hi) const noexcept;

    const rank_layout& layout_;
    const machine_profile& profile_;
    lending_policy policy_;
    lending_latencies lat_;
    double slice_s_;
    node_noise noise_;
    random_stream draws_;           // polls, return delays, slices
    random_stream injections_;      // injected noise
    double slow_;
    std::vector<core_state> cores_;
    std::vector<rank_state> ranks_;
    std::vector<int> prev_holder_;  // sizing's split last step (a core that stays needs no move)
    std::vector<int> sized_;        // scratch: cores per rank
    std::vector<int> given_;        // scratch: the cores sizing moves
    std::vector<double> predicted_work_;
    std::vector<event> heap_;       // region starts, notices, offers, rebalances
    std::vector<double> core_due_;  // per core: its pending core-free event (never: none)
    std::uint32_t seq_ = 0;
    int arrived_ = 0;
    double last_arrival_ = 0;
    int measured_ = 0;              // steps whose work the ranks measured (sizing needs two)
    bool sized_now_ = false, missed_ = false;
    double sized_time_s_ = 0;       // sizing's predicted phase (busy seconds per core)
    ranks_tally tally_;
};

}  // namespace aloe::sim

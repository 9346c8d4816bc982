// What a node runs each step: a fixed schedule's plan, or the plan a policy chose, as aloe's
// policy chain chooses it (loop/policy_chain.hpp): adaptive's search first, then slack.
//
//  fixed     aloe::schedule → step_plan (static, static,chunk, dynamic, guided, hybrid,
//            staggered, weighted, tasklets)
//  weighted  block weights from each core's static speed last step, smoothed and clamped
//            as loop/schedules/weighted.cpp does (keep 0.5, within 8× of the mean)
//  adaptive  two static probes and one dynamic, Kale's model for fs (adapt's
//            model_dynamic_fraction), then adapt::candidate_race itself over the candidates
//            adaptive_policy races (static, staggered fs=0, the model's fs, guided k=2; not its coarse
//            chunk), the winner run as it raced; re-checks every 10th step. Not simulated:
//            the local/NLopt/sweep searches, the weighted replay candidate, the drift watch.
//  slack     Eq. 4.11 (adapt's slack_adjusted_fraction) with the slack the node waited at
//            the last collective (the thesis's last-value prediction, exact here since every
//            step has one call path), t1 the loop's mean cost, q the claim cost per chunk / c;
//            not while adaptive measures (loop_plan::measuring)
#pragma once

#include "sim/machine_profile.hpp"
#include "sim/node_loop.hpp"

#include <aloe/schedule.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace aloe::adapt {
class candidate_race;
}

namespace aloe::sim {

/// One schedule as the simulation runs it, shared by all nodes.
class schedule_model {
public:
    /// Throws std::invalid_argument for a schedule the simulator does not model.
    schedule_model(const aloe::schedule& s, const machine_profile& profile, int cores, std::int64_t iterations,
                   double iteration_s);
    const aloe::schedule& schedule() const noexcept { return schedule_; }
    bool adaptive() const noexcept { return adaptive_; }
    bool slack() const noexcept { return slack_; }
    bool weighted() const noexcept { return weighted_; }
    const step_plan& fixed_plan() const noexcept { return plan_; }

    /// The dynamic fraction Kale's model gives with these measures (Eq. 4.4, optimistic δ).
    double model_fs(double static_s, double dynamic_s) const;
    /// Eq. 4.11: `plan` with its fs raised by `slack_s` of predicted slack.
    step_plan spend_slack(step_plan plan, double slack_s) const;
    std::int64_t adaptive_chunk(double fs) const;
    std::int64_t iterations() const noexcept { return iterations_; }
    int cores() const noexcept { return cores_; }
    double noise_delay_s() const noexcept { return delay_s_; }

private:
    aloe::schedule schedule_;
    step_plan plan_;
    bool adaptive_ = false, slack_ = false, weighted_ = false;
    int cores_;
    std::int64_t iterations_;
    double iteration_s_, dequeue_s_, delay_s_;
};

/// A node's own state for its schedule's policies.
class node_policy {
public:
    node_policy();
    ~node_policy();
    node_policy(node_policy&&) noexcept;
    node_policy& operator=(node_policy&&) noexcept;

    /// The plan for this step; `predicted_slack_s` < 0: none known yet.
    step_plan choose(const schedule_model& m, double predicted_slack_s);
    /// After the step: the loop took `loop_s` (fork to join) on this node.
    void observe(const schedule_model& m, double loop_s, node_memory& memory);
    /// What the last choose() ran with (for statistics).
    double last_fs() const noexcept { return last_fs_; }
    bool last_spent_slack() const noexcept { return spent_slack_; }

private:
    enum class phase : std::uint8_t { probe_static, probe_dynamic, racing };
    phase phase_ = phase::probe_static;
    int probes_ = 0;
    double probe_static_s_ = 0, probe_dynamic_s_ = 0;
    std::unique_ptr<adapt::candidate_race> race_;
    std::vector<step_plan> candidates_;
    int running_ = -1;
    double last_fs_ = 1;
    bool spent_slack_ = false;
};

}  // namespace aloe::sim

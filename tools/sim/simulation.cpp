#include "sim/simulation.hpp"

#include "sim/iteration_costs.hpp"
#include "sim/network_model.hpp"
#include "sim/node_noise.hpp"
#include "sim/node_policy.hpp"
#include "sim/random_stream.hpp"

#include <aloe/parallel_for.hpp>
#include <aloe/team.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <stdexcept>

namespace aloe::sim {
namespace {

constexpr std::uint64_t step_purpose = 0xfe;  // the per-step injector's stream

struct node_state {
    node_state(const machine_profile& p, int cores, std::uint64_t seed, std::uint64_t node)
        : noise(p, cores, seed, node), step_draws(seed, node, 0, step_purpose) {}
    node_noise noise;
    node_memory memory;
    node_policy policy;
    random_stream step_draws;
    double slow = 1;             // the node's speed factor (slow-node)
    loop_tally tally;
    double idle_s = 0, fs_sum = 0;
    std::int64_t slack_steps = 0;
};

// What the serial part of a step reads and writes for every node, in flat arrays: the
// passes over 100,000 nodes stream through memory instead of chasing a pointer per node.
struct node_times {
    explicit node_times(std::size_t n) : start(n, 0.0), arrive(n, 0.0), leave(n, 0.0), slack(n, -1.0), wait(n, 0.0) {}
    std::vector<double> start;   // this step's start
    std::vector<double> arrive;  // when its loop ended (it reaches the collective/halo)
    std::vector<double> leave;   // when the collective let it go
    std::vector<double> slack;   // the last collective's wait: its next loop's prediction (-1: none yet)
    std::vector<double> wait;    // summed waits at collectives and halos
};

}  // namespace

sim_result simulate(const machine_profile& profile, const sim_options& o) {
    const auto t0 = std::chrono::steady_clock::now();
    if (o.nodes < 1) throw std::invalid_argument("--nodes: at least 1 node");
    if (o.steps < 1) throw std::invalid_argument("--steps: at least 1 step");
    const int cores = o.cores > 0 ? o.cores : profile.cores;
    if (cores > 4096) throw std::invalid_argument("--cores: at most 4096 per node");
    for (const noise_source& n : profile.noise) {
        for (int c : n.cores)
            if (c >= cores) throw std::invalid_argument("the profile's noise names core " + std::to_string(c) + ", but nodes have " + std::to_string(cores) + " cores");
        if (n.type == noise_source::kind::slow_core && n.core >= cores)
            throw std::invalid_argument("the profile's slow core " + std::to_string(n.core) + " is not below --cores " + std::to_string(cores));
    }
    // Weak scaling within the node: without --iterations, the loop keeps the profile's work
    // per core on another core count.
    const std::int64_t iterations =
        o.iterations > 0 ? o.iterations
                         : std::max<std::int64_t>(1, static_cast<std::int64_t>(std::llround(static_cast<double>(profile.iterations) * cores / profile.cores)));
    const double iteration_s = o.iteration_s > 0 ? o.iteration_s : profile.iteration_s;
    const iteration_costs costs(profile.costs, iterations, iteration_s, o.seed);
    const node_loop loop(profile, costs, cores);
    const schedule_model model(o.schedule, profile, cores, iterations, costs.mean());

    sim_result r;
    r.schedule = o.schedule.to_string();
    r.nodes = o.nodes;
    r.cores = cores;
    r.iterations = iterations;
    r.iteration_s = costs.mean();
    r.steps = o.steps;
    r.ideal_s = o.steps * costs.total() / cores;

    // Per-core speed: the slow core everywhere, slow nodes drawn by seed.
    std::vector<double> core_speed(static_cast<std::size_t>(cores), 1.0);
    double slow_fraction = 0, slow_factor = 1;
    const noise_source* per_step = nullptr;
    for (const noise_source& n : profile.noise) {
        if (n.type == noise_source::kind::slow_core) core_speed[static_cast<std::size_t>(n.core)] *= n.factor;
        if (n.type == noise_source::kind::slow_node) slow_fraction = n.fraction, slow_factor = n.factor;
        if (n.type == noise_source::kind::per_step) per_step = &n;
    }

    // Built in node order, so that node after node lies in memory as the steps visit them.
    std::vector<node_state> nodes;
    nodes.reserve(static_cast<std::size_t>(o.nodes));
    for (std::int64_t i = 0; i < o.nodes; ++i) {
        node_state& s = nodes.emplace_back(profile, cores, o.seed, static_cast<std::uint64_t>(i));
        random_stream pick(o.seed, static_cast<std::uint64_t>(i), 0, slow_node_purpose);
        if (slow_fraction > 0 && pick.uniform() < slow_fraction) s.slow = slow_factor;
    }
    node_times times(static_cast<std::size_t>(o.nodes));
    const int threads = std::max(1, std::min<int>(o.threads, static_cast<int>(std::min<std::int64_t>(o.nodes, 4096))));
    std::optional<aloe::team> team;
    if (threads > 1) team.emplace(threads);
    const auto each_node = [&](auto&& body) {
        if (!team) {
            for (std::int64_t i = 0; i < o.nodes; ++i) body(i);
            return;
        }
        aloe::parallel_for(*team, 0, o.nodes, aloe::schedule::static_blocks(), [&](aloe::subrange range, int) {
            for (std::int64_t i : range) body(i);
        });
    };

    const double collective_s = collective_seconds(profile, o.nodes);
    const double halo_s = halo_seconds(profile);
    const std::int64_t watch = std::clamp<std::int64_t>(o.watch_node, 0, o.nodes - 1);
    r.step_s.reserve(static_cast<std::size_t>(o.steps));
    r.watch_loop_s.reserve(static_cast<std::size_t>(o.steps));
    double last_latest = 0;

    const auto run_node = [&](std::int64_t i) {
        const auto n = static_cast<std::size_t>(i);
        node_state& s = nodes[n];
        if (n + 1 < nodes.size()) nodes[n + 1].noise.prefetch();  // its lines arrive while this node runs
        thread_local std::vector<double> speed;
        speed.assign(core_speed.begin(), core_speed.end());
        for (double& v : speed) v *= s.slow;
        if (per_step != nullptr && s.step_draws.uniform() < per_step->probability) {
            const auto c = static_cast<int>(s.step_draws.below(static_cast<std::uint64_t>(cores)));
            s.noise.inject(c, times.start[n] + per_step->delay_s, draw_length(per_step->length, s.step_draws));
        }
        const step_plan plan = s.policy.choose(model, times.slack[n]);
        loop_tally t;
        times.arrive[n] = loop.run(plan, s.noise, speed, times.start[n], s.memory, t);
        const double loop_s = times.arrive[n] - times.start[n];
        s.idle_s += loop_s * cores - t.busy_s - t.schedule_s;
        s.tally.add(t);
        s.fs_sum += s.policy.last_fs();
        if (s.policy.last_spent_slack()) ++s.slack_steps;
        s.policy.observe(model, loop_s, s.memory);
    };

    for (int step = 0; step < o.steps; ++step) {
        each_node(run_node);
        const auto w = static_cast<std::size_t>(watch);
        r.watch_loop_s.push_back(times.arrive[w] - times.start[w]);
        // The collective: everyone leaves when the last has arrived and the rounds are done;
        // what a node waited is its slack, the last-value prediction for its next loop.
        const bool collective = profile.collective != machine_profile::collective_kind::none &&
                                (step + 1) % profile.collective_every == 0;
        double latest_arrival = 0;
        for (double a : times.arrive) latest_arrival = std::max(latest_arrival, a);
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            if (collective) {
                times.slack[i] = (latest_arrival - times.arrive[i]) / profile.collective_every;
                times.leave[i] = latest_arrival + collective_s;
            } else {
                times.leave[i] = times.arrive[i];
            }
        }
        // The halo: a node starts when it and its grid neighbours are through.
        std::int64_t nb[6];
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            double t = times.leave[i];
            if (profile.halo_dims > 0) {
                const int k = grid_neighbours(static_cast<std::int64_t>(i), o.nodes, profile.halo_dims, nb);
                for (int j = 0; j < k; ++j) t = std::max(t, times.leave[static_cast<std::size_t>(nb[j])]);
                if (k > 0) t += halo_s;  // a node alone has nobody to exchange with
            }
            times.wait[i] += t - times.arrive[i];
            times.start[i] = t;
        }
        double latest = 0;
        for (double t : times.start) latest = std::max(latest, t);
        r.step_s.push_back(latest - last_latest);
        last_latest = latest;
        if (o.progress && (step + 1) % 16 == 0) o.progress(step + 1);
    }
    r.total_s = last_latest;
    r.network_s = collective_s * (o.steps / profile.collective_every) + (o.nodes > 1 ? halo_s * o.steps : 0.0);
    double fs_sum = 0;
    std::int64_t slack_steps = 0;
    for (const node_state& s : nodes) {
        r.tally.add(s.tally);
        r.idle_s += s.idle_s;
        fs_sum += s.fs_sum;
        slack_steps += s.slack_steps;
        r.noise_events += s.noise.events();
    }
    for (double w : times.wait) r.wait_s += w;
    const double node_steps = static_cast<double>(o.nodes) * o.steps;
    r.mean_fs = fs_sum / node_steps;
    r.slack_spent_fraction = static_cast<double>(slack_steps) / node_steps;
    r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
}

}  // namespace aloe::sim

#include "sim/lending_simulation.hpp"
#include "sim/report_text.hpp"

#include "sim/iteration_costs.hpp"
#include "sim/network_model.hpp"
#include "sim/node_ranks.hpp"
#include "sim/random_stream.hpp"

#include <aloe/parallel_for.hpp>
#include <aloe/team.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <stdexcept>

namespace aloe::sim {

std::vector<double> parse_rank_pattern(std::string_view text, double lo, double hi, std::string_view what) {
    std::vector<double> out;
    std::size_t from = 0;
    while (true) {
        const std::size_t at = text.find(':', from);
        const std::string_view part =
            text.substr(from, at == std::string_view::npos ? std::string_view::npos : at - from);
        double x = 0;
        const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), x);
        if (part.empty() || ec != std::errc() || end != part.data() + part.size() || !std::isfinite(x) || x < lo || x > hi)
            throw std::invalid_argument(std::string(what) + " '" + std::string(text) + "': '" + std::string(part) +
                                        "' is not a number in [" + number_text(lo) + ", " + number_text(hi) + "]");
        out.push_back(x);
        if (at == std::string_view::npos) return out;
        from = at + 1;
    }
}

std::string rank_pattern_text(const std::vector<double>& pattern) {
    std::string s;
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        if (i > 0) s += ':';
        s += number_text(pattern[i]);
    }
    return s;
}

lending_result simulate_lending(const machine_profile& profile, const lending_options& o) {
    const auto t0 = std::chrono::steady_clock::now();
    if (o.nodes < 1) throw std::invalid_argument("--nodes: at least 1 node");
    if (o.steps < 1) throw std::invalid_argument("--steps: at least 1 step");
    if (o.regions < 1) throw std::invalid_argument("--regions-per-step: at least 1");
    const int cores = o.cores > 0 ? o.cores : profile.cores;
    if (cores > 4096) throw std::invalid_argument("--cores: at most 4096 per node");
    if (o.ranks < 1 || o.ranks > cores)
        throw std::invalid_argument("--ranks-per-node " + std::to_string(o.ranks) + ": between 1 and the node's " +
                                    std::to_string(cores) + " cores (a rank needs a core)");
    if (o.rank_work.empty()) throw std::invalid_argument("--rank-work: no weights");
    for (const noise_source& n : profile.noise) {
        for (int c : n.cores)
            if (c >= cores)
                throw std::invalid_argument("the profile's noise names core " + std::to_string(c) + ", but nodes have " +
                                            std::to_string(cores) + " cores");
        if (n.type == noise_source::kind::slow_core && n.core >= cores)
            throw std::invalid_argument("the profile's slow core " + std::to_string(n.core) + " is not below --cores " +
                                        std::to_string(cores));
    }
    if (profile.collective_every != 1)
        throw std::invalid_argument("the profile's collective comes every " + std::to_string(profile.collective_every) +
                                    " steps; ranks that lend wait in one every step (network.every must be 1)");
    double fs = 1;
    std::int64_t chunk = 1;
    switch (o.rank_schedule.kind()) {
        case schedule_kind::static_block:
            if (o.rank_schedule.chunk() > 0)
                throw std::invalid_argument("--rank-schedule: static,chunk is not modelled (static, dynamic or hybrid)");
            fs = 1;
            break;
        case schedule_kind::dynamic: fs = 0; chunk = std::max<std::int64_t>(o.rank_schedule.chunk(), 1); break;
        case schedule_kind::hybrid:
            fs = o.rank_schedule.static_fraction();
            chunk = std::max<std::int64_t>(o.rank_schedule.chunk(), 1);
            break;
        default:
            throw std::invalid_argument("--rank-schedule " + o.rank_schedule.to_string() +
                                        ": the ranks' loops are static, dynamic or hybrid");
    }

    // The node's loop (weak scaling as in simulate()), shared out by the ranks' weights.
    const double scaled = static_cast<double>(profile.iterations) * cores / profile.cores;
    const std::int64_t iterations =
        o.iterations > 0 ? o.iterations : std::max<std::int64_t>(1, static_cast<std::int64_t>(std::llround(scaled)));
    const double iteration_s = o.iteration_s > 0 ? o.iteration_s : profile.iteration_s;
    rank_layout layout;
    layout.ranks = o.ranks;
    layout.cores = cores;
    layout.regions = o.regions;
    layout.fs = fs;
    layout.chunk = chunk;
    std::vector<double> weight(static_cast<std::size_t>(o.ranks));
    double weights = 0;
    for (std::size_t r = 0; r < weight.size(); ++r) weights += weight[r] = o.rank_work[r % o.rank_work.size()];
    std::vector<std::unique_ptr<iteration_costs>> costs;
    lending_result res;
    for (int r = 0; r < o.ranks; ++r) {
        const auto ri = static_cast<std::size_t>(r);
        const int own = cores / o.ranks + (r < cores % o.ranks ? 1 : 0);
        layout.first_core.push_back(r == 0 ? 0 : layout.first_core.back() + layout.own_cores.back());
        layout.own_cores.push_back(own);
        // The spare workers a rank keeps (runtime/borrowed_cores.hpp): the other ranks' count
        // times its own, at most the node's other cores; what it asks the daemon for.
        layout.spare.push_back(std::min((o.ranks - 1) * own, cores - own));
        const auto n = static_cast<std::int64_t>(std::llround(static_cast<double>(iterations) * weight[ri] / weights));
        costs.push_back(std::make_unique<iteration_costs>(profile.costs, n, iteration_s, o.seed));
        layout.costs.push_back(costs.back().get());
        res.rank_iterations.push_back(n);
        layout.noise_p.push_back(o.rank_noise_p.empty() ? 0.0 : o.rank_noise_p[ri % o.rank_noise_p.size()]);
    }
    layout.noise_s = o.rank_noise_s;
    layout.noise_delay_s = o.rank_noise_delay_s;
    layout.core_speed.assign(static_cast<std::size_t>(cores), 1.0);
    double slow_fraction = 0, slow_factor = 1;
    for (const noise_source& n : profile.noise) {
        if (n.type == noise_source::kind::slow_core) layout.core_speed[static_cast<std::size_t>(n.core)] *= n.factor;
        if (n.type == noise_source::kind::slow_node) slow_fraction = n.fraction, slow_factor = n.factor;
    }

    std::vector<node_ranks> nodes;
    nodes.reserve(static_cast<std::size_t>(o.nodes));
    for (std::int64_t i = 0; i < o.nodes; ++i) {
        random_stream pick(o.seed, static_cast<std::uint64_t>(i), 0, slow_node_purpose);
        const double slow = slow_fraction > 0 && pick.uniform() < slow_fraction ? slow_factor : 1.0;
        nodes.emplace_back(layout, profile, o.policy, o.latencies, o.seed, static_cast<std::uint64_t>(i), slow);
    }
    const int threads = std::max(1, std::min<int>(o.threads, static_cast<int>(std::min<std::int64_t>(o.nodes, 4096))));
    std::optional<aloe::team> team;
    if (threads > 1) team.emplace(threads);

    res.policy = o.policy.to_string();
    res.rank_work = rank_pattern_text(o.rank_work);
    res.rank_noise = o.rank_noise_p.empty() ? "" : rank_pattern_text(o.rank_noise_p);
    res.nodes = o.nodes;
    res.cores = cores;
    res.ranks = o.ranks;
    res.regions = o.regions;
    res.steps = o.steps;
    res.iteration_s = iteration_s;
    double node_work = 0;
    for (const auto& c : costs) {
        node_work += c->total();
        res.expected_iterations += c->size();
    }
    res.expected_work_s = node_work * static_cast<double>(o.nodes) * o.steps;
    res.expected_iterations *= o.nodes * o.steps;
    res.ideal_s = o.steps * node_work / cores;
    // One collective of all the job's ranks: its tree's rounds over P·R ranks.
    const double collective_s = collective_seconds(profile, o.nodes * o.ranks);
    res.network_s = collective_s * o.steps;
    res.step_s.reserve(static_cast<std::size_t>(o.steps));

    step_boundary b;
    for (int step = 0; step < o.steps; ++step) {
        const auto run = [&](std::int64_t i) { nodes[static_cast<std::size_t>(i)].run_step(b); };
        if (team) {
            aloe::parallel_for(*team, 0, o.nodes, aloe::schedule::static_blocks(), [&](aloe::subrange range, int) {
                for (std::int64_t i : range) run(i);
            });
        } else {
            for (std::int64_t i = 0; i < o.nodes; ++i) run(i);
        }
        double latest = 0;
        for (const node_ranks& n : nodes) latest = std::max(latest, n.last_arrival());
        const double completion = latest + collective_s;
        res.step_s.push_back(completion - b.completion);
        b.first = false;
        b.latest_arrival = latest;
        b.completion = completion;
        if (o.progress && (step + 1) % 16 == 0) o.progress(step + 1);
    }
    res.total_s = b.completion;
    ranks_tally all;
    for (node_ranks& n : nodes) {
        n.finish(b);
        all.add(n.tally());
        res.noise_events += n.noise_events();
    }
    res.work_s = all.work_s;
    res.iterations_run = all.iterations;
    res.busy_s = all.busy_s;
    res.moved_s = all.moved_s;
    res.schedule_s = all.schedule_s;
    res.claims = all.claims;
    res.lends = all.lends;
    res.sized_steps = all.sized_steps;
    res.guard_trips = all.guard_trips;
    res.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return res;
}

}  // namespace aloe::sim

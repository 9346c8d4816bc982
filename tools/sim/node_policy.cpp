#include "sim/node_policy.hpp"

#include "adapt/adaptive_policy.hpp"
#include "adapt/candidate_race.hpp"
#include "adapt/dynamic_fraction_model.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace aloe::sim {
namespace {

constexpr double fs_step = 0.05;  // adaptive rounds the model's fs to this (adaptive_policy.cpp)

step_plan staggered_plan(double fs, std::int64_t chunk) {
    step_plan p;
    p.type = step_plan::kind::staggered;
    p.fs = fs;
    p.chunk = chunk;
    return p;
}

// The longest mean event the profile's sources cause: what adaptive's noise probe sees as δ.
double profile_delay(const machine_profile& profile) {
    double d = 0;
    for (const noise_source& n : profile.noise) {
        switch (n.type) {
            case noise_source::kind::poisson:
            case noise_source::kind::periodic:
            case noise_source::kind::per_step: d = std::max(d, n.length.mean()); break;
            case noise_source::kind::trace:
                for (const auto& t : n.traces) {
                    double sum = 0;
                    for (const auto& e : t.events_us) sum += e.second * 1e-6;
                    if (!t.events_us.empty()) d = std::max(d, sum / static_cast<double>(t.events_us.size()));
                }
                break;
            default: break;
        }
    }
    return d;
}

}  // namespace

schedule_model::schedule_model(const aloe::schedule& s, const machine_profile& profile, int cores,
                               std::int64_t iterations, double iteration_s)
    : schedule_(s), cores_(cores), iterations_(iterations), iteration_s_(iteration_s),
      dequeue_s_(profile.dequeue_s + profile.dequeue_per_thread_s * (cores - 1)), delay_s_(profile_delay(profile)) {
    const std::int64_t chunk = std::max<std::int64_t>(s.chunk(), 1);
    switch (s.kind()) {
        case schedule_kind::static_block:
            plan_.type = s.chunk() > 0 ? step_plan::kind::cyclic : step_plan::kind::blocks;
            plan_.chunk = chunk;
            break;
        case schedule_kind::dynamic:
            plan_.type = step_plan::kind::pool;
            plan_.fs = 0;
            plan_.chunk = chunk;
            break;
        case schedule_kind::guided:
            plan_.type = step_plan::kind::guided;
            plan_.fs = 0;
            plan_.chunk = chunk;
            plan_.divisor = s.divisor();
            break;
        case schedule_kind::hybrid:
            plan_.type = step_plan::kind::pool;
            plan_.fs = s.static_fraction();
            plan_.chunk = chunk;
            break;
        case schedule_kind::staggered: plan_ = staggered_plan(s.static_fraction(), chunk); break;
        case schedule_kind::weighted:
            plan_.type = step_plan::kind::pool;
            plan_.fs = s.static_fraction();
            plan_.chunk = chunk;
            plan_.weighted = true;
            weighted_ = true;
            break;
        case schedule_kind::tasklets:
            plan_.type = step_plan::kind::tasklets;
            plan_.fs = s.static_fraction();
            plan_.tasklets = s.tasklet_count();
            plan_.skew = s.skew();
            plan_.locality = s.locality();
            break;
        case schedule_kind::adaptive:
            adaptive_ = true;
            if (s.search() != adaptive_search::race)
                throw std::invalid_argument("schedule '" + s.to_string() +
                                            "': the simulator models adaptive's default search (race) only");
            break;
        case schedule_kind::tasks:
            throw std::invalid_argument("schedule '" + s.to_string() +
                                        "': the simulator does not model work-stealing tasks (loops' schedules only)");
    }
    // As under libaloe-mpi: adaptive spends slack unless told not to; fixed schedules when asked.
    slack_ = s.slack() == slack_mode::on || (adaptive_ && s.slack() == slack_mode::automatic);
}

double schedule_model::model_fs(double static_s, double dynamic_s) const {
    adapt::loop_measures m;
    m.threads = cores_;
    m.iterations = static_cast<std::uint64_t>(iterations_);
    m.iteration_s = static_s * cores_ / static_cast<double>(iterations_);
    m.dequeue_s = dequeue_s_;
    m.noise_s = delay_s_;
    m.app_imbalance_s = std::max(0.0, static_s - dynamic_s);
    const double fd = adapt::model_dynamic_fraction(m, adapt::delay_combination::optimistic).dynamic_fraction;
    return std::clamp(std::round((1 - fd) / fs_step) * fs_step, 0.1, 0.9);
}

std::int64_t schedule_model::adaptive_chunk(double fs) const {
    if (schedule_.chunk() > 0) return schedule_.chunk();
    const auto dynamic = static_cast<std::uint64_t>(std::llround((1 - fs) * static_cast<double>(iterations_)));
    return adapt::adaptive_policy::chunk_for(dequeue_s_, iteration_s_, 0.05, dynamic, cores_);
}

step_plan schedule_model::spend_slack(step_plan plan, double slack_s) const {
    const bool has_dynamic = plan.type == step_plan::kind::pool || plan.type == step_plan::kind::staggered ||
                             plan.type == step_plan::kind::tasklets;
    if (!has_dynamic || !(slack_s > 0) || plan.fs >= 1) return plan;
    adapt::loop_measures m;
    m.threads = cores_;
    m.iterations = static_cast<std::uint64_t>(iterations_);
    m.iteration_s = iteration_s_;
    m.dequeue_s = dequeue_s_ / static_cast<double>(std::max<std::int64_t>(plan.chunk, 1));
    const double fd = adapt::slack_adjusted_fraction(m, 1 - plan.fs, slack_s);
    plan.fs = std::clamp(1 - fd, 0.0, 1.0);
    return plan;
}

node_policy::node_policy() = default;
node_policy::~node_policy() = default;
node_policy::node_policy(node_policy&&) noexcept = default;
node_policy& node_policy::operator=(node_policy&&) noexcept = default;

step_plan node_policy::choose(const schedule_model& m, double predicted_slack_s) {
    step_plan plan = m.fixed_plan();
    bool measuring = false;
    if (m.adaptive()) {
        switch (phase_) {
            case phase::probe_static: plan = step_plan{}; measuring = true; break;
            case phase::probe_dynamic: plan = staggered_plan(0, m.adaptive_chunk(0)); measuring = true; break;
            case phase::racing:
                running_ = race_->to_run();
                if (running_ < 0) running_ = race_->winner();
                plan = candidates_[static_cast<std::size_t>(running_)];
                measuring = !race_->decided();
                break;
        }
    }
    spent_slack_ = false;
    if (m.slack() && !measuring && predicted_slack_s > 0) {
        const double before = plan.fs;
        plan = m.spend_slack(plan, predicted_slack_s);
        spent_slack_ = plan.fs != before;
    }
    last_fs_ = plan.type == step_plan::kind::blocks || plan.type == step_plan::kind::cyclic ? 1.0 : plan.fs;
    return plan;
}

void node_policy::observe(const schedule_model& m, double loop_s, node_memory& memory) {
    if (m.weighted()) {
        // speed = static iterations / static time; weights follow it (weighted.cpp's update).
        const std::size_t p = memory.static_s.size();
        std::vector<double> speed(p, 0.0);
        for (std::size_t t = 0; t < p; ++t)
            if (memory.static_s[t] > 0 && memory.static_its[t] > 0) speed[t] = static_cast<double>(memory.static_its[t]) / memory.static_s[t];
        const double mean = std::accumulate(speed.begin(), speed.end(), 0.0) / static_cast<double>(p);
        if (mean > 0)
            for (std::size_t t = 0; t < p; ++t)
                if (speed[t] > 0) memory.weights[t] = std::clamp(0.5 * memory.weights[t] + 0.5 * speed[t] / mean, 1.0 / 8, 8.0);
    }
    if (!m.adaptive()) return;
    const double per_it = loop_s / static_cast<double>(m.iterations());
    switch (phase_) {
        case phase::probe_static:
            probe_static_s_ = probes_ == 0 ? loop_s : std::min(probe_static_s_, loop_s);
            if (++probes_ == 2) phase_ = phase::probe_dynamic;
            break;
        case phase::probe_dynamic: {
            probe_dynamic_s_ = loop_s;
            const double fs = m.model_fs(probe_static_s_, probe_dynamic_s_);
            const std::int64_t c = m.adaptive_chunk(0);
            const auto n = static_cast<double>(m.iterations());
            const bool lost = probe_static_s_ > 1.1 * probe_dynamic_s_;
            std::vector<std::string> names;
            candidates_.clear();
            if (!lost) {
                candidates_.push_back(step_plan{});
                names.push_back("static");
            }
            candidates_.push_back(staggered_plan(0, c));
            names.push_back("staggered,fs=0");
            candidates_.push_back(staggered_plan(fs, c));
            names.push_back("staggered,fs=model");
            step_plan guided;
            guided.type = step_plan::kind::guided;
            guided.fs = 0;
            guided.chunk = c;
            guided.divisor = 2;
            candidates_.push_back(guided);
            names.push_back("guided,divisor=2");
            race_ = std::make_unique<adapt::candidate_race>(std::move(names), adapt::race_options{18, 10});
            if (!lost) race_->observe(0, probe_static_s_ / n);
            race_->observe(lost ? 0 : 1, probe_dynamic_s_ / n);
            phase_ = phase::racing;
            break;
        }
        case phase::racing:
            if (running_ >= 0) race_->observe(running_, per_it);
            break;
    }
}

}  // namespace aloe::sim

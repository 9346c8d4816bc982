// stencil1d-tasks: HPX's 1d_stencil_4 (reference 002, §3.1) with the repartitioning of
// 1d_stencil_4_repart: heat on a ring of --nx points, f(0, i) = i, next[i] = mid + k dt / dx^2
// (left - 2 mid + right) with HPX's k = 0.5, dt = 1, dx = 1, cut into partitions of --partition
// points (the grain), one task per partition per timestep, each waiting only for the three
// partitions it reads (epochs.hpp: how each runtime expresses that).
//
// One harness timestep is one *epoch* of --epoch-steps timesteps (HPX's --nt, one tuning trial
// of the repart example), with no barrier inside; between epochs the ring may be repartitioned:
//   --grain fixed            every epoch at --partition (or --np partitions)
//   --grain list:P1,P2,...   epoch e at P[e mod the list's length] (repartitioning, reproducibly)
//   --grain auto[:OPTIONS]   an aloe::knob picks each epoch's size from the task counters (or
//                            the wall time), over the divisors of nx in [--grain-min, nx /
//                            threads] (a geometric range when fewer than four divide nx);
//                            OPTIONS: an objective (overall, idle-rate, …) or the knob's own
//                            option string (knob.hpp). Other runtimes than aloe have no task
//                            counters: objective=time only (the default there).
// The record has one entry per epoch (warmup included): its partition size and count, the
// repartitioning's time, the epoch's wall time, aloe runs' task counter deltas
// (/threads{locality#0/total}/*) and, tuned, the knob's verdict.
//
// Every point's update is heat() of its three old values whatever the partitioning (ring.hpp),
// so the ring is the serial run's bit for bit. Checksum: the sum of u^2 in point order.
// Checks: the last timestep against a serial step from the state before it (both buffers hold
// them); --check full: every timestep again serially, at one partition, point by point.
#include "common/harness.hpp"
#include "common/json_writer.hpp"
#include "common/result_check.hpp"
#include "epochs.hpp"
#include "ring.hpp"

#include <aloe/error.hpp>
#include <aloe/knob.hpp>
#include <aloe/stats.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace {

using aloe_apps::usage_error;
using aloe_apps::stencil::partitioning;

constexpr std::string_view counter_prefix = "/threads{locality#0/total}/";

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// What --grain asks for: each epoch's partition size.
class grain_control {
public:
    grain_control(const std::string& spec, std::int64_t nx, std::int64_t start, std::int64_t lo, int threads,
                  aloe_apps::runtime_kind runtime)
        : fixed_(start) {
        if (spec == "fixed") return;
        if (spec.starts_with("list:")) {
            for (std::size_t at = 5; at <= spec.size();) {
                const std::size_t comma = std::min(spec.find(',', at), spec.size());
                const std::string word = spec.substr(at, comma - at);
                std::size_t used = 0;
                std::int64_t v = 0;
                try {
                    v = std::stoll(word, &used);
                } catch (const std::exception&) {
                    used = 0;
                }
                if (used != word.size() || word.empty() || v < 1 || v > nx)
                    throw usage_error("flag --grain: '" + word + "' is not a partition size in [1, nx]");
                list_.push_back(v);
                at = comma + 1;
            }
            return;
        }
        if (spec != "auto" && !spec.starts_with("auto:"))
            throw usage_error("flag --grain: expected fixed, list:P1,P2,... or auto[:OPTIONS], not '" + spec + "'");
        std::string options = spec == "auto" ? "" : spec.substr(5);
        if (!options.empty() && options.find('=') == std::string::npos) options = "objective=" + options;
        const bool aloe = runtime == aloe_apps::runtime_kind::aloe;
        const std::size_t objective = options.find("objective=");
        if (objective == std::string::npos) {
            if (!aloe) options += (options.empty() ? "" : ",") + std::string("objective=time");
        } else if (!aloe && !options.substr(objective).starts_with("objective=time")) {
            throw usage_error("flag --grain: " + std::string(to_string(runtime)) +
                              " has no task counters; its knob can only use objective=time");
        }
        const std::int64_t hi = std::max<std::int64_t>(1, nx / threads);
        const std::int64_t low = std::min(std::max<std::int64_t>(1, lo), hi);
        std::vector<std::int64_t> divisors;
        for (std::int64_t d = 1; d * d <= nx; ++d) {
            if (nx % d != 0) continue;
            for (const std::int64_t v : {d, nx / d})
                if (v >= low && v <= hi) divisors.push_back(v);
        }
        std::sort(divisors.begin(), divisors.end());
        divisors.erase(std::unique(divisors.begin(), divisors.end()), divisors.end());
        range_kind_ = divisors.size() >= 4 ? "divisors" : "geometric";
        try {
            aloe::knob_range range = divisors.size() >= 4 ? aloe::knob_range::values(std::move(divisors))
                                                          : aloe::knob_range::geometric(low, hi);
            knob_ = std::make_unique<aloe::knob>("stencil1d-tasks.partition", std::move(range), start, options);
        } catch (const aloe::error& e) {
            throw usage_error(std::string("flag --grain: ") + e.what());
        }
    }

    std::string mode() const { return knob_ ? "auto" : list_.empty() ? "fixed" : "list"; }
    std::int64_t size_for(int epoch) const {
        if (knob_) return knob_->value();
        if (!list_.empty()) return list_[static_cast<std::size_t>(epoch) % list_.size()];
        return fixed_;
    }
    void epoch_begin() {
        if (knob_) knob_->epoch_begin();
    }
    void epoch_done(double work, double wall_s) {
        if (knob_) knob_->epoch_done({work, wall_s});
    }

    /// The "grain" object of the record; the knob's verdict per epoch goes into `epochs`.
    void write(aloe_apps::json_writer& j) const {
        j.begin_object().key("mode").value(mode());
        if (!list_.empty()) {
            j.key("list").begin_array();
            for (const std::int64_t v : list_) j.value(v);
            j.end_array();
        }
        if (knob_) {
            j.key("knob").value(knob_->name()).key("options").value(knob_->options());
            j.key("range").value(range_kind_);
            j.key("range_min").value(knob_->range().min()).key("range_max").value(knob_->range().max());
            j.key("converged").value(knob_->converged()).key("best").value(knob_->best());
        }
        j.end_object();
    }
    std::vector<aloe::knob_epoch> history() const { return knob_ ? knob_->history() : std::vector<aloe::knob_epoch>{}; }

private:
    std::int64_t fixed_;
    std::vector<std::int64_t> list_;
    std::unique_ptr<aloe::knob> knob_;
    std::string range_kind_;
};

struct epoch_record {
    int epoch;
    bool timed;
    partitioning parts;
    double setup_s;
    double wall_s;
    std::vector<aloe::counter_sample> counters;
};

std::string epochs_json(const std::vector<epoch_record>& epochs, const std::vector<aloe::knob_epoch>& knob) {
    aloe_apps::json_writer j;
    j.begin_array();
    for (const epoch_record& e : epochs) {
        j.begin_object().key("epoch").value(e.epoch).key("timed").value(e.timed);
        j.key("partition").value(e.parts.size).key("partitions").value(e.parts.count);
        j.key("setup_s").value(e.setup_s).key("wall_s").value(e.wall_s);
        if (!e.counters.empty()) {
            j.key("counters").begin_object();
            for (const aloe::counter_sample& c : e.counters) {
                const std::string_view name(c.name);
                j.key(name.starts_with(counter_prefix) ? name.substr(counter_prefix.size()) : name);
                j.value(static_cast<std::int64_t>(c.value));
            }
            j.end_object();
        }
        if (static_cast<std::size_t>(e.epoch) < knob.size()) {
            const aloe::knob_epoch& k = knob[static_cast<std::size_t>(e.epoch)];
            j.key("knob").begin_object().key("kind").value(to_string(k.kind)).key("objective");
            if (std::isnan(k.objective)) j.null(); else j.value(k.objective);  // NaN: not judged
            j.key("best").value(k.best_value).key("converged").value(k.converged).end_object();
        }
        j.end_object();
    }
    j.end_array();
    return j.text();
}

}  // namespace

int main(int argc, char** argv) {
    return aloe_apps::run_workload("stencil1d-tasks", argc, argv, [](aloe_apps::harness& h) {
        auto& f = h.flags();
        const std::int64_t nx = f.integer("--nx", 1'000'000, "points on the ring");
        const std::int64_t partition =
            f.integer("--partition", 0, "points per partition, the grain (default nx / 100)");
        const std::int64_t np = f.integer("--np", 0, "partitions instead (--partition = ceil(nx / NP))");
        const std::int64_t epoch_steps = f.integer("--epoch-steps", 50, "timesteps per epoch (one harness timestep)");
        const std::int64_t nt = f.integer("--nt", 0, "the same as --epoch-steps (HPX's name)");
        const std::string grain = f.text("--grain", "fixed", "fixed, list:P1,P2,... or auto[:OPTIONS] (aloe::knob)");
        const std::int64_t grain_min = f.integer("--grain-min", 1000, "auto: the smallest partition the knob may pick");
        const double k = f.real("--k", 0.5, "heat transfer coefficient");
        const double dt = f.real("--dt", 1.0, "timestep");
        const double dx = f.real("--dx", 1.0, "grid spacing");
        if (nx < 1) throw usage_error("flag --nx: must be at least 1");
        if (partition != 0 && np != 0) throw usage_error("flags --partition and --np: give one of them");
        if (partition < 0 || partition > nx) throw usage_error("flag --partition: must be in [1, nx]");
        if (np < 0 || np > nx) throw usage_error("flag --np: must be in [1, nx]");
        if (nt != 0 && epoch_steps != 50 && nt != epoch_steps)
            throw usage_error("flags --nt and --epoch-steps: the same setting, given two values");
        const std::int64_t steps_per_epoch = nt != 0 ? nt : epoch_steps;
        if (steps_per_epoch < 1 || steps_per_epoch > 1'000'000)
            throw usage_error("flag --epoch-steps: must be in [1, 10^6]");
        const double coefficient = k * dt / (dx * dx);
        if (!(coefficient > 0 && coefficient <= 0.5))
            throw usage_error("flags --k, --dt, --dx: need 0 < k dt / dx^2 <= 0.5");
        h.task_workload();
        h.default_steps(10, 1);
        h.start();
        const std::int64_t start = partition != 0 ? partition
                                   : np != 0      ? (nx + np - 1) / np
                                                  : std::max<std::int64_t>(1, nx / 100);
        grain_control control(grain, nx, start, grain_min, h.threads(), h.runtime());
        h.param("nx", nx);
        h.param("partition", start);
        h.param("epoch_steps", steps_per_epoch);
        h.param("grain", grain);
        h.param("coefficient", coefficient);

        aloe_apps::stencil::ring r(nx, coefficient);
        const std::unique_ptr<aloe_apps::stencil::epoch_runner> runner = aloe_apps::stencil::make_epoch_runner(h);
        std::optional<aloe::counter_reader> counters;
        if (h.runtime() == aloe_apps::runtime_kind::aloe) counters.emplace(std::string(counter_prefix) + "*");
        const int steps = static_cast<int>(steps_per_epoch);
        std::vector<epoch_record> epochs;
        h.run_steps([&](int epoch) {
            const auto t0 = std::chrono::steady_clock::now();
            const partitioning parts = partitioning::of(nx, control.size_for(epoch));
            runner->prepare(parts, steps);
            const double setup_s = seconds_since(t0);
            control.epoch_begin();
            if (counters) counters->reset();
            const auto t1 = std::chrono::steady_clock::now();
            runner->run(r, parts, steps);
            const double wall_s = seconds_since(t1);
            control.epoch_done(static_cast<double>(nx) * steps, wall_s);
            epochs.push_back({epoch, epoch >= h.warmup(), parts, setup_s, wall_s,
                              counters ? counters->delta() : std::vector<aloe::counter_sample>{}});
        });
        aloe_apps::json_writer g;
        control.write(g);
        h.record("grain", g.text());
        h.record("epochs", epochs_json(epochs, control.history()));

        // r.state(0) is the result, r.state(1) the state before the last timestep.
        std::vector<double>& result = r.u[r.now];
        if (h.corrupt_result()) result[static_cast<std::size_t>(nx / 2)] += 1.0;
        double sum = 0;
        for (const double v : result) sum += v * v;
        h.checksum(sum);

        const partitioning whole = partitioning::of(nx, nx);
        if (h.full_check()) {
            aloe_apps::stencil::ring again(nx, coefficient);
            const int total = (h.warmup() + h.steps()) * steps;
            for (int s = 0; s < total; ++s) aloe_apps::stencil::step_serial(again, whole);
            const std::int64_t d = aloe_apps::differing_values(result, again.u[again.now]);
            h.check(d == 0, "points that differ from a serial re-run of all " + std::to_string(total) + " timesteps",
                    static_cast<double>(d), 0);
        } else {
            std::vector<double> last(result.size());
            const double* before = r.state(1);
            for (std::int64_t p = 0; p < whole.count; ++p)
                aloe_apps::stencil::update_partition(before, last.data(), whole, p, coefficient);
            const std::int64_t d = aloe_apps::differing_values(result, last);
            h.check(d == 0, "points that differ from a serial re-run of the last timestep", static_cast<double>(d), 0);
        }
    });
}

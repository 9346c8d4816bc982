// synthetic: one loop whose iterations cost what a chosen distribution says, so a schedule can
// be measured against imbalance of a known shape, with nothing else (no memory traffic, no
// data dependence) in the way.
//
// Iteration i runs units[i] steps of a floating-point recurrence, units[i] = round(cost_i ×
// --units-per-us), where cost_i (µs) is drawn once from --dist with mean --mean-us:
//   uniform     every iteration costs the mean: a balanced loop, so only overhead differs;
//   ramp        cost grows linearly with i from ~0 to ~2× the mean: structured imbalance, the
//               case a static block split handles worst;
//   heavy-tail  Pareto(--alpha), capped at --cap × its mean, then scaled to the mean: a few
//               iterations dominate, at places no schedule can predict.
// The draws use std::mt19937_64 and inverse CDFs written here (the std:: distributions differ
// between standard libraries). --units-per-us converts µs of cost into units of work; it is a
// flag with a default measured on the development VM, not a calibration at run time, so the
// work and the checksum depend on the flags alone, on every machine and in every run.
#include "common/harness.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace {

using aloe_apps::usage_error;

/// Steps of spin()'s recurrence per µs: 611 measured on the 2-core development VM (AMD EPYC
/// under KVM, gcc 12, -O2 and -O3 alike: the loop is bound by the multiply-add latency), so a
/// unit lasts about 1.6 ns there. Other machines: pass --units-per-us.
constexpr double default_units_per_us = 600;

/// Iterations the quick check recomputes (evenly spaced), besides the costliest one.
constexpr std::int64_t quick_check_samples = 64;

/// A 64-bit mixer (the splitmix64 finaliser), so neighbouring (i, step) start far apart.
std::uint64_t mix(std::uint64_t x) noexcept {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/// The work of iteration i at timestep `step`: `units` steps of two independent affine
/// recurrences that creep towards 1 from a start drawn from (i, step). The arithmetic is in a
/// fixed order and the values stay in [1, 2], never subnormal, so the result is the same
/// bits whichever thread computes it, and it changes with every unit.
double spin(std::int64_t i, int step, std::int64_t units) noexcept {
    const std::uint64_t h = mix(static_cast<std::uint64_t>(i) * 0x9e3779b97f4a7c15ULL +
                                static_cast<std::uint64_t>(step));
    double a = 1.0 + static_cast<double>(h >> 11) * 0x1p-54;       // [1, 1.5)
    double b = 2.0 - static_cast<double>(h & 0xfffff) * 0x1p-21;   // (1.5, 2]
    for (std::int64_t u = 0; u < units; ++u) {
        a = a * 0.9999999 + 1e-7;
        b = b * 0.9999997 + 3e-7;
    }
    return a + b;
}

/// A uniform draw in [0, 1) from the top 53 bits.
double unit_draw(std::mt19937_64& gen) { return static_cast<double>(gen() >> 11) * 0x1p-53; }

/// Per-iteration costs in µs with sample mean `mean` (see the header comment).
std::vector<double> draw_costs(const std::string& dist, std::int64_t n, double mean, double alpha,
                               double cap, std::uint64_t seed) {
    std::vector<double> cost(static_cast<std::size_t>(n), mean);
    if (dist == "uniform") return cost;
    if (dist == "ramp") {
        // Midpoints of n equal cells of [0, 2 mean]: the sample mean is the mean.
        for (std::int64_t i = 0; i < n; ++i)
            cost[i] = 2.0 * mean * (static_cast<double>(i) + 0.5) / static_cast<double>(n);
        return cost;
    }
    // heavy-tail: inverse CDF of Pareto(alpha) with scale 1, x = (1 - u)^(-1/alpha); its
    // mean is alpha / (alpha - 1). Cap, then scale so the sample mean is `mean`.
    std::mt19937_64 gen(seed);
    const double limit = cap * alpha / (alpha - 1.0);
    double sum = 0;
    for (std::int64_t i = 0; i < n; ++i) {
        cost[i] = std::min(std::pow(1.0 - unit_draw(gen), -1.0 / alpha), limit);
        sum += cost[i];
    }
    const double scale = mean * static_cast<double>(n) / sum;
    for (double& c : cost) c *= scale;
    return cost;
}

}  // namespace

int main(int argc, char** argv) {
    return aloe_apps::run_workload("synthetic", argc, argv, [](aloe_apps::harness& h) {
        auto& f = h.flags();
        const std::int64_t n = f.integer("--n", 20000, "loop iterations");
        const std::string dist = f.text("--dist", "uniform", "iteration cost: uniform|ramp|heavy-tail");
        const double mean_us = f.real("--mean-us", 5, "mean iteration cost, µs");
        const double alpha = f.real("--alpha", 1.5, "heavy-tail: Pareto shape (> 1)");
        const double cap = f.real("--cap", 100, "heavy-tail: cap on a draw, in means of the uncapped Pareto");
        const std::int64_t seed = f.integer("--seed", 1, "seed of the cost draws");
        const double units_per_us = f.real("--units-per-us", default_units_per_us,
                                           "work units per µs of cost (sets the work, not a timing)");
        if (n < 1) throw usage_error("flag --n: must be at least 1, not " + std::to_string(n));
        if (dist != "uniform" && dist != "ramp" && dist != "heavy-tail")
            throw usage_error("flag --dist: '" + dist + "' is not uniform, ramp or heavy-tail");
        if (!(mean_us >= 0 && std::isfinite(mean_us)))
            throw usage_error("flag --mean-us: must be a finite number >= 0");
        if (!(alpha > 1 && std::isfinite(alpha))) throw usage_error("flag --alpha: must be a finite number > 1");
        if (!(cap >= 1 && std::isfinite(cap))) throw usage_error("flag --cap: must be a finite number >= 1");
        if (seed < 0) throw usage_error("flag --seed: must be >= 0");
        if (!(units_per_us > 0 && std::isfinite(units_per_us)))
            throw usage_error("flag --units-per-us: must be a finite number > 0");
        h.default_steps(20, 2);
        h.start();

        const std::vector<double> cost = draw_costs(dist, n, mean_us, alpha, cap, static_cast<std::uint64_t>(seed));
        std::vector<std::int64_t> units(cost.size());
        std::int64_t total_units = 0;
        std::int64_t costliest = 0;
        for (std::int64_t i = 0; i < n; ++i) {
            units[i] = std::llround(cost[i] * units_per_us);
            total_units += units[i];
            if (units[i] > units[costliest]) costliest = i;
        }
        h.param("n", n);
        h.param("dist", dist);
        h.param("mean_us", mean_us);
        if (dist == "heavy-tail") {
            h.param("alpha", alpha);
            h.param("cap", cap);
            h.param("seed", seed);
        }
        h.param("units_per_us", units_per_us);
        h.param("total_units", total_units);
        h.param("max_cost_us", static_cast<double>(units[costliest]) / units_per_us);

        std::vector<double> out(cost.size(), 0.0);
        int last_step = -1;
        h.run_steps([&](int step) {
            h.parallel_for("synthetic/iterations", n, [&](std::int64_t i) { out[i] = spin(i, step, units[i]); });
            last_step = step;
        });

        if (h.corrupt_result()) out[0] += 1.0;  // index 0 is in every check's sample
        double sum = 0;
        for (const double v : out) sum += v;
        h.checksum(sum);

        // Recompute iterations serially: every one (full), or an even sample and the costliest.
        std::vector<std::int64_t> sample;
        if (h.full_check() || n <= quick_check_samples) {
            for (std::int64_t i = 0; i < n; ++i) sample.push_back(i);
        } else {
            for (std::int64_t k = 0; k < quick_check_samples; ++k) sample.push_back(k * n / quick_check_samples);
            sample.push_back(costliest);
        }
        std::int64_t differing = 0;
        for (const std::int64_t i : sample)
            if (spin(i, last_step, units[i]) != out[i]) ++differing;
        h.check(differing == 0,
                "iterations recomputed serially that differ (of " + std::to_string(sample.size()) + ")",
                static_cast<double>(differing), 0);
    });
}

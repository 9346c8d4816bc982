// The arithmetic the golden grain search (grain_search.hpp) decides by: the cost model it
// fits to measured points, and the lower bound its stop rule certifies against. No state,
// no clock: functions of the points they are given.
//
// The model. A task-parallel epoch of fixed work W split into tasks of grain g costs
//   cost(g) = a + b/g + c·g,
// - b/g: per-task overhead (creation, scheduling, the dependency check), paid W/g times;
//   Grubel's T_o, which rises steeply at fine grain (seed 002, §2.4, §3.1: "high because of
//   management overhead" on the left of every U);
// - c·g: what grows with the grain: the imbalance of the last wave of tasks (about half a task
//   per core), starvation once there are fewer tasks than cores (then one task's length is
//   the epoch), and the wait time that grows with partition size (§3.1, Fig. 29);
// - a: the work itself, which does not depend on g.
// Its minimum, g* = sqrt(b/c), is the square-root law of fixed-size chunking (Kruskal and
// Weiss, 1985: the chunk that balances per-chunk overhead against the imbalance it leaves).
// In log grain u = ln g it is a + b·e^-u + c·e^u: a cosh-shaped U, flat at the bottom and
// exponentially steep on both sides: the shape of the reference's curves (§3.1, "U-shaped on
// every platform"), which a parabola in u fits badly away from the bottom.
//
// The lower bound. If the cost is convex in u, every chord between measured points,
// extended beyond its ends, lies below the curve there. So on each gap between measured
// points the cost is at least the larger of the two extended neighbouring chords, and beyond
// the outermost points at least the outermost chord's extension to the domain's edge. The
// least of these bounds is a lower bound on the optimum over the whole domain: once it is
// within a tolerance of the best measured value, no unmeasured point can be better by more.
// Real curves are convex in u only roughly (wave quantisation makes steps), and noisy means
// blur the chords, so it is a stop rule, not a proof.
#pragma once

#include <optional>
#include <span>

namespace aloe::adapt {

/// cost(g) = a + b/g + c·g with b, c >= 0.
struct grain_model {
    double a = 0, b = 0, c = 0;

    double operator()(double grain) const noexcept { return a + b / grain + c * grain; }
    /// The grain of least cost: sqrt(b/c); +inf when only b is positive (cost falls as the
    /// grain grows), 0 when only c is (cost rises with it), NaN when both are 0 (flat).
    double argmin() const noexcept;
};

/// One measured point: its grain (> 0), the mean cost there (> 0) and how many samples the
/// mean holds (its weight: a mean of n samples has 1/n of one sample's variance).
struct grain_point {
    double grain = 1;
    double cost = 1;
    double weight = 1;
};

struct grain_fit {
    grain_model model;
    /// Root mean square of the relative residuals (model − cost)/cost, weighted.
    double relative_residual = 0;
};

/// Weighted least squares of the relative residuals (noise on epoch costs is
/// multiplicative), with b and c kept >= 0: each of the four sign patterns is solved and
/// the best feasible one wins (a non-negative least squares over two variables by
/// enumeration). Needs at least 3 points with positive grain, cost and weight; nullopt with
/// fewer, or when every pattern is singular.
std::optional<grain_fit> fit_grain_model(std::span<const grain_point> points);

/// The least value over [domain_lo, domain_hi] that a function convex in x can take, given
/// its values y at the sorted abscissae x (x strictly increasing, inside the domain), by the
/// extended-chord argument above. -inf with fewer than 3 points (no chord bounds a gap on
/// both sides); never above min(y).
double convex_lower_bound(std::span<const double> x, std::span<const double> y, double domain_lo, double domain_hi);

}  // namespace aloe::adapt

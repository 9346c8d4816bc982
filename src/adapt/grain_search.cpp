#include "adapt/grain_search.hpp"

#include "adapt/nlopt_search.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

namespace aloe::adapt {
namespace {

constexpr double golden_fraction = 0.3819660112501051;  // (3 − √5)/2: the golden section's smaller part
constexpr double golden_growth = 1.618033988749895;     // (1 + √5)/2: bracketing growth (Numerical Recipes' mnbrak)
constexpr int default_budget = 10;                      // the target: converge in <= 10 epochs
// The relative spread of one epoch's objective assumed before any value was measured twice:
// a guess (epochs of a quiet machine differ by 1–3%), worth a quarter of one repeated pair,
// so the first real pair all but replaces it.
constexpr double noise_prior = 0.02;
constexpr double noise_prior_weight = 0.25;
// Two means differ beyond noise when their gap exceeds this many standard errors of the
// difference. Tuned on the tests' uniform ±1–5% noise (2.0 left more wrong picks at ±5%).
constexpr double noise_margin_sigmas = 2.5;
constexpr int max_repeats = 3;                  // samples per value the golden search takes at most
constexpr double bracket_resolution = 0.13976;  // ln 1.15: a bracket narrower than ×1.15 is done (guess)
constexpr double model_keep_off = 0.1;          // a model point stays this fraction of the bracket from its ends
constexpr std::size_t fit_neighbours = 2;       // measured neighbours per side the local fit uses
constexpr std::size_t min_points_to_trust_fit = 4;  // 3 points fit any U exactly: a stop needs one more
constexpr double fit_residual_floor = 0.005;    // a fit within 0.5% is good whatever the noise estimate
constexpr double recheck_step = 0.22314;        // ln 1.25: how far a re-check's neighbour lies (guess)
constexpr int max_recheck_gap = 1024;
constexpr std::size_t recent_window = 8;        // samples at the best a re-check is compared with

[[noreturn]] void bad(const std::string& what) { throw std::invalid_argument("grain_search: " + what); }

}  // namespace

std::string_view to_string(grain_stop stop) noexcept {
    switch (stop) {
    case grain_stop::none: return "searching";
    case grain_stop::single_value: return "one admissible value";
    case grain_stop::model: return "model: less than tolerance/3 to gain";
    case grain_stop::certificate: return "convex bound within tolerance/3";
    case grain_stop::bracket: return "bracket narrower than x1.15";
    case grain_stop::adjacent: return "no value left inside the bracket";
    case grain_stop::budget: return "evaluation budget spent";
    case grain_stop::optimiser: return "NLopt finished";
    case grain_stop::swept: return "every value measured";
    }
    return "?";
}

grain_search::grain_search(std::vector<std::int64_t> values, std::int64_t start, const grain_search_options& options)
    : options_(options), values_(std::move(values)) {
    if (values_.empty()) bad("no admissible values");
    for (std::size_t i = 0; i < values_.size(); ++i) {
        if (values_[i] <= 0) bad("value " + std::to_string(values_[i]) + " is not positive");
        if (i > 0 && values_[i] <= values_[i - 1]) bad("values are not strictly increasing");
    }
    if (options_.max_evaluations < 0) bad("max_evaluations must be >= 0");
    if (!(options_.tolerance > 0 && options_.tolerance < 1)) bad("tolerance must be in (0, 1)");
    if (options_.recheck_every < 0) bad("recheck_every must be >= 0");
    const int all = static_cast<int>(std::min<std::size_t>(values_.size(), std::numeric_limits<int>::max()));
    budget_ = options_.max_evaluations > 0 ? options_.max_evaluations
              : options_.kind == grain_search_kind::sweep ? all
                                                          : default_budget;
    log_.reserve(values_.size());
    for (const std::int64_t v : values_) log_.push_back(std::log(static_cast<double>(v)));
    stats_.resize(values_.size());
    current_ = best_ = nearest(std::log(static_cast<double>(std::max<std::int64_t>(start, 1))));
    if (values_.size() == 1) {
        converge(grain_stop::single_value);
        return;
    }
    if (options_.kind == grain_search_kind::nelder_mead || options_.kind == grain_search_kind::bobyqa) {
        nlopt_search_options o;
        o.samples_per_point = 1;  // an epoch is one sample; noise is the caller's epoch length
        // Values already measured are answered from their means without an epoch, and they
        // count against NLopt's budget: room for many of them, the epochs are capped here.
        o.max_evaluations = 20 * budget_ + 20;
        o.relative_tolerance = options_.tolerance / 3;
        o.initial_step = 0.25;  // a quarter of the log range: ×10 over a range of 10^4
        o.algorithm = options_.kind == grain_search_kind::bobyqa ? NLOPT_LN_BOBYQA : NLOPT_LN_NELDERMEAD;
        nlopt_ = std::make_unique<nlopt_search>(std::vector<knob_range>{{"ln value", log_.front(), log_.back()}},
                                                std::vector<double>{log_[current_]}, o);
    }
}

grain_search::~grain_search() = default;
grain_search::grain_search(grain_search&&) noexcept = default;
grain_search& grain_search::operator=(grain_search&&) noexcept = default;

double grain_search::best_objective() const noexcept {
    return stats_[best_].n > 0 ? stats_[best_].mean : std::numeric_limits<double>::infinity();
}

double grain_search::noise_estimate() const noexcept {
    double sum = noise_prior_weight * noise_prior * noise_prior;
    double dof = noise_prior_weight;
    for (const running_stats& s : stats_) {
        if (s.n < 2 || !(s.mean > 0)) continue;
        sum += s.m2 / (s.mean * s.mean);
        dof += static_cast<double>(s.n - 1);
    }
    return std::sqrt(sum / dof);
}

void grain_search::observe(double objective) {
    if (!std::isfinite(objective) || objective < 0) return;
    if (state_ == grain_search_state::converged) {
        observe_converged(objective);
        return;
    }
    stats_[current_].add(objective);
    ++evaluations_;
    best_ = best_measured();
    if (nlopt_) nlopt_->observe(objective);
    if (evaluations_ >= budget_) {
        const bool swept = options_.kind == grain_search_kind::sweep && !sweep_next();
        converge(swept ? grain_stop::swept : grain_stop::budget);
        return;
    }
    decide_next();
}

void grain_search::decide_next() {
    std::optional<std::size_t> next;
    grain_stop why = grain_stop::none;
    switch (options_.kind) {
    case grain_search_kind::golden: next = golden_next(why); break;
    case grain_search_kind::nelder_mead:
    case grain_search_kind::bobyqa:
        next = nlopt_next();
        why = grain_stop::optimiser;
        break;
    case grain_search_kind::sweep:
        next = sweep_next();
        why = grain_stop::swept;
        break;
    }
    if (next) current_ = *next;
    else converge(why);
}

void grain_search::converge(grain_stop why) {
    state_ = grain_search_state::converged;
    stop_ = why;
    if (evaluations_ > 0) best_ = best_measured();
    current_ = best_;
    nlopt_.reset();  // joins the optimiser's thread
    since_converged_ = 0;
    recheck_gap_ = options_.recheck_every;
    next_recheck_ = recheck_gap_;
}

void grain_search::observe_converged(double objective) {
    ++since_converged_;
    if (rechecking_) {
        ++rechecks_;
        stats_[current_].add(objective);
        double reference = stats_[best_].mean;
        if (!recent_.empty()) {
            reference = 0;
            for (const double r : recent_) reference += r;
            reference /= static_cast<double>(recent_.size());
        }
        const double n = static_cast<double>(std::max<std::size_t>(recent_.size(), 1));
        const double margin =
            std::max(options_.tolerance, noise_margin_sigmas * noise_estimate() * std::sqrt(1 + 1 / n));
        if (objective < reference * (1 - margin)) {
            best_ = current_;  // walk on in the same direction next time
            recent_.assign(1, objective);
            recent_next_ = 0;
            recheck_gap_ = options_.recheck_every;
        } else {
            recheck_up_ = !recheck_up_;
            recheck_gap_ = std::min(2 * recheck_gap_, max_recheck_gap);
        }
        next_recheck_ = since_converged_ + recheck_gap_;
        rechecking_ = false;
        current_ = best_;
    } else if (recent_.size() < recent_window) {
        recent_.push_back(objective);
    } else {
        recent_[recent_next_] = objective;
        recent_next_ = (recent_next_ + 1) % recent_window;
    }
    if (options_.recheck_every == 0 || options_.kind == grain_search_kind::sweep || values_.size() < 2 ||
        since_converged_ < next_recheck_)
        return;
    // The neighbour ×1.25 away in the direction of turn (at least the adjacent value); at an
    // edge, the other direction.
    for (int attempt = 0; attempt < 2; ++attempt) {
        const bool up = recheck_up_;
        std::size_t n = nearest(log_[best_] + (up ? recheck_step : -recheck_step));
        if (n == best_) {
            if (up && best_ + 1 < values_.size()) n = best_ + 1;
            else if (!up && best_ > 0) n = best_ - 1;
        }
        if (n != best_) {
            current_ = n;
            rechecking_ = true;
            return;
        }
        recheck_up_ = !recheck_up_;
    }
}

std::vector<std::size_t> grain_search::measured() const {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < stats_.size(); ++i)
        if (stats_[i].n > 0) out.push_back(i);
    return out;
}

std::size_t grain_search::best_measured() const {
    std::size_t b = current_;
    double least = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < stats_.size(); ++i)
        if (stats_[i].n > 0 && stats_[i].mean < least) {
            least = stats_[i].mean;
            b = i;
        }
    return b;
}

std::size_t grain_search::nearest(double log_value) const {
    const auto it = std::lower_bound(log_.begin(), log_.end(), log_value);
    if (it == log_.begin()) return 0;
    if (it == log_.end()) return log_.size() - 1;
    const std::size_t hi = static_cast<std::size_t>(it - log_.begin());
    return log_value - log_[hi - 1] <= log_[hi] - log_value ? hi - 1 : hi;
}

std::optional<std::size_t> grain_search::nearest_unmeasured(double log_value, std::size_t lo, std::size_t hi) const {
    std::optional<std::size_t> out;
    double distance = std::numeric_limits<double>::infinity();
    for (std::size_t i = lo; i <= hi && i < values_.size(); ++i) {
        if (stats_[i].n > 0) continue;
        const double d = std::abs(log_[i] - log_value);
        if (d < distance) {
            distance = d;
            out = i;
        }
    }
    return out;
}

std::optional<grain_fit> grain_search::local_fit(const std::vector<std::size_t>& measured, std::size_t at) const {
    const auto k = static_cast<std::size_t>(std::find(measured.begin(), measured.end(), at) - measured.begin());
    const std::size_t first = k >= fit_neighbours ? k - fit_neighbours : 0;
    const std::size_t last = std::min(measured.size() - 1, k + fit_neighbours);
    std::vector<grain_point> points;
    for (std::size_t j = first; j <= last; ++j) {
        const running_stats& s = stats_[measured[j]];
        points.push_back({static_cast<double>(values_[measured[j]]), s.mean, static_cast<double>(s.n)});
    }
    return fit_grain_model(points);
}

std::optional<std::size_t> grain_search::golden_next(grain_stop& why) {
    const std::size_t n = values_.size();
    const std::vector<std::size_t> m = measured();
    const std::size_t b = best_;
    if (m.size() == 1) {  // step 1: halfway towards the far end of the larger side
        const bool down = log_[b] - log_.front() > log_.back() - log_[b];
        const double target = 0.5 * (log_[b] + (down ? log_.front() : log_.back()));
        return down ? nearest_unmeasured(target, 0, b - 1) : nearest_unmeasured(target, b + 1, n - 1);
    }
    const auto k = static_cast<std::size_t>(std::find(m.begin(), m.end(), b) - m.begin());
    const bool has_low = k > 0, has_high = k + 1 < m.size();
    if (!has_low && b > 0) return golden_expand(b, m[k + 1], true);  // step 2
    if (!has_high && b + 1 < n) return golden_expand(b, m[k - 1], false);
    const std::size_t lo = has_low ? m[k - 1] : b, hi = has_high ? m[k + 1] : b;

    if (auto again = golden_confirm(b)) return again;  // step 4

    // Step 5: a stop waits until the best has a second sample.
    const auto stop = [&](grain_stop reason) -> std::optional<std::size_t> {
        if (stats_[b].n < 2) return b;
        why = reason;
        return std::nullopt;
    };
    const double best_mean = stats_[b].mean;
    if (!(best_mean > 0)) return stop(grain_stop::certificate);  // no objective is below 0
    const double enough = options_.tolerance / 3;
    {
        std::vector<double> xs, ys;
        for (const std::size_t i : m) {
            xs.push_back(log_[i]);
            ys.push_back(stats_[i].mean);
        }
        if (convex_lower_bound(xs, ys, log_.front(), log_.back()) >= best_mean * (1 - enough))
            return stop(grain_stop::certificate);
    }
    if (log_[hi] - log_[lo] <= bracket_resolution) return stop(grain_stop::bracket);
    if (hi < lo + 2 || !nearest_unmeasured(log_[b], lo + 1, hi - 1)) return stop(grain_stop::adjacent);

    // Step 3: the model's minimum inside the bracket, else the golden section point.
    std::optional<double> target;
    if (const auto fit = local_fit(m, b)) {
        const double g = fit->model.argmin();
        if (!std::isnan(g)) {
            const double t = std::isinf(g) ? log_[hi] : g <= 0 ? log_[lo] : std::clamp(std::log(g), log_[lo], log_[hi]);
            const double gain = (fit->model(static_cast<double>(values_[b])) - fit->model(std::exp(t))) / best_mean;
            const std::size_t points = std::min(k, fit_neighbours) + 1 + std::min(m.size() - 1 - k, fit_neighbours);
            if (points >= min_points_to_trust_fit &&
                fit->relative_residual <= std::max(noise_estimate(), fit_residual_floor) && gain < enough)
                return stop(grain_stop::model);
            const double w = log_[hi] - log_[lo];
            target = std::clamp(t, log_[lo] + model_keep_off * w, log_[hi] - model_keep_off * w);
        }
    }
    if (!target) {
        const double down = log_[b] - log_[lo], up = log_[hi] - log_[b];
        target = up >= down ? log_[b] + golden_fraction * up : log_[b] - golden_fraction * down;
    }
    return nearest_unmeasured(*target, lo + 1, hi - 1);
}

std::optional<std::size_t> grain_search::golden_expand(std::size_t best, std::size_t other, bool down) {
    const std::size_t edge = down ? 0 : values_.size() - 1;
    const double room = std::abs(log_[edge] - log_[best]);
    const double previous = std::abs(log_[best] - log_[other]);
    int& steps = expansions_[down ? 0 : 1];
    double step = std::min(steps == 0 ? room / 2 : room, golden_growth * previous);
    if (const auto fit = local_fit(measured(), best)) {
        const double g = fit->model.argmin();
        if (!std::isnan(g)) {
            const double t = std::isinf(g) ? log_.back() : g <= 0 ? log_.front() : std::log(g);
            const double beyond = down ? log_[best] - t : t - log_[best];
            if (beyond > step) step = std::min({beyond, room, std::max(step, golden_growth * previous)});
        }
    }
    ++steps;
    const double target = down ? log_[best] - step : log_[best] + step;
    return down ? nearest_unmeasured(target, 0, best - 1) : nearest_unmeasured(target, best + 1, edge);
}

std::optional<std::size_t> grain_search::golden_confirm(std::size_t best) const {
    const running_stats& sb = stats_[best];
    if (!(sb.mean > 0)) return std::nullopt;
    const double sigma = noise_estimate();
    std::optional<std::size_t> rival;
    double least_gap = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < stats_.size(); ++i) {
        const running_stats& s = stats_[i];
        if (i == best || s.n == 0 || s.n >= static_cast<std::uint64_t>(max_repeats)) continue;
        const double margin = noise_margin_sigmas * sigma *
                              std::sqrt(1.0 / static_cast<double>(s.n) + 1.0 / static_cast<double>(sb.n));
        const double gap = (s.mean - sb.mean) / sb.mean;
        if (gap < margin - options_.tolerance && gap < least_gap) {
            least_gap = gap;
            rival = i;
        }
    }
    if (!rival) return std::nullopt;
    return sb.n <= stats_[*rival].n && sb.n < static_cast<std::uint64_t>(max_repeats) ? best : *rival;
}

std::optional<std::size_t> grain_search::nlopt_next() {
    // NLopt asks for points in ln(value); one that snaps to a measured value is answered from
    // its mean at once (no epoch), so the loop ends at an unmeasured value or when NLopt does
    // (its evaluation cap bounds the answers).
    while (!nlopt_->done()) {
        const std::size_t i = nearest(nlopt_->point_to_run()[0]);
        if (stats_[i].n == 0) return i;
        nlopt_->observe(stats_[i].mean);
    }
    return std::nullopt;
}

std::optional<std::size_t> grain_search::sweep_next() const {
    for (std::size_t i = 0; i < stats_.size(); ++i)
        if (stats_[i].n == 0) return i;
    return std::nullopt;
}

}  // namespace aloe::adapt

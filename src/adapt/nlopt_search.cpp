#include "adapt/nlopt_search.hpp"

#include "adapt/median.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

namespace aloe::adapt {
namespace {

void check(const std::vector<knob_range>& knobs, const std::vector<double>& start, const nlopt_search_options& o) {
    const auto bad = [](const std::string& what) { throw std::invalid_argument("nlopt_search: " + what); };
    if (knobs.empty()) bad("no knobs to search");
    for (const knob_range& k : knobs)
        if (!(std::isfinite(k.low) && std::isfinite(k.high) && k.low < k.high))
            bad("knob '" + k.name + "': low must be below high, both finite");
    if (start.size() != knobs.size())
        bad("start has " + std::to_string(start.size()) + " values for " + std::to_string(knobs.size()) + " knobs");
    for (std::size_t i = 0; i < start.size(); ++i)
        if (!std::isfinite(start[i])) bad("start for knob '" + knobs[i].name + "' is not finite");
    if (o.samples_per_point < 1) bad("samples_per_point must be >= 1");
    if (o.max_evaluations < 1) bad("max_evaluations must be >= 1");
    if (!(o.relative_tolerance >= 0) || !std::isfinite(o.relative_tolerance))
        bad("relative_tolerance must be finite and >= 0");
    if (!(o.initial_step > 0 && o.initial_step <= 1)) bad("initial_step must be in (0, 1]");
    const int a = o.algorithm;
    if (a < 0 || a >= NLOPT_NUM_ALGORITHMS) bad("algorithm " + std::to_string(a) + " is not an NLopt algorithm");
    const std::string name = nlopt_algorithm_to_string(o.algorithm);
    // Timings have no gradient and a loop site wants the nearby optimum, not a global hunt;
    // the augmented-Lagrangian ones only wrap another optimiser for constraints we do not have.
    if (name.rfind("LN_", 0) != 0 || name.rfind("LN_AUGLAG", 0) == 0)
        bad("algorithm " + name + " is not a local derivative-free one (LN_SBPLX, LN_NELDERMEAD, LN_BOBYQA, LN_COBYLA, ...)");
    if (o.algorithm == NLOPT_LN_NEWUOA) bad("algorithm LN_NEWUOA ignores bounds (LN_NEWUOA_BOUND keeps to them)");
}

}  // namespace

void nlopt_search::opt_deleter::operator()(nlopt_opt opt) const noexcept { nlopt_destroy(opt); }

nlopt_search::nlopt_search(std::vector<knob_range> knobs, std::vector<double> start, const nlopt_search_options& options)
    : knobs_(std::move(knobs)), options_(options), best_seconds_(std::numeric_limits<double>::infinity()),
      last_answer_(HUGE_VAL) {
    check(knobs_, start, options_);
    const std::size_t n = knobs_.size();
    std::vector<double> low(n), high(n), step(n);
    for (std::size_t i = 0; i < n; ++i) {
        low[i] = knobs_[i].low;
        high[i] = knobs_[i].high;
        step[i] = options_.initial_step * (high[i] - low[i]);
        start[i] = std::clamp(start[i], low[i], high[i]);
    }
    current_ = best_ = x_ = asked_ = start;
    samples_.reserve(static_cast<std::size_t>(options_.samples_per_point));

    opt_.reset(nlopt_create(options_.algorithm, static_cast<unsigned>(n)));
    if (!opt_) throw std::runtime_error("nlopt_search: nlopt_create failed");
    nlopt_result r = nlopt_set_min_objective(opt_.get(), &nlopt_search::objective, this);
    if (r > 0) r = nlopt_set_lower_bounds(opt_.get(), low.data());
    if (r > 0) r = nlopt_set_upper_bounds(opt_.get(), high.data());
    if (r > 0) r = nlopt_set_maxeval(opt_.get(), options_.max_evaluations);
    if (r > 0) r = nlopt_set_ftol_rel(opt_.get(), options_.relative_tolerance);
    if (r > 0) r = nlopt_set_initial_step(opt_.get(), step.data());
    if (r < 0) {
        const char* msg = nlopt_get_errmsg(opt_.get());
        settle(r, false, msg ? msg : "");
        return;
    }

    thread_ = std::thread([this] { optimise(); });
    try {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return request_ > seen_request_ || finished_; });
        take_handshake();
    } catch (...) {
        stop();
        throw;
    }
    if (done_) stop();  // settled at once (NLopt refused the problem): the thread has returned
}

nlopt_search::~nlopt_search() { stop(); }

void nlopt_search::stop() noexcept {
    if (!thread_.joinable()) return;
    {
        std::lock_guard lock(mutex_);
        give_up_ = true;
    }
    changed_.notify_all();
    thread_.join();
}

void nlopt_search::optimise() noexcept {
    // LN_PRAXIS may draw random numbers (on ill-conditioned costs); a fixed seed on this
    // thread (NLopt's generator is thread-local) keeps the search a function of the times.
    nlopt_srand(1);
    double minimum = 0;
    const nlopt_result r = nlopt_optimize(opt_.get(), x_.data(), &minimum);
    const char* msg = r < 0 ? nlopt_get_errmsg(opt_.get()) : nullptr;
    {
        std::lock_guard lock(mutex_);
        finished_ = true;
        result_ = r;
        errmsg_ = msg ? msg : "";
    }
    changed_.notify_all();
}

double nlopt_search::objective(unsigned n, const double* x, double* /*grad: LN_ algorithms pass none*/,
                               void* self) noexcept {
    auto& s = *static_cast<nlopt_search*>(self);
    std::unique_lock lock(s.mutex_);
    // The hard cap on points: NLopt checks maxeval itself, this holds whatever the algorithm.
    if (!s.give_up_ && s.posted_ >= s.options_.max_evaluations) s.budget_stop_ = true;
    if (s.give_up_ || s.budget_stop_) {
        nlopt_force_stop(s.opt_.get());
        return s.last_answer_;
    }
    // Clamped: a loop must never run a knob outside its range, whatever an algorithm's
    // arithmetic does near a bound.
    for (unsigned i = 0; i < n; ++i) s.asked_[i] = std::clamp(x[i], s.knobs_[i].low, s.knobs_[i].high);
    ++s.posted_;
    ++s.request_;
    s.answered_ = false;
    s.changed_.notify_all();
    s.changed_.wait(lock, [&] { return s.answered_ || s.give_up_; });
    if (!s.answered_) {  // the destructor came mid-point
        nlopt_force_stop(s.opt_.get());
        return s.last_answer_;
    }
    s.answered_ = false;
    s.last_answer_ = s.answer_;
    return s.answer_;
}

void nlopt_search::take_handshake() {
    if (request_ > seen_request_) {
        seen_request_ = request_;
        std::copy(asked_.begin(), asked_.end(), current_.begin());
    } else {
        settle(result_, budget_stop_, errmsg_);
    }
}

void nlopt_search::settle(nlopt_result result, bool budget_stop, std::string_view errmsg) {
    done_ = true;
    samples_.clear();
    if (budget_stop || result == NLOPT_MAXEVAL_REACHED) {
        reason_ = "evaluation budget spent";
    } else if (result == NLOPT_FORCED_STOP || result == NLOPT_MAXTIME_REACHED) {
        reason_ = "stopped";
    } else if (result > 0) {  // SUCCESS, STOPVAL, FTOL, XTOL
        reason_ = "converged: tolerance reached";
    } else {
        const char* code = nlopt_result_to_string(result);
        reason_ = std::string("NLopt failed: ") + (code ? code : std::to_string(static_cast<int>(result)));
        if (!errmsg.empty()) reason_.append(" (").append(errmsg).append(")");
    }
}

void nlopt_search::observe(double seconds) {
    if (done_ || !std::isfinite(seconds) || seconds < 0) return;  // a broken timing is not evidence
    samples_.push_back(seconds);
    if (static_cast<int>(samples_.size()) < options_.samples_per_point) return;
    const double t = median(samples_);
    samples_.clear();
    ++evaluations_;
    if (t < best_seconds_) {
        best_seconds_ = t;
        best_ = current_;
    }
    std::unique_lock lock(mutex_);
    answer_ = t;
    answered_ = true;
    changed_.notify_all();
    // Synchronous: wait until the optimiser has posted its next point or returned.
    changed_.wait(lock, [&] { return request_ > seen_request_ || finished_; });
    take_handshake();
    lock.unlock();
    // A settled search's thread has returned: join it now, not when the site's policy goes
    // (for a live site, never; a finished thread nobody joins is a leak to TSan).
    if (done_) stop();
}

}  // namespace aloe::adapt

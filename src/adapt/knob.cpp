// aloe::knob (include/aloe/knob.hpp): one grain_search driven once per epoch, its objective
// computed by grain_objective from the counters' deltas over the epoch.
//
// An epoch, as epoch_done() sees it:
//   warmup    the first `warmup=` epochs: recorded, not judged;
//   baseline  objective=overhead+wait only: the first epoch at a value with no t_d1 yet runs
//             on one worker (limit_concurrency(1) when the previous epoch ended, (0) when this
//             one ends); its Σt_exec/n_t is t_d1 there; recorded, not judged; the value stays
//             for a full epoch next;
//   judged    the objective is computed and fed to the search, which picks the next value;
//   no-data   the counters read nothing (no task ran, or no task runtime counts): recorded,
//             not judged, the value stays. Two of them before any judged epoch switch the
//             knob to objective=time (warning W310): an application whose tasks run outside
//             aloe still gets tuned by its wall time.
// Everything runs under the knob's mutex, the value it publishes is one relaxed atomic: the
// application orders an epoch's readers after epoch_done() itself (it starts the epoch's
// tasks after the call returns), so no reader needs more.
#include <aloe/error.hpp>
#include <aloe/knob.hpp>
#include <aloe/stats.hpp>
#include <aloe/team.hpp>

#include "adapt/grain_objective.hpp"
#include "adapt/grain_search.hpp"
#include "loop/schedules/spec_text.hpp"
#include "runtime/plain_text.hpp"
#include "runtime/printable_text.hpp"
#include "runtime/report.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <utility>

namespace aloe {
namespace {

using runtime::printable;

constexpr std::size_t history_limit = 4096;  // records kept; a plot needs the search, not a long tail
constexpr int no_data_before_time = 2;       // no-data epochs before falling back to objective=time
constexpr std::int64_t max_option_count = 1'000'000;
constexpr std::string_view option_keys = "objective, search, epochs, tolerance, recheck, warmup, fixed";

std::atomic<knob_concurrency_limit_fn> process_limit{nullptr};

// The counters the task runtime registers (docs/counters.md), one reader each: this knob's
// own baselines, whatever other readers do.
class task_counters {
public:
    knob_counters read() {
        knob_counters c;
        c.overall_ns = sum(overall_.delta());
        c.exec_ns = sum(exec_.delta());
        c.tasks = sum(tasks_.delta());
        // Only when tasks ran: asking an idle process for its team would start one.
        c.cores = c.tasks > 0 ? team::global().size() : 1;
        return c;
    }

private:
    static double sum(const std::vector<counter_sample>& samples) {
        double s = 0;
        for (const counter_sample& x : samples) s += static_cast<double>(x.value);
        return s;
    }
    counter_reader overall_{"/threads{locality#0/total}/time/overall"};
    counter_reader exec_{"/threads{locality#0/total}/time/cumulative"};
    counter_reader tasks_{"/threads{locality#0/total}/count/cumulative"};
};

struct knob_options {
    knob_objective objective = knob_objective::overall;
    knob_search search = knob_search::golden;
    int epochs = 0;  // 0: the search's default
    double tolerance = 0.03;
    int recheck = 32;
    int warmup = 0;
    std::optional<std::int64_t> fixed;
};

std::string number_text(double x) { return loop::number(x); }

// `key=value[,key=value…]`, strict like a schedule string (loop/schedules/spec_text.hpp's
// readers, so numbers and words are read and refused alike). The reader words its messages
// "schedule '<spec>': …"; a knob's say "knob '<name>' options '<spec>': …".
knob_options parse_options(const std::string& name, std::string_view spec, const knob_range& range) {
    knob_options o;
    std::string message;
    const loop::spec_reader r(spec, message);
    const auto fail = [&]() {
        const std::string prefix = "schedule '" + printable(spec) + "': ";
        const std::string what = message.rfind(prefix, 0) == 0 ? message.substr(prefix.size()) : message;
        throw error("knob '" + printable(name) + "' options '" + printable(spec) + "': " + what);
    };
    std::vector<std::string> seen;
    std::string_view rest = spec;
    if (runtime::trim(rest).empty()) return o;
    while (rest.data() != nullptr) {
        const auto comma = rest.find(',');
        const std::string_view item = runtime::trim(rest.substr(0, comma));
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
        if (item.empty()) {
            r.fail("empty item");
            fail();
        }
        const auto eq = item.find('=');
        if (eq == std::string_view::npos) {
            r.fail("'" + printable(item) + "' is not key=value (keys: " + std::string(option_keys) + ")");
            fail();
        }
        const std::string key = loop::lower(runtime::trim(item.substr(0, eq)));
        const std::string_view value = runtime::trim(item.substr(eq + 1));
        if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
            r.fail("key '" + key + "' given twice");
            fail();
        }
        seen.push_back(key);
        bool ok = true;
        std::int64_t n = 0;
        if (key == "objective") {
            ok = r.read_word(key, value, {"overall", "idle-rate", "overhead", "overhead+wait", "time"}, o.objective);
        } else if (key == "search") {
            ok = r.read_word(key, value, {"golden", "nelder-mead", "bobyqa", "sweep"}, o.search);
        } else if (key == "epochs") {
            ok = r.read_int(key, value, 1, max_option_count, n);
            o.epochs = static_cast<int>(n);
        } else if (key == "tolerance") {
            ok = r.read_real(key, value, 0.001, 0.5, o.tolerance);
        } else if (key == "recheck") {
            ok = r.read_int(key, value, 0, max_option_count, n);
            o.recheck = static_cast<int>(n);
        } else if (key == "warmup") {
            ok = r.read_int(key, value, 0, max_option_count, n);
            o.warmup = static_cast<int>(n);
        } else if (key == "fixed") {
            ok = r.read_int(key, value, 1, std::numeric_limits<std::int64_t>::max(), n);
            if (ok && !range.contains(n))
                ok = r.fail("fixed=" + std::to_string(n) + " is not an admissible value (nearest: " +
                            std::to_string(range.nearest(n)) + ")");
            o.fixed = n;
        } else {
            ok = r.fail("unknown key '" + printable(key) + "' (keys: " + std::string(option_keys) + ")");
        }
        if (!ok) fail();
    }
    return o;
}

adapt::grain_search_kind kind_of(knob_search s) noexcept {
    switch (s) {
    case knob_search::golden: return adapt::grain_search_kind::golden;
    case knob_search::nelder_mead: return adapt::grain_search_kind::nelder_mead;
    case knob_search::bobyqa: return adapt::grain_search_kind::bobyqa;
    case knob_search::sweep: return adapt::grain_search_kind::sweep;
    }
    return adapt::grain_search_kind::golden;
}

}  // namespace

// ---- ranges ----

knob_range knob_range::divisors_of(std::int64_t n, std::int64_t lo, std::int64_t hi) {
    if (n < 1) throw error("knob_range::divisors_of: n=" + std::to_string(n) + " must be >= 1");
    if (lo > hi)
        throw error("knob_range::divisors_of: lo=" + std::to_string(lo) + " is above hi=" + std::to_string(hi));
    std::vector<std::int64_t> small, large;
    for (std::int64_t d = 1; d <= n / d; ++d) {
        if (n % d != 0) continue;
        small.push_back(d);
        if (d != n / d) large.push_back(n / d);
    }
    std::vector<std::int64_t> v;
    for (const std::int64_t d : small)
        if (d >= lo && d <= hi) v.push_back(d);
    for (auto it = large.rbegin(); it != large.rend(); ++it)
        if (*it >= lo && *it <= hi) v.push_back(*it);
    if (v.empty())
        throw error("knob_range::divisors_of: no divisor of " + std::to_string(n) + " lies in [" +
                    std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return knob_range(std::move(v));
}

knob_range knob_range::geometric(std::int64_t lo, std::int64_t hi, double ratio) {
    if (lo < 1) throw error("knob_range::geometric: lo=" + std::to_string(lo) + " must be >= 1");
    if (hi < lo) throw error("knob_range::geometric: hi=" + std::to_string(hi) + " is below lo=" + std::to_string(lo));
    if (!(ratio > 1 && ratio <= 16))
        throw error("knob_range::geometric: ratio=" + number_text(ratio) + " must be in (1, 16]");
    std::vector<std::int64_t> v;
    const double step = std::log(ratio), top = std::log(static_cast<double>(hi));
    for (double x = std::log(static_cast<double>(lo)); x < top; x += step) {
        const auto g = static_cast<std::int64_t>(std::llround(std::exp(x)));
        if (g >= hi) break;
        if (v.empty() || g > v.back()) v.push_back(g);
    }
    if (v.empty() || v.back() != hi) v.push_back(hi);
    return knob_range(std::move(v));
}

knob_range knob_range::values(std::vector<std::int64_t> admissible) {
    if (admissible.empty()) throw error("knob_range::values: no values");
    std::sort(admissible.begin(), admissible.end());
    admissible.erase(std::unique(admissible.begin(), admissible.end()), admissible.end());
    if (admissible.front() < 1)
        throw error("knob_range::values: value " + std::to_string(admissible.front()) + " must be >= 1");
    return knob_range(std::move(admissible));
}

std::int64_t knob_range::nearest(std::int64_t v) const noexcept {
    const double x = std::log(static_cast<double>(std::max<std::int64_t>(v, 1)));
    const auto it = std::lower_bound(values_.begin(), values_.end(), std::max<std::int64_t>(v, 1));
    if (it == values_.begin()) return values_.front();
    if (it == values_.end()) return values_.back();
    const std::int64_t above = *it, below = *(it - 1);
    return x - std::log(static_cast<double>(below)) <= std::log(static_cast<double>(above)) - x ? below : above;
}

bool knob_range::contains(std::int64_t v) const noexcept {
    return std::binary_search(values_.begin(), values_.end(), v);
}

// ---- names ----

std::string_view to_string(knob_objective objective) noexcept {
    switch (objective) {
    case knob_objective::overall: return "overall";
    case knob_objective::idle_rate: return "idle-rate";
    case knob_objective::overhead: return "overhead";
    case knob_objective::overhead_wait: return "overhead+wait";
    case knob_objective::time: return "time";
    }
    return "?";
}

std::string_view to_string(knob_search search) noexcept {
    return adapt::grain_search_names[static_cast<std::size_t>(kind_of(search))];
}

std::string_view to_string(knob_epoch_kind kind) noexcept {
    switch (kind) {
    case knob_epoch_kind::warmup: return "warmup";
    case knob_epoch_kind::search: return "search";
    case knob_epoch_kind::baseline: return "baseline";
    case knob_epoch_kind::converged: return "converged";
    case knob_epoch_kind::recheck: return "recheck";
    case knob_epoch_kind::fixed: return "fixed";
    case knob_epoch_kind::no_data: return "no-data";
    }
    return "?";
}

knob_concurrency_limit_fn set_knob_concurrency_limit(knob_concurrency_limit_fn limit) noexcept {
    return process_limit.exchange(limit);
}

// ---- the knob ----

struct knob::state {
    state(std::string n, knob_range r, knob_sources src)
        : name(std::move(n)), range(std::move(r)), sources(std::move(src)) {}

    std::string name;
    knob_range range;
    knob_options options;
    knob_sources sources;
    std::optional<adapt::grain_search> search;  // none when fixed
    std::optional<task_counters> readers;       // when sources.counters is empty

    mutable std::mutex mutex;
    std::chrono::steady_clock::time_point epoch_start = std::chrono::steady_clock::now();
    std::int64_t current = 0;
    int epochs = 0;
    int no_data_run = 0;
    bool judged_any = false;
    bool one_core = false;                  // the running epoch is a baseline epoch
    std::map<std::int64_t, double> t_d1;    // measured one-core task durations, ns
    adapt::running_stats fixed_stats;       // objective at a fixed value
    std::vector<knob_epoch> history;

    knob_counters read_counters() { return sources.counters ? sources.counters() : readers->read(); }

    void limit(int workers) {
        if (sources.limit_concurrency) sources.limit_concurrency(workers);
        else if (const knob_concurrency_limit_fn f = process_limit.load()) f(workers);
    }

    bool needs_baseline(std::int64_t value) const {
        return options.objective == knob_objective::overhead_wait && !sources.one_core_task_ns &&
               t_d1.find(value) == t_d1.end();
    }

    double baseline_at(std::int64_t value) const {
        if (sources.one_core_task_ns) return sources.one_core_task_ns(value);
        const auto it = t_d1.find(value);
        return it == t_d1.end() ? std::numeric_limits<double>::quiet_NaN() : it->second;
    }

    std::int64_t best() const { return search ? search->best_value() : current; }
    double best_objective() const {
        if (search) {
            const double b = search->best_objective();
            return std::isinf(b) ? std::numeric_limits<double>::quiet_NaN() : b;
        }
        return fixed_stats.n > 0 ? fixed_stats.mean : std::numeric_limits<double>::quiet_NaN();
    }
    bool converged() const { return !search || search->state() == adapt::grain_search_state::converged; }

    // After an epoch: the next value, and the one-core limit if its epoch is a baseline.
    std::int64_t next_value() {
        const std::int64_t next = search ? search->value_to_run() : current;
        if (epochs >= options.warmup && needs_baseline(next)) {
            limit(1);
            one_core = true;
        }
        current = next;
        return next;
    }

    void record(knob_epoch e) {
        e.best_value = best();
        e.best_objective = best_objective();
        e.converged = converged();
        if (history.size() < history_limit) history.push_back(e);
        ++epochs;
    }
};

knob::knob(std::string name, knob_range range, std::int64_t start, std::string_view options, knob_sources sources)
    : value_(0), state_(std::make_unique<state>(std::move(name), std::move(range), std::move(sources))) {
    state& s = *state_;
    s.options = parse_options(s.name, options, s.range);
    if (s.options.objective == knob_objective::overhead_wait && !s.sources.one_core_task_ns &&
        !s.sources.limit_concurrency && process_limit.load() == nullptr)
        throw error("knob '" + printable(s.name) +
                    "': objective=overhead+wait needs the one-core task duration t_d1: pass "
                    "knob_sources::one_core_task_ns, or a concurrency limit to measure it with "
                    "(knob_sources::limit_concurrency, set_knob_concurrency_limit)");
    if (!s.sources.counters) s.readers.emplace();
    if (s.options.fixed) {
        s.current = *s.options.fixed;
    } else {
        adapt::grain_search_options o;
        o.kind = kind_of(s.options.search);
        o.max_evaluations = s.options.epochs;
        o.tolerance = s.options.tolerance;
        o.recheck_every = s.options.recheck;
        try {
            s.search.emplace(s.range.admissible(), start, o);
        } catch (const std::invalid_argument& e) {
            throw error("knob '" + printable(s.name) + "': " + e.what());
        }
        s.current = s.search->value_to_run();
    }
    value_.store(s.next_value(), std::memory_order_relaxed);
}

knob::~knob() {
    if (state_ && state_->one_core) state_->limit(0);
}

void knob::epoch_begin() {
    state& s = *state_;
    std::lock_guard lock(s.mutex);
    s.read_counters();  // moves the baselines: what ran since the last epoch does not count
    s.epoch_start = std::chrono::steady_clock::now();
}

void knob::epoch_done(const knob_epoch_info& info) {
    state& s = *state_;
    std::lock_guard lock(s.mutex);
    const auto now = std::chrono::steady_clock::now();
    knob_epoch e;
    e.epoch = s.epochs;
    e.value = s.current;
    e.work = info.work;
    // NaN is no measurement, as infinity is (the search skips such an epoch), not "measure it"
    // (< 0): a made-up time of microseconds skewed the search.
    e.wall_seconds = std::isnan(info.wall_seconds) ? std::numeric_limits<double>::infinity()
                     : info.wall_seconds >= 0      ? info.wall_seconds
                                                   : std::chrono::duration<double>(now - s.epoch_start).count();
    e.counters = s.read_counters();
    s.epoch_start = std::chrono::steady_clock::now();

    if (s.one_core) {  // a baseline epoch: t_d1 at this value
        s.limit(0);
        s.one_core = false;
        const double t = adapt::one_core_task_ns(e.counters);
        if (std::isfinite(t)) s.t_d1[s.current] = t;  // no task ran: measured again next time
        e.kind = knob_epoch_kind::baseline;
        s.record(e);
        value_.store(s.next_value(), std::memory_order_relaxed);
        return;
    }
    if (s.epochs < s.options.warmup) {
        e.kind = knob_epoch_kind::warmup;
        s.record(e);
        value_.store(s.next_value(), std::memory_order_relaxed);
        return;
    }

    adapt::epoch_measure m{e.counters, e.wall_seconds, e.work, s.baseline_at(s.current)};
    adapt::objective_result r = adapt::evaluate_objective(s.options.objective, m);
    if (r.status == adapt::objective_status::no_time && !s.judged_any && ++s.no_data_run >= no_data_before_time) {
        runtime::report_once({runtime::report_level::warning, runtime::report_category::loop, "W310",
                              "knob '" + printable(s.name) + "': objective=" +
                                  std::string(to_string(s.options.objective)) +
                                  " reads the task counters, which counted no task time in its first " +
                                  std::to_string(no_data_before_time) + " epochs",
                              "using objective=time"});
        s.options.objective = knob_objective::time;
        r = adapt::evaluate_objective(s.options.objective, m);
    }
    if (!s.search) e.kind = knob_epoch_kind::fixed;
    else if (s.search->state() == adapt::grain_search_state::searching) e.kind = knob_epoch_kind::search;
    else e.kind = s.current == s.search->best_value() ? knob_epoch_kind::converged : knob_epoch_kind::recheck;
    if (r.valid()) {
        s.no_data_run = 0;
        s.judged_any = true;
        e.objective = r.value;
        e.wait_clamped = r.status == adapt::objective_status::wait_clamped;
        if (s.search) s.search->observe(r.value);
        else s.fixed_stats.add(r.value);
    } else if (e.kind != knob_epoch_kind::fixed) {
        e.kind = knob_epoch_kind::no_data;
    }
    s.record(e);
    value_.store(s.next_value(), std::memory_order_relaxed);
}

bool knob::converged() const {
    std::lock_guard lock(state_->mutex);
    return state_->converged();
}

std::int64_t knob::best() const {
    std::lock_guard lock(state_->mutex);
    return state_->best();
}

double knob::best_objective() const {
    std::lock_guard lock(state_->mutex);
    return state_->best_objective();
}

int knob::epochs() const {
    std::lock_guard lock(state_->mutex);
    return state_->epochs;
}

std::string knob::reason() const {
    std::lock_guard lock(state_->mutex);
    return state_->search ? std::string(adapt::to_string(state_->search->stop_reason())) : "fixed";
}

std::vector<knob_epoch> knob::history() const {
    std::lock_guard lock(state_->mutex);
    return state_->history;
}

const std::string& knob::name() const noexcept { return state_->name; }
const knob_range& knob::range() const noexcept { return state_->range; }

std::string knob::options() const {
    std::lock_guard lock(state_->mutex);
    const state& s = *state_;
    const knob_options& o = s.options;
    const int epochs = s.search ? s.search->budget() : o.epochs > 0 ? o.epochs : 10;
    std::string out = "objective=" + std::string(to_string(o.objective)) + ",search=" +
                      std::string(to_string(o.search)) + ",epochs=" + std::to_string(epochs) +
                      ",tolerance=" + number_text(o.tolerance) + ",recheck=" + std::to_string(o.recheck) +
                      ",warmup=" + std::to_string(o.warmup);
    if (o.fixed) out += ",fixed=" + std::to_string(*o.fixed);
    return out;
}

}  // namespace aloe

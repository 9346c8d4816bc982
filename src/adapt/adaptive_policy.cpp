#include "adapt/adaptive_policy.hpp"
#include "adapt/task_loop_runner.hpp"

#include "adapt/median.hpp"
#include "adapt/nlopt_search.hpp"
#include "adapt/probes.hpp"
#include "adapt/tuning_file.hpp"
#include "loop/schedules/weighted.hpp"
#include "runtime/plain_text.hpp"
#include "runtime/report.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <sstream>
#include <utility>

#include <unistd.h>

namespace aloe::adapt {

namespace {

constexpr double fs_step = 0.05;         // uSched's ±0.05, and the sweep's grid
constexpr int sweep_samples = 2;         // invocations per fs in a sweep
constexpr int nlopt_samples = 2;         // invocations per point NLopt asks for
constexpr int nlopt_evaluations = 12;
constexpr int watch_samples = 8;         // drift watch window (drift_watch.hpp), ±10%
constexpr std::size_t recent = 8;        // window of live estimates (q, t1, lateness)
constexpr double unprobed_dequeue_s = 60e-9;  // q when the start-up probe did not run

double seconds_between(runtime::ticks a, runtime::ticks b) noexcept {
    return b > a ? runtime::ticks_to_seconds(b - a) : 0.0;
}

template <class T>
void push_recent(std::vector<T>& v, T x, std::size_t limit = recent) {
    v.push_back(x);
    if (v.size() > limit) v.erase(v.begin());
}

using runtime::fixed;

std::string micros(double seconds) { return fixed(seconds * 1e6, 2) + " us"; }

}  // namespace

// What one invocation's records say, in seconds.
struct adaptive_policy::run_facts {
    double seconds = 0;           // fork to join
    double busy_s = 0;            // summed over threads: the work plus what scheduling cost
    double imbalance = 1;         // max/mean busy
    double busy_max_s = 0;        // the busiest thread's start to end
    double busy_mean_s = 0;
    double lateness_s = 0;        // max over threads of static time beyond the mean pace
    double chunks = 0;            // dynamic chunks, all threads
    bool static_only = true;      // no dynamic chunk ran
    std::vector<double> speed;    // iterations per second of busy time, per thread
};

adaptive_policy::adaptive_policy(const schedule& spec, const machine_probes& probes, const adaptive_options& options,
                                 tuning_memory* memory, std::string site)
    : spec_(spec), probes_(probes), options_(options), drift_(watch_samples, 0.10), memory_(memory), site_(std::move(site)) {}

adaptive_policy::~adaptive_policy() = default;

std::int64_t adaptive_policy::chunk_for(double dequeue_s, double iteration_s, double overhead,
                                        std::uint64_t dynamic_iterations, int threads) noexcept {
    double c = 1;
    if (iteration_s > 0 && dequeue_s > 0 && overhead > 0) c = std::ceil(dequeue_s / (overhead * iteration_s));
    // At least four chunks per thread of the dynamic part, or balancing has nothing to move.
    const double cap = std::max(1.0, std::floor(static_cast<double>(dynamic_iterations) / (4.0 * std::max(threads, 1))));
    return static_cast<std::int64_t>(std::clamp(c, 1.0, cap));
}

std::int64_t adaptive_policy::coarse_chunk_for(std::int64_t chunk, double iteration_s, std::uint64_t iterations,
                                               int threads, std::size_t page_bytes) noexcept {
    double c = 4.0 * static_cast<double>(std::max<std::int64_t>(chunk, 1));
    // An iteration this short is streaming a few bytes: chunks of a page of doubles keep every
    // array it streams page-aligned per thread (prefetchers stop at page boundaries; a page
    // shared by two threads' chunks moves between their caches).
    if (iteration_s > 0 && iteration_s < 50e-9) c = std::max(c, static_cast<double>(page_bytes / sizeof(double)));
    const double cap = std::max(1.0, std::floor(static_cast<double>(iterations) / (4.0 * std::max(threads, 1))));
    return static_cast<std::int64_t>(std::clamp(c, 1.0, cap));
}

double adaptive_policy::dequeue_s() const noexcept {
    // The start-up probe (a contended shared counter's dequeue) is the floor; live estimates
    // from this site's dynamic parts raise it when chunks cost more here (moved data missing
    // in cache). Of those, the least: noise only ever adds busy time (a preempted worker is
    // busy on the clock), and a W measured in a disturbed run drags estimates towards 0,
    // which the floor absorbs.
    // Without the probe (a site of the native API that runs before any parallel_for), the
    // floor is what a dequeue from a counter another core wrote last costs: 50–60 ns for
    // libgomp's dynamic,1 on the 2-core VM of MACHINE-NOTES.md, more on bigger sockets. A
    // floor of 0 gave memory-bound loops of 0.6 ns iterations chunks of 1 (issue 14).
    const double floor = probes_.dequeue_s > 0 ? probes_.dequeue_s : unprobed_dequeue_s;
    if (live_dequeue_s_.size() >= 2)
        return std::max(floor, *std::min_element(live_dequeue_s_.begin(), live_dequeue_s_.end()));
    return floor;
}

std::int64_t adaptive_policy::dynamic_chunk(double fs) const noexcept {
    if (spec_.chunk() > 0) return spec_.chunk();
    const auto dynamic = static_cast<std::uint64_t>(std::llround((1.0 - fs) * static_cast<double>(iterations_)));
    return chunk_for(dequeue_s(), iteration_s_, options_.chunk_overhead, dynamic, threads_);
}

adaptive_policy::choice adaptive_policy::choose(std::uint64_t iterations, int threads) {
    iterations_ = iterations;
    if (threads != threads_) {
        const bool first = threads_ == 0;
        weighted_ = false;  // weights were per thread of another team
        weights_.clear();
        replay_weights_.clear();
        profile_ = cost_profile();  // blocks of another count of threads
        slow_runs_ = 0;
        threads_ = threads;
        if (!first && race_) {
            // The race's candidates and samples were for another team: start over.
            race_.reset();
            candidates_.clear();
            phase_ = phase::probe_static;
            static_runs_ = 0;
            ++searches_;
            reason_ = "a team of " + std::to_string(threads) + " threads: probing again";
        }
        if (first && memory_ != nullptr && !site_.empty())
            if (const std::optional<site_memory> m = memory_->recall(site_, threads)) resume(*m);
    }
    if (race_ && (phase_ == phase::searching || phase_ == phase::converged)) {
        running_ = race_->to_run();
        const candidate& k = candidates_[static_cast<std::size_t>(running_)];
        fs_ = k.fs;
        chunk_ = k.chunk;
        current_ = k.run;
        const bool blocks = k.run.kind() == schedule_kind::static_block || k.run.kind() == schedule_kind::staggered;
        if (k.replay && (replay_weights_.size() != static_cast<std::size_t>(threads) ||
                         replay_split_runs_ != profile_.runs())) {
            // Split again only when the profile learned something since (a walk of its bins).
            replay_weights_.resize(static_cast<std::size_t>(threads));
            profile_.split(replay_weights_);
            replay_split_runs_ = profile_.runs();
        }
        const std::vector<double>* w = k.replay ? &replay_weights_ : weighted_ && blocks ? &weights_ : nullptr;
        return {current_, w != nullptr && w->size() == static_cast<std::size_t>(threads) ? std::span<const double>(*w)
                                                                                        : std::span<const double>()};
    }
    running_ = -1;
    double fs = fs_;
    std::int64_t chunk = 0;
    switch (phase_) {
        case phase::probe_static: fs = 1; break;
        case phase::probe_dynamic: fs = 0; break;
        case phase::searching:
            if (local_) {
                fs = local_->value_to_run();
            } else if (nlopt_) {
                const auto point = nlopt_->point_to_run();
                fs = std::round(point[0] * 100) / 100;
                if (point.size() > 1) chunk = std::max<std::int64_t>(1, std::llround(std::exp2(point[1])));
            } else {
                fs = std::min(1.0, sweep_index_ * fs_step);
            }
            break;
        case phase::converged: chunk = chunk_; break;
    }
    // Steps of 0.05 add up to 0.9500000000000001; a millionth is finer than any search step,
    // and the schedule then prints as the fraction it means.
    fs = std::round(fs * 1e6) / 1e6;
    if (fs < 1 && chunk == 0) chunk = dynamic_chunk(fs);
    if (fs >= 1) chunk = 0;
    // Rebuild the value only when it changes (building one parses a string: about a microsecond).
    const bool run_static = fs >= 1 && !weighted_;
    const bool unchanged = run_static ? current_.kind() == schedule_kind::static_block
                                      : current_.kind() == schedule_kind::staggered && current_.static_fraction() == fs &&
                                            current_.chunk() == std::max<std::int64_t>(chunk, 1);
    if (!unchanged) current_ = run_static ? schedule() : schedule::staggered(fs, std::max<std::int64_t>(chunk, 1));
    fs_ = fs;
    chunk_ = chunk;
    return {current_, weighted_ ? std::span<const double>(weights_) : std::span<const double>()};
}

adaptive_policy::run_facts adaptive_policy::facts_of(std::span<const loop::worker_record> records) const {
    run_facts f;
    double busy_max = 0;
    for (const loop::worker_record& r : records) {
        const double busy = seconds_between(r.start, r.end);
        busy_max = std::max(busy_max, busy);
        f.busy_s += busy;
        const std::uint64_t iterations = r.static_iterations + r.dynamic_iterations;
        f.speed.push_back(busy > 0 ? static_cast<double>(iterations) / busy : 0.0);
        f.chunks += static_cast<double>(r.chunks);
    }
    f.static_only = f.chunks == 0;
    const double busy_mean = f.busy_s / static_cast<double>(std::max<std::size_t>(records.size(), 1));
    f.imbalance = busy_mean > 0 ? busy_max / busy_mean : 1.0;
    f.busy_max_s = busy_max;
    f.busy_mean_s = busy_mean;
    if (iteration_s_ > 0) {
        for (const loop::worker_record& r : records) {
            const double late = seconds_between(r.start, r.static_end) -
                                iteration_s_ * static_cast<double>(r.static_iterations);
            f.lateness_s = std::max(f.lateness_s, late);
        }
    }
    return f;
}

void adaptive_policy::learn_profile(std::span<const loop::worker_record> records) {
    // Static blocks lie in thread order, each where the one before ended; its busy time is
    // its cost. Runs with dynamic chunks say nothing of where their work lay.
    if (records.size() < 2 || iterations_ == 0) return;
    std::vector<cost_profile::block_time>& blocks = block_times_;  // its capacity stays: no allocation per run
    blocks.clear();
    std::uint64_t begin = 0;
    const auto n = static_cast<double>(iterations_);
    for (const loop::worker_record& r : records) {
        if (r.dynamic_iterations != 0 || r.chunks != 0) return;
        const std::uint64_t end = begin + r.static_iterations;
        if (end > iterations_) return;
        blocks.push_back({static_cast<double>(begin) / n, static_cast<double>(end) / n, seconds_between(r.start, r.end)});
        begin = end;
    }
    if (begin != iterations_) return;
    profile_.observe(blocks);
}

bool adaptive_policy::quiet(const run_facts& f) const noexcept {
    // Balanced busy times are not enough: a thread whose core another program holds starts
    // late and then runs its block at full speed (a spinner on its CPU: busy times equal,
    // the run three times longer). So the wall time must also be the busiest thread's, give
    // or take the tolerance, or 20 µs of fork and join.
    // Both with an allowance for what no schedule can move: a few microseconds of wake-up
    // and fork jitter (a 13 µs loop whose threads end 1.5 µs apart is "8% imbalanced").
    const double idle = f.seconds - f.busy_max_s;
    return balanced(f) && idle <= std::max(options_.balance_tolerance * f.seconds, 20e-6);
}

bool adaptive_policy::balanced(const run_facts& f) const noexcept {
    return f.busy_max_s - f.busy_mean_s <= std::max(options_.balance_tolerance * f.busy_mean_s, 5e-6);
}

void adaptive_policy::learn(const run_facts& f) {
    // The loop's work W (one core's time) is what a run without dynamic chunks keeps busy:
    // the least such sum seen is the least disturbed. t1 = W / N is then the mean pace (the
    // thesis's minimum over threads assumes equal iterations; on a ramp it would be the
    // cheapest thread's pace and make every other cost look like overhead).
    if (f.static_only && f.busy_s > 0 && (static_busy_s_ == 0 || f.busy_s < static_busy_s_)) {
        static_busy_s_ = f.busy_s;
        iteration_s_ = static_busy_s_ / static_cast<double>(std::max<std::uint64_t>(iterations_, 1));
    }
    // q from a live run with dynamic chunks: the busy time beyond W, per chunk. W is the same
    // whoever runs which iteration, so this holds for uneven iterations too, and it counts
    // what a chunk really costs here (the dequeue and the cache misses of moved work).
    if (!f.static_only && static_busy_s_ > 0)
        push_recent(live_dequeue_s_, std::max(0.0, (f.busy_s - static_busy_s_) / f.chunks));
    watch_speeds(f);
}

void adaptive_policy::watch_speeds(const run_facts& f) {
    const std::size_t p = f.speed.size();
    if (p < 2) return;
    // Slowest thread against the median of the others.
    std::size_t slow = 0;
    for (std::size_t t = 1; t < p; ++t)
        if (f.speed[t] < f.speed[slow]) slow = t;
    std::vector<double> others;
    for (std::size_t t = 0; t < p; ++t)
        if (t != slow) others.push_back(f.speed[t]);
    const double reference = median(others);
    const bool is_slow = reference > 0 && f.speed[slow] < options_.slow_core_ratio * reference;
    if (is_slow && static_cast<int>(slow) == slow_thread_) ++slow_runs_;
    else slow_runs_ = is_slow ? 1 : 0;
    slow_thread_ = is_slow ? static_cast<int>(slow) : -1;

    if (weighted_) {
        loop::weighted_split::blend_weights(weights_, f.speed);
        return;
    }
    // A race has its own weighted candidate (replay) and judges it against the rest; a slow
    // core that arrives after it shows as drift.
    if (slow_runs_ < options_.slow_core_runs || race_) return;
    weighted_ = true;
    weights_.assign(p, 1.0);
    loop::weighted_split::blend_weights(weights_, f.speed);
    // A slow core, or iterations that cost more in one thread's block: either way, blocks
    // sized by measured speed balance it without moving work at run time.
    const std::string why = "thread " + std::to_string(slow) + " ran at " + fixed(f.speed[slow] / reference) +
                            " of the others' speed for " + std::to_string(slow_runs_) +
                            " runs (slow core or costlier iterations): weighted blocks";
    if (phase_ == phase::converged) reopen(why);
    else reason_ = why;
}

void adaptive_policy::read_counters_of(std::string_view instance) {
    if (!instance.empty()) time_reader_.emplace("/loop{" + std::string(instance) + "}/time");
}

void adaptive_policy::observe(const loop::loop_outcome& o) {
    // Fork to join from the records' clock when the runner gave them: the counter's delta
    // is the same time, but reading it builds a vector of named samples per run (a third of
    // what observing cost a 13 µs loop, issue 14).
    if (o.join > o.fork) return observe(o.records, o.fork, o.join);
    if (time_reader_) {
        const std::vector<counter_sample> d = time_reader_->delta();
        if (d.size() == 1 && d.front().value > 0) return observe_run(o.records, static_cast<double>(d.front().value) * 1e-9);
    }
    observe(o.records, o.fork, o.join);
}

void adaptive_policy::observe(std::span<const loop::worker_record> records, runtime::ticks fork,
                              runtime::ticks join) {
    observe_run(records, seconds_between(fork, join));
}

void adaptive_policy::observe_run(std::span<const loop::worker_record> records, double seconds) {
    run_facts f = facts_of(records);
    f.seconds = seconds;
    ++invocations_;
    if (steps_.size() < options_.trace_limit)
        steps_.push_back({current_.to_string(), fs_, chunk_, f.seconds});
    if (phase_ != phase::converged) ++trials_;
    const phase before = phase_;
    learn(f);
    // Balanced static runs teach the profile nothing equal blocks do not already do (nor do
    // threads a few µs apart: wake-up jitter, and a profile costs a site 1 KB), and a site
    // settled on anything but replay has no use for it (a 13 µs loop keeps its cost).
    const bool replaying = running_ >= 0 && candidates_[static_cast<std::size_t>(running_)].replay;
    if (f.static_only && (phase_ != phase::converged || replaying) && (profile_.known() || !balanced(f)))
        learn_profile(records);
    if (phase_ != before) return;  // learning re-opened the search: this run judged the old choice
    if (running_ >= 0 && race_) {
        return race_observed(f.seconds / static_cast<double>(std::max<std::uint64_t>(iterations_, 1)));
    }
    switch (phase_) {
        case phase::probe_static: return after_probe_static(f);
        case phase::probe_dynamic: return after_probe_dynamic(f);
        case phase::searching: return judged_search(f.seconds);
        case phase::converged: break;
    }
    if (fs_ >= 1) {
        // On static blocks: late static parts in several recent runs mean noise or imbalance
        // arrived; look again.
        if (f.lateness_s > 0) push_recent(lateness_s_, f.lateness_s);
        push_recent(late_, !quiet(f), static_cast<std::size_t>(options_.late_window));
        if (std::count(late_.begin(), late_.end(), true) >= options_.late_runs_to_reopen) {
            static_seconds_ = f.seconds;
            reopen("late static parts in " + std::to_string(std::count(late_.begin(), late_.end(), true)) + " of the last " +
                   std::to_string(late_.size()) + " runs");
        }
        return;
    }
    if (local_) {
        local_->observe(f.seconds);
        if (local_->state() == tuner_state::searching) {
            ++searches_;
            phase_ = phase::searching;
            reason_ = "drift: the time at fs=" + fixed(fs_) + " changed; searching again";
        }
        return;
    }
    // After nlopt or sweep: the same watch as local search's.
    if (drift_.observe(f.seconds))
        reopen("drift: the converged time changed by " + fixed(100 * drift_.last_change(), 0) + "%");
}

void adaptive_policy::after_probe_static(const run_facts& f) {
    // Two static runs: a site's first invocation pays for cold caches and first touch, so
    // the faster of the two speaks for the loop.
    if (f.lateness_s > 0) push_recent(lateness_s_, f.lateness_s);
    if (static_runs_ == 0 || f.seconds < static_seconds_) {
        static_seconds_ = f.seconds;
        static_imbalance_ = f.imbalance;
    }
    static_quiet_ = (static_runs_ == 0 || static_quiet_) && quiet(f);
    if (static_runs_ == 0 && spec_.search() == adaptive_search::race && f.imbalance > 1.5) {
        // One static run says enough: busy times this uneven (cold caches or not) make static
        // lose what the race would drop it for at once, and a second run of it costs a whole
        // invocation (a tenth of mandelbrot's 22). It leaves the race; replay, whose blocks
        // the run's cost profile evens out, stays (a slow core at half speed is 1.33 on two
        // threads: static stays for it too).
        static_out_ = true;
        phase_ = phase::probe_dynamic;
        reason_ = "probing: static run imbalanced (max/mean busy " + fixed(f.imbalance, 3) + "); one dynamic run next";
        return;
    }
    if (static_runs_ == 1) {
        // The warm run: the race's first static sample.
        probe_static_per_it_ = f.seconds / static_cast<double>(std::max<std::uint64_t>(iterations_, 1));
    }
    if (++static_runs_ < 2) {
        reason_ = "probing: second static run";
        return;
    }
    static_runs_ = 0;
    if (static_quiet_ && !weighted_) {
        model_fs_ = 1;
        return converge("balanced and quiet (max/mean busy " + fixed(static_imbalance_, 3) + "): static");
    }
    phase_ = phase::probe_dynamic;
    reason_ = "probing: static runs imbalanced or late (max/mean busy " + fixed(static_imbalance_, 3) +
              "); one dynamic run next";
}

void adaptive_policy::after_probe_dynamic(const run_facts& f) {
    const double chunks_per_thread = f.chunks / std::max(threads_, 1);
    const double overhead = chunks_per_thread * dequeue_s();
    loop_measures m;
    m.threads = threads_;
    m.iterations = iterations_;
    m.iteration_s = iteration_s_;
    m.dequeue_s = dequeue_s() / static_cast<double>(std::max<std::int64_t>(chunk_, 1));  // per iteration
    delay_app_s_ = std::max(0.0, static_seconds_ - f.seconds - overhead);
    // Lateness beyond what the application's own imbalance explains is noise.
    const double late = lateness_s_.empty() ? 0.0 : median(lateness_s_);
    delay_noise_s_ = std::max(probes_.noise_s, late - delay_app_s_);
    m.app_imbalance_s = delay_app_s_;
    m.noise_s = delay_noise_s_;
    model_ = model_dynamic_fraction(
        m, spec_.delay() == delay_model::pessimistic ? delay_combination::pessimistic : delay_combination::optimistic);
    model_fs_ = 1 - model_.dynamic_fraction;
    if (spec_.search() == adaptive_search::race) return start_race(f.seconds);
    start_search();
}

void adaptive_policy::start_search() {
    ++searches_;
    phase_ = phase::searching;
    local_.reset();
    nlopt_.reset();
    sweep_index_ = -1;
    switch (spec_.search()) {
        case adaptive_search::local: {
            local_search_options o;
            o.step = fs_step;
            o.samples_per_trial = 3;
            o.statistic = sample_statistic::mean;
            o.max_trials = options_.local_max_trials;
            o.drift_patience = watch_samples;
            local_ = std::make_unique<local_search_tuner>(model_fs_, o);
            reason_ = "searching: local ±0.05 from the model's fs=" + fixed(model_fs_) + " (" +
                      std::string(model_.reason) + ")";
            return;
        }
        case adaptive_search::nlopt: {
            std::vector<knob_range> knobs{{"fs", 0.0, 1.0}};
            std::vector<double> start{model_fs_};
            if (spec_.chunk() == 0) {
                const double cap = std::max(1.0, static_cast<double>(iterations_) / (4.0 * std::max(threads_, 1)));
                knobs.push_back({"log2_chunk", 0.0, std::max(1.0, std::log2(cap))});
                start.push_back(std::log2(static_cast<double>(dynamic_chunk(std::min(model_fs_, 0.95)))));
            }
            nlopt_search_options o;
            o.samples_per_point = nlopt_samples;
            o.max_evaluations = nlopt_evaluations;
            // Nelder–Mead: on noisy times (2%, medians of 3) it ended more than 5% above the
            // minimum in 0.2% of 500 seeded searches, Subplex in 3.4% (nlopt_search_test).
            o.algorithm = NLOPT_LN_NELDERMEAD;
            nlopt_ = std::make_unique<nlopt_search>(std::move(knobs), std::move(start), o);
            reason_ = "searching: NLopt over fs" + std::string(spec_.chunk() == 0 ? " and chunk" : "") +
                      " from the model's fs=" + fixed(model_fs_);
            return;
        }
        case adaptive_search::race: return;  // start_race runs it, after the dynamic probe
        case adaptive_search::sweep:
            sweep_index_ = 0;
            sweep_samples_.clear();
            sweep_best_seconds_ = 0;
            reason_ = "searching: sweep of fs = 0, 0.05, …, 1";
            return;
    }
}

void adaptive_policy::judged_search(double seconds) {
    if (local_) {
        local_->observe(seconds);
        if (local_->state() == tuner_state::converged) {
            fs_ = local_->best_value();
            chunk_ = fs_ < 1 ? dynamic_chunk(fs_) : 0;
            converge("local search: " + std::string(local_->last_reason()) + " at fs=" + fixed(fs_));
        }
        return;
    }
    if (nlopt_) {
        nlopt_->observe(seconds);
        if (nlopt_->done()) {
            const auto best = nlopt_->best_point();
            fs_ = std::round(best[0] * 100) / 100;
            chunk_ = fs_ >= 1 ? 0
                     : best.size() > 1 ? std::max<std::int64_t>(1, std::llround(std::exp2(best[1])))
                                       : dynamic_chunk(fs_);
            converge("NLopt: " + std::string(nlopt_->reason()) + " after " + std::to_string(nlopt_->evaluations()) +
                     " points, fs=" + fixed(fs_) + ", chunk=" + std::to_string(chunk_));
        }
        return;
    }
    sweep_samples_.push_back(seconds);
    if (static_cast<int>(sweep_samples_.size()) < sweep_samples) return;
    const double t = mean(sweep_samples_);
    sweep_samples_.clear();
    const double fs = std::min(1.0, sweep_index_ * fs_step);
    if (sweep_best_seconds_ == 0 || t < sweep_best_seconds_) {
        sweep_best_seconds_ = t;
        sweep_best_fs_ = fs;
    }
    if (fs < 1) {
        ++sweep_index_;
        return;
    }
    fs_ = sweep_best_fs_;
    chunk_ = fs_ < 1 ? dynamic_chunk(fs_) : 0;
    converge("sweep: best of 21 fractions at fs=" + fixed(fs_));
}

namespace {

std::string name_of(const schedule& run, bool replay) { return replay ? "replay" : run.to_string(); }

// Weighted blocks with no dynamic part: what the replay candidate runs.
schedule replay_run() { return schedule::staggered(1, 1); }

std::size_t page_bytes() noexcept {
    static const long bytes = sysconf(_SC_PAGESIZE);
    return bytes > 0 ? static_cast<std::size_t>(bytes) : 4096;
}

// The fs at the vertex of the parabola through (0, y0), (f, yf), (1, y1); NaN when it opens
// downwards or f is not strictly between 0 and 1.
double parabola_vertex(double y0, double f, double yf, double y1) noexcept {
    if (!(f > 0 && f < 1)) return std::nan("");
    const double a = ((yf - y0) - f * (y1 - y0)) / (f * f - f);
    const double b = (y1 - y0) - a;
    return a > 0 ? -b / (2 * a) : std::nan("");
}

}  // namespace

void adaptive_policy::start_race(double dynamic_seconds) {
    ++searches_;
    const std::int64_t c = std::max<std::int64_t>(chunk_, 1);  // the dynamic probe's
    const double fs = std::clamp(std::round(model_fs_ / fs_step) * fs_step, 0.1, 0.9);
    const std::int64_t coarse = coarse_chunk_for(c, iteration_s_, iterations_, threads_, page_bytes());
    candidates_.clear();
    // Static is out when its probe was far too uneven, or when the dynamic probe, run after
    // it, beat it by 10%: every further run of it would cost that much (barnes-hut: 15%
    // slower, and it ran 4 of 11 invocations). Replay stays: its blocks follow the cost.
    const double n = static_cast<double>(std::max<std::uint64_t>(iterations_, 1));
    const bool lost = probe_static_per_it_ > 0 && dynamic_seconds > 0 && probe_static_per_it_ > 1.1 * dynamic_seconds / n;
    const bool with_static = !std::exchange(static_out_, false) && !lost;
    if (with_static) candidates_.push_back({schedule(), 1, 0, false});
    candidates_.push_back({schedule::staggered(0, c), 0, c, false});
    candidates_.push_back({schedule::staggered(fs, c), fs, c, false});
    // libomp's guided (remaining / 2p): libgomp's hands out half the loop at once on two
    // threads, static's split (barnes-hut: 24 ms against 20).
    candidates_.push_back({schedule::guided(c, 2), 0, c, false});
    if (coarse > c) candidates_.push_back({schedule::staggered(0, coarse), 0, coarse, false});
    // oneTBB's affinity partitioner replays where the last run's work went; here static
    // blocks of equal cost by the profile the static runs measured (cost_profile.hpp).
    // Run as staggered at fs = 1: `static` blocks are always equal (OpenMP's static split).
    if (!weighted_ && threads_ > 1 && profile_.known()) candidates_.push_back({replay_run(), 1, 0, true});
    std::vector<std::string> names;
    for (const candidate& k : candidates_) names.push_back(name_of(k.run, k.replay));
    race_ = std::make_unique<candidate_race>(std::move(names), race_options{options_.race_budget, options_.recheck_every});
    if (with_static && probe_static_per_it_ > 0) race_->observe(0, probe_static_per_it_);
    if (dynamic_seconds > 0) race_->observe(with_static ? 1 : 0, dynamic_seconds / n);
    phase_ = phase::searching;
    reason_ = "searching: racing " + std::to_string(candidates_.size()) + " candidates (model fs=" + fixed(model_fs_) +
              ", chunk " + std::to_string(c) + (weighted_ ? ", weighted blocks" : "") + ")";
    keep_memory();
}

void adaptive_policy::race_observed(double per_iteration_s) {
    const int ran = running_;
    if (std::exchange(skip_sample_, false)) return;
    race_->observe(ran, per_iteration_s);
    if (phase_ == phase::searching) {
        if (race_->decided()) return race_decided();
        return keep_memory();
    }
    const std::vector<candidate_race::entry>& e = race_->entries();
    const int w = race_->winner();
    if (race_->take_winner_changed()) {
        reason_ = "re-check: " + e[static_cast<std::size_t>(w)].name + " ran faster (mean " +
                  micros(e[static_cast<std::size_t>(w)].stats.mean * 1e3) + " per 1000 iterations); switched";
        drift_.reset();
        return keep_memory();
    }
    if (ran == w && drift_.observe(per_iteration_s))
        return reopen("drift: the converged time per iteration changed by " + fixed(100 * drift_.last_change(), 0) + "%");
    if (invocations_ - kept_at_ >= 64) keep_memory();
}

void adaptive_policy::race_decided() {
    offer_fitted_fraction();
    const std::vector<candidate_race::entry>& e = race_->entries();
    const candidate_race::entry& w = e[static_cast<std::size_t>(race_->winner())];
    const auto in = std::count_if(e.begin(), e.end(), [](const candidate_race::entry& x) { return x.in && !x.late; });
    const double spread = w.stats.mean > 0 ? w.stats.half_width() / w.stats.mean : 0;
    converge("race: " + w.name +
             (race_->how() == candidate_race::verdict::separated
                  ? " (the others' 95% intervals lay above it)"
                  : " (best mean of " + std::to_string(in) + " the noise could not separate, ±" + fixed(100 * spread, 1) +
                        "%)") +
             " after " + std::to_string(race_->samples_in_race()) + " invocations");
}

void adaptive_policy::offer_fitted_fraction() {
    // A parabola through the means at fs = 0 (dynamic), the model's fs and 1 (static), all
    // samples of each pooled: where it bottoms out between them, that fs joins the re-checks.
    // start_race's order: static (unless the probe dropped it), fs = 0, the model's fs.
    if (candidates_.size() < 3 || candidates_[0].replay || candidates_[0].run.kind() != schedule_kind::static_block ||
        candidates_[1].replay || candidates_[2].replay)
        return;
    const std::vector<candidate_race::entry>& e = race_->entries();
    if (e[0].stats.n < 2 || e[1].stats.n < 2 || e[2].stats.n < 2) return;
    const double f = candidates_[2].fs;
    const double v = parabola_vertex(e[1].stats.mean, f, e[2].stats.mean, e[0].stats.mean);
    if (!(v > 0.05 && v < 0.95)) return;
    const double fs = std::round(v / fs_step) * fs_step;
    if (std::abs(fs - f) < 0.1 - 1e-9) return;
    const std::int64_t c = candidates_[2].chunk;
    const schedule run = schedule::staggered(fs, c);
    if (race_->find(name_of(run, false)) >= 0) return;
    race_->add(name_of(run, false));
    candidates_.push_back({run, fs, c, false});
}

site_memory adaptive_policy::remember() const {
    site_memory m;
    m.invocations = recalled_invocations_ + invocations_;
    if (race_) {
        m.candidates = race_->remember();
        bool any_weighted = false;
        for (std::size_t i = 0; i < m.candidates.size() && i < candidates_.size(); ++i) {
            const candidate& k = candidates_[i];
            const bool blocks = k.run.kind() == schedule_kind::static_block || k.run.kind() == schedule_kind::staggered;
            m.candidates[i].weighted = k.replay || (weighted_ && blocks);
            any_weighted = any_weighted || m.candidates[i].weighted;
        }
        if (any_weighted && weighted_) m.weights = weights_;
        if (any_weighted && !weighted_) {
            m.weights.assign(static_cast<std::size_t>(std::max(threads_, 1)), 1.0);
            profile_.split(m.weights);
        }
        m.converged = phase_ == phase::converged;
        if (m.converged) m.chosen = race_->entries()[static_cast<std::size_t>(race_->winner())].name;
    } else if (phase_ == phase::converged && iterations_ > 0) {
        // Another search's result, or the balanced-and-quiet static: its choice alone.
        m.converged = true;
        m.chosen = current_.to_string();
        const double t = (fs_ >= 1 && !weighted_ ? static_seconds_ : 0) / static_cast<double>(iterations_);
        m.candidates.push_back({m.chosen, weighted_, 1, t, 0});
        if (weighted_) m.weights = weights_;
    }
    return m;
}

void adaptive_policy::keep_memory() {
    kept_at_ = invocations_;
    if (memory_ == nullptr || site_.empty()) return;
    const site_memory m = remember();
    if (!m.candidates.empty()) memory_->keep(site_, threads_, m);
}

void adaptive_policy::resume(const site_memory& m) {
    const bool weights_fit = m.weights.size() == static_cast<std::size_t>(threads_) && threads_ > 1;
    std::vector<candidate> cs;
    std::vector<std::string> names;
    bool weighted = false, replay = false;
    for (const candidate_memory& c : m.candidates) {
        candidate k;
        if (c.schedule == "replay") {
            if (!weights_fit) continue;
            k.replay = replay = true;
            k.run = replay_run();
        } else {
            try {
                k.run = schedule(c.schedule);
            } catch (const std::exception&) {
                continue;  // the store checked it; a schedule this version no longer knows
            }
            const schedule_kind kind = k.run.kind();
            if (kind == schedule_kind::adaptive) continue;
            k.fs = kind == schedule_kind::static_block ? 1.0
                   : kind == schedule_kind::staggered || kind == schedule_kind::hybrid ? k.run.static_fraction()
                                                                                        : 0.0;
            k.chunk = kind == schedule_kind::static_block ? 0 : k.run.chunk();
            if (c.weighted && weights_fit) weighted = true;
        }
        cs.push_back(std::move(k));
        names.push_back(c.schedule);
    }
    if (cs.empty()) return;
    if (weighted) weights_ = m.weights, weighted_ = true;
    if (replay) {
        replay_weights_ = m.weights;
        profile_.assume_split(m.weights);
    }
    recalled_invocations_ = m.invocations;
    skip_sample_ = true;
    const std::string from = " (recalled: " + std::to_string(m.invocations) + " invocations of earlier runs)";
    if (m.converged && names.size() == 1 && names.front() == "static" && !weighted_) {
        // The balanced-and-quiet static, with its watch for late static parts.
        phase_ = phase::converged;
        fs_ = 1;
        current_ = schedule();
        converged_at_ = 0;
        reason_ = "static" + from;
        return;
    }
    candidates_ = std::move(cs);
    race_ = std::make_unique<candidate_race>(names, race_options{options_.race_budget, options_.recheck_every});
    race_->recall(m.candidates, m.converged, m.chosen);
    ++searches_;
    if (race_->decided()) {
        phase_ = phase::converged;
        converged_at_ = 0;
        drift_.reset();
        reason_ = "race: " + race_->entries()[static_cast<std::size_t>(race_->winner())].name + from + "; re-checking";
    } else {
        phase_ = phase::searching;
        reason_ = "searching: racing " + std::to_string(candidates_.size()) + " candidates" + from;
    }
}

void adaptive_policy::converge(std::string reason) {
    phase_ = phase::converged;
    settled_at_ = invocations_;
    reason_ = std::move(reason);
    if (converged_at_ < 0) converged_at_ = static_cast<std::int64_t>(invocations_);
    late_.clear();
    drift_.reset();
    keep_memory();
}

void adaptive_policy::reopen(std::string reason) {
    // Each re-opening costs a search (about 20 invocations, some on poor candidates), and on
    // short loops whose trip counts change, jitter looks like drift: the n-th re-opening
    // waits 16·2^n invocations after the last convergence (16, 32, … at most 16,384).
    const std::uint64_t gap = std::uint64_t{16} << std::min<std::uint64_t>(reopened_, 10);
    if (invocations_ < settled_at_ + gap) {
        late_.clear();
        drift_.reset();
        return;
    }
    ++reopened_;
    ++searches_;
    local_.reset();
    nlopt_.reset();
    race_.reset();
    candidates_.clear();
    running_ = -1;
    probe_static_per_it_ = 0;  // the run that re-opened is no fair static sample
    static_out_ = false;
    late_.clear();
    phase_ = phase::probe_dynamic;
    reason_ = std::move(reason) + "; probing again";
}

tuning_stats adaptive_policy::snapshot() const {
    tuning_stats t;
    t.search = spec_.search();
    t.state = phase_ == phase::converged   ? policy_state::converged
              : phase_ == phase::searching ? policy_state::searching
                                           : policy_state::probing;
    t.chosen = current_.to_string();
    t.reason = reason_;
    t.model_fs = model_fs_;
    t.delay_noise_s = delay_noise_s_;
    t.delay_app_s = delay_app_s_;
    t.dequeue_s = dequeue_s();
    t.iteration_s = iteration_s_;
    // Blocks follow thread speed: the site's weights, or the race's replayed split won.
    t.weighted = weighted_ || (race_ && phase_ == phase::converged &&
                               candidates_[static_cast<std::size_t>(race_->winner())].replay);
    t.trials = trials_;
    t.searches = searches_;
    t.converged_at = converged_at_;
    t.steps = steps_;
    return t;
}

void adaptive_policy::plan(std::uint64_t iterations, loop::loop_plan& p) {
    const choice c = choose(iterations, p.threads);
    p.run = c.run;
    p.block_weights = c.block_weights;
    // Probing, searching, or re-checking a runner-up: a later link must not change the run.
    p.measuring = phase_ != phase::converged || (race_ && running_ != race_->winner());
}

policy_status adaptive_policy::status() const {
    policy_status s;
    s.name = std::string(name());
    s.state = phase_ == phase::converged   ? policy_state::converged
              : phase_ == phase::searching ? policy_state::searching
                                           : policy_state::probing;
    s.choice = current_.to_string();
    s.threads = threads_;
    return s;
}

// The process-wide probes: measured once, on the team, before the first adaptive loop takes
// it. A program that never runs an adaptive loop never pays for them.
namespace {

std::mutex probe_mutex;
std::atomic<bool> probed{false};
machine_probes measured;

std::unique_ptr<loop::site_policy> make_policy(const loop::policy_site& site) {
    const schedule& spec = *site.spec;
    // Called under a site's mutex, so it must not take probe_mutex (held while the probes
    // run loops, which take the registry's and other sites' mutexes: a lock-order cycle
    // ThreadSanitizer found). `measured` is written once, before `probed` is released.
    // Without probes (a loop_handle site, before any parallel_for), q and δ start at 0 and
    // come from the site's own runs.
    auto p = std::make_unique<adaptive_policy>(spec, probed.load(std::memory_order_acquire) ? measured : machine_probes{},
                                               adaptive_options{}, process_tuning_memory(), std::string(site.name));
    p->read_counters_of(site.counters);
    return p;
}

void prepare(team& t) {
    if (!probed.load(std::memory_order_acquire)) (void)measure_machine_once(t);
}

bool applies(const loop::policy_site& site) noexcept {
    return site.scope == loop::policy_scope::loop && site.spec != nullptr &&
           site.spec->kind() == schedule_kind::adaptive;
}

constexpr loop::policy_kind kind{"adaptive", &applies, &make_policy, &prepare, /*adaptive_only=*/true};

// Registers the kind when the library loads (see policy_chain.hpp). The C symbol lets a
// static link keep this object file (the library's link interface names it).
struct install_at_load {
    install_at_load() {
        loop::register_policy_kind(&kind);
        install_task_loop_runner();
    }
} const installer;

}  // namespace

machine_probes measure_machine_once(team& t) {
    std::lock_guard lock(probe_mutex);
    if (!probed.load(std::memory_order_relaxed)) {
        measured.dequeue_s = measure_dequeue_cost(t, 5, 1 << 14);
        // 2 ms of quanta: the probe is every adaptive program's fixed cost (10 ms made
        // NAS bt.S, 26 ms in all, 1.35× slower under adaptive than static; issue 14), and δ only
        // seeds the model's fraction, which the race then checks on the loop itself.
        measured.noise_s = measure_noise_length(10, 0.002);
        probed.store(true, std::memory_order_release);
        runtime::report_once({runtime::report_level::info, runtime::report_category::loop, "I310",
                              "adaptive: probed q = " + micros(measured.dequeue_s) + " per dequeue, noise events of " +
                                  micros(measured.noise_s) + " (FWQ, 2 ms)",
                              ""});
    }
    return measured;
}

std::optional<machine_probes> measured_machine_probes() noexcept {
    if (!probed.load(std::memory_order_acquire)) return std::nullopt;
    return measured;
}

}  // namespace aloe::adapt

extern "C" {
ALOE_API extern const int aloe_adapt_linked;
const int aloe_adapt_linked = 1;
}

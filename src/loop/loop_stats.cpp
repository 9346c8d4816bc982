#include "loop/loop_stats.hpp"

#include "runtime/counters.hpp"
#include "runtime/json_text.hpp"

#include <aloe/version.hpp>

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace aloe::loop {

namespace {

thread_loop_stats to_seconds(const thread_ticks& t) {
    thread_loop_stats s;
    s.static_s = runtime::ticks_to_seconds(t.static_t);
    s.dynamic_s = runtime::ticks_to_seconds(t.dynamic_t);
    s.wait_s = runtime::ticks_to_seconds(t.wait_t);
    s.iterations = t.iterations;
    s.chunks = t.chunks;
    s.steals = t.steals;
    return s;
}

void add_to(thread_ticks& sum, const thread_ticks& t) noexcept {
    sum.static_t += t.static_t;
    sum.dynamic_t += t.dynamic_t;
    sum.wait_t += t.wait_t;
    sum.iterations += t.iterations;
    sum.chunks += t.chunks;
    sum.steals += t.steals;
}

// Ticks between two readings; a worker that did nothing may have equal stamps.
runtime::ticks span_of(runtime::ticks from, runtime::ticks to) { return to > from ? to - from : 0; }

// One worker's record of a run joined at t1, as the statistics and counters count it.
[[gnu::always_inline]] inline thread_ticks ticks_of(const worker_record& r, runtime::ticks t1) noexcept {
    thread_ticks t;
    t.static_t = span_of(r.start, r.static_end);
    t.dynamic_t = span_of(r.static_end, r.end);
    t.wait_t = span_of(r.end, t1);
    t.iterations = r.static_iterations + r.dynamic_iterations;
    t.chunks = r.chunks;
    t.steals = r.steals;
    return t;
}

// aloe's loop counters (their names and old names: include/aloe/stats.hpp).
struct loop_counters {
    using unit = counter_unit;
    runtime::counter_handle parallel_runs = runtime::register_counter(
        {.object = "loop", .name = "parallel-runs", .unit = unit::count,
         .help = "loops run by a team (fork and join), by the thread that ended them", .alias = "loop.parallel_runs"});
    runtime::counter_handle serial_runs = runtime::register_counter(
        {.object = "loop", .name = "serial-runs", .unit = unit::count,
         .help = "loops run serially on the calling thread (nested, team busy, one thread)", .alias = "loop.serial_runs"});
    runtime::counter_handle empty_runs = runtime::register_counter(
        {.object = "loop", .name = "empty-runs", .unit = unit::count, .help = "loop calls with no iteration",
         .alias = "loop.empty_runs"});
    runtime::counter_handle iterations = runtime::register_counter(
        {.object = "threads", .name = "iterations", .unit = unit::count, .help = "loop iterations run",
         .alias = "loop.iterations"});
    runtime::counter_handle chunks = runtime::register_counter(
        {.object = "threads", .name = "chunks", .unit = unit::count,
         .help = "dynamic chunks taken, stolen ones included", .alias = "loop.chunks"});
    runtime::counter_handle steals = runtime::register_counter(
        {.object = "threads", .name = "steals", .unit = unit::count, .help = "chunks taken from another thread's queue",
         .alias = "loop.steals"});
    runtime::counter_handle busy_ns = runtime::register_counter(
        {.object = "threads", .name = "time/busy", .unit = unit::nanoseconds,
         .help = "time in loops' static and dynamic parts", .alias = "loop.busy_ns"});
    runtime::counter_handle wait_ns = runtime::register_counter(
        {.object = "threads", .name = "time/wait", .unit = unit::nanoseconds,
         .help = "time between finishing a loop's share and the last thread finishing", .alias = "loop.wait_ns"});
};

loop_counters& counters() {
    static loop_counters c;
    return c;
}

}  // namespace

void run_sums::add_run(std::span<const worker_record> records, runtime::ticks t0, runtime::ticks t1) {
    const std::size_t p = records.size();
    if (last.size() != p) {
        last.assign(p, {});
        if (total.size() < p) total.resize(p);
    }
    runtime::ticks busy_max = 0;
    runtime::ticks busy_sum = 0;
    for (std::size_t w = 0; w < p; ++w) {
        const thread_ticks& t = last[w] = ticks_of(records[w], t1);
        add_to(total[w], t);
        iterations += t.iterations;
        const runtime::ticks busy = t.static_t + t.dynamic_t;
        busy_max = std::max(busy_max, busy);
        busy_sum += busy;
    }
    imbalance_last = busy_sum > 0 ? static_cast<double>(busy_max) * static_cast<double>(p) / static_cast<double>(busy_sum)
                                  : 1.0;
    imbalance_sum += imbalance_last;
    ++runs;
    last_t = span_of(t0, t1);
    total_t += last_t;
}

void run_sums::merge(const run_sums& later) {
    if (later.runs == 0) return;
    if (total.size() < later.total.size()) total.resize(later.total.size());
    for (std::size_t w = 0; w < later.total.size(); ++w) add_to(total[w], later.total[w]);
    last = later.last;
    runs += later.runs;
    iterations += later.iterations;
    total_t += later.total_t;
    last_t = later.last_t;
    imbalance_sum += later.imbalance_sum;
    imbalance_last = later.imbalance_last;
}

void run_sums::clear() noexcept {
    runs = iterations = 0;
    total_t = last_t = 0;
    imbalance_sum = imbalance_last = 0;
    last.clear();
    total.clear();
}

void site_accumulator::add_parallel(std::span<const worker_record> records, runtime::ticks t0, runtime::ticks t1,
                                    const schedule& used) {
    last_schedule_ = used;
    parallel_.add_run(records, t0, t1);
}

void site_accumulator::add_parallel_runs(const run_sums& runs, const schedule& used) {
    last_schedule_ = used;
    parallel_.merge(runs);
}

void site_accumulator::add_serial(std::uint64_t iterations, const schedule& used) {
    last_schedule_ = used;
    ++serial_invocations_;
    serial_iterations_ += iterations;
}

void site_accumulator::add_empty(const schedule& used) {
    last_schedule_ = used;
    ++empty_invocations_;
}

void site_accumulator::fold_into(folded_totals& into) const {
    ++into.sites;
    into.invocations += parallel_.runs;
    into.serial_invocations += serial_invocations_;
    into.empty_invocations += empty_invocations_;
    into.iterations += parallel_.iterations + serial_iterations_;
    into.total_t += parallel_.total_t;
    into.imbalance_sum += parallel_.imbalance_sum;
}

site_stats folded_totals::snapshot() const {
    site_stats s;
    s.site = "(" + std::to_string(sites) + " colder sites, folded)";
    s.invocations = invocations;
    s.serial_invocations = serial_invocations;
    s.empty_invocations = empty_invocations;
    s.iterations = iterations;
    s.total_s = runtime::ticks_to_seconds(total_t);
    s.imbalance_mean = invocations > 0 ? imbalance_sum / static_cast<double>(invocations) : 0.0;
    s.folded_sites = sites;
    return s;
}

site_stats site_accumulator::snapshot(const std::string& name) const {
    site_stats s;
    s.site = name;
    s.schedule = last_schedule_.to_string();
    const run_sums& p = parallel_;
    s.invocations = p.runs;
    s.serial_invocations = serial_invocations_;
    s.empty_invocations = empty_invocations_;
    s.iterations = p.iterations + serial_iterations_;
    s.total_s = runtime::ticks_to_seconds(p.total_t);
    s.last_s = runtime::ticks_to_seconds(p.last_t);
    s.imbalance_last = p.imbalance_last;
    s.imbalance_mean = p.runs > 0 ? p.imbalance_sum / static_cast<double>(p.runs) : 0.0;
    for (const thread_ticks& t : p.last) s.last.push_back(to_seconds(t));
    for (const thread_ticks& t : p.total) s.total.push_back(to_seconds(t));
    return s;
}

namespace {

// Worker w's share goes to /threads{locality#0/worker-thread#w}/…, in this thread's own
// lane for w (runtime/counters.hpp): plain stores, no shared line; the same pass sums the
// site's totals.
[[gnu::always_inline]] inline void count_worker(loop_counters& c, int worker, const thread_ticks& t, site_counters::run_totals& sum) {
    const std::uint64_t busy = runtime::ticks_to_ns(t.static_t + t.dynamic_t);
    const std::uint64_t wait = runtime::ticks_to_ns(t.wait_t);
    c.iterations.add_for_worker(worker, t.iterations);
    c.chunks.add_for_worker(worker, t.chunks);
    c.steals.add_for_worker(worker, t.steals);
    c.busy_ns.add_for_worker(worker, busy);
    c.wait_ns.add_for_worker(worker, wait);
    sum.iterations += t.iterations;
    sum.chunks += t.chunks;
    sum.steals += t.steals;
    sum.busy_ns += busy;
    sum.wait_ns += wait;
}

}  // namespace

void count_loop(std::span<const worker_record> records, runtime::ticks t0, runtime::ticks t1, const site_counters& site) {
    loop_counters& c = counters();
    site_counters::run_totals sum;
    for (std::size_t w = 0; w < records.size(); ++w) count_worker(c, static_cast<int>(w), ticks_of(records[w], t1), sum);
    sum.time_ns = runtime::ticks_to_ns(span_of(t0, t1));
    c.parallel_runs.add(1);
    site.add_run(sum);
}

void count_runs(const run_sums& runs, const site_counters& site) {
    if (runs.runs == 0) return;
    loop_counters& c = counters();
    site_counters::run_totals sum;
    sum.runs = runs.runs;
    for (std::size_t w = 0; w < runs.total.size(); ++w) count_worker(c, static_cast<int>(w), runs.total[w], sum);
    sum.time_ns = runtime::ticks_to_ns(runs.total_t);
    c.parallel_runs.add(runs.runs);
    site.add_run(sum);
}

void count_serial_loop(std::uint64_t iterations) {
    loop_counters& c = counters();
    c.serial_runs.add(1);
    c.iterations.add(iterations);
}

void count_empty_loop() { counters().empty_runs.add(1); }

namespace {

std::string json_string(const std::string& s) { return runtime::json_quote(s); }
// Doubles through json_number: NaN and infinities (a zero-length run, a tuner's first guess)
// become null, never the invalid `nan`/`inf` operator<< would print.
std::string num(double x) { return runtime::json_number(x); }

void write_threads(std::ostringstream& o, const std::vector<thread_loop_stats>& threads) {
    o << "[";
    for (std::size_t i = 0; i < threads.size(); ++i) {
        const thread_loop_stats& t = threads[i];
        o << (i ? ", " : "") << "{\"thread\": " << i << ", \"static_s\": " << num(t.static_s)
          << ", \"dynamic_s\": " << num(t.dynamic_s) << ", \"wait_s\": " << num(t.wait_s) << ", \"iterations\": " << t.iterations
          << ", \"chunks\": " << t.chunks << ", \"steals\": " << t.steals << "}";
    }
    o << "]";
}


}  // namespace

std::string format_slack_json(const slack_stats& s) {
    std::ostringstream o;
    o << "{\"call\": " << json_string(s.call) << ", \"planned\": " << s.planned << ", \"lowered\": " << s.lowered
      << ", \"predicted_s\": " << num(s.predicted_last_s) << ", \"actual_s\": " << num(s.actual_last_s)
      << ", \"predicted_mean_s\": " << num(s.predicted_mean_s) << ", \"actual_mean_s\": " << num(s.actual_mean_s)
      << ", \"fd_before\": " << num(s.fd_before_last) << ", \"fd_after\": " << num(s.fd_after_last)
      << ", \"fd_before_mean\": " << num(s.fd_before_mean) << ", \"fd_after_mean\": " << num(s.fd_after_mean)
      << ", \"guard\": " << json_string(s.guard) << "}";
    return o.str();
}

std::string format_tuning_json(const tuning_stats& t) {
    std::ostringstream o;
    o << "{\"search\": " << json_string(to_string(t.search)) << ", \"state\": " << json_string(to_string(t.state))
      << ", \"chosen\": " << json_string(t.chosen) << ", \"reason\": " << json_string(t.reason)
      << ", \"model_fs\": " << num(t.model_fs) << ", \"delay_noise_s\": " << num(t.delay_noise_s)
      << ", \"delay_app_s\": " << num(t.delay_app_s) << ", \"dequeue_s\": " << num(t.dequeue_s)
      << ", \"iteration_s\": " << num(t.iteration_s) << ", \"weighted\": " << (t.weighted ? "true" : "false")
      << ", \"trials\": " << t.trials << ", \"searches\": " << t.searches << ", \"converged_at\": " << t.converged_at
      << ", \"steps\": [";
    for (std::size_t i = 0; i < t.steps.size(); ++i) {
        const tuning_step& s = t.steps[i];
        o << (i ? ", " : "") << "{\"invocation\": " << i + 1 << ", \"schedule\": " << json_string(s.schedule)
          << ", \"fs\": " << num(s.fs) << ", \"chunk\": " << s.chunk << ", \"seconds\": " << num(s.seconds) << "}";
    }
    o << "]}";
    return o.str();
}

std::string format_stats_json(const std::vector<site_stats>& sites) {
    std::ostringstream o;
    o << "{\n  \"aloe_version\": " << json_string(version()) << ",\n  \"sites\": [";
    for (std::size_t i = 0; i < sites.size(); ++i) {
        const site_stats& s = sites[i];
        o << (i ? "," : "") << "\n    {\"site\": " << json_string(s.site) << ", \"schedule\": " << json_string(s.schedule)
          << ", \"invocations\": " << s.invocations << ", \"serial_invocations\": " << s.serial_invocations
          << ", \"empty_invocations\": " << s.empty_invocations << ", \"iterations\": " << s.iterations
          << ", \"total_s\": " << num(s.total_s) << ", \"last_s\": " << num(s.last_s)
          << ", \"imbalance_last\": " << num(s.imbalance_last) << ", \"imbalance_mean\": " << num(s.imbalance_mean)
          << ",\n     \"last\": ";
        write_threads(o, s.last);
        o << ",\n     \"total\": ";
        write_threads(o, s.total);
        if (s.tuning) o << ",\n     \"tuning\": " << format_tuning_json(*s.tuning);
        if (!s.policies.empty()) {
            o << ",\n     \"policies\": [";
            for (std::size_t k = 0; k < s.policies.size(); ++k) {
                const policy_status& ps = s.policies[k];
                o << (k ? ", " : "") << "{\"name\": " << json_string(ps.name)
                  << ", \"state\": " << json_string(to_string(ps.state)) << ", \"choice\": " << json_string(ps.choice)
                  << ", \"threads\": " << ps.threads;
                if (ps.slack) o << ", \"slack\": " << format_slack_json(*ps.slack);
                o << "}";
            }
            o << "]";
        }
        if (!s.counters.empty()) o << ",\n     \"counters\": " << json_string(s.counters);
        if (s.folded_sites > 0) o << ",\n     \"folded_sites\": " << s.folded_sites;
        o << "}";
    }
    o << "\n  ],\n  \"counters\": {";
    const auto all = runtime::read_all_counters();
    for (std::size_t i = 0; i < all.size(); ++i)
        o << (i ? ", " : "") << json_string(all[i].first) << ": " << all[i].second;
    // Every instance by full name, with its unit (the totals above, and each worker slot).
    o << "},\n  \"counter_samples\": [";
    const auto samples = runtime::read_counters("*");
    for (std::size_t i = 0; i < samples.size(); ++i)
        o << (i ? "," : "") << "\n    {\"name\": " << json_string(samples[i].name) << ", \"value\": " << samples[i].value
          << ", \"unit\": " << json_string(std::string(runtime::counter_unit_name(samples[i].unit))) << "}";
    o << "\n  ]\n}\n";
    return o.str();
}

}  // namespace aloe::loop

namespace aloe {

const char* to_string(policy_state s) noexcept {
    switch (s) {
        case policy_state::idle: return "idle";
        case policy_state::probing: return "probing";
        case policy_state::searching: return "searching";
        case policy_state::converged: return "converged";
        case policy_state::acting: return "acting";
    }
    return "idle";
}

const char* to_string(adaptive_search s) noexcept {
    switch (s) {
        case adaptive_search::local: return "local";
        case adaptive_search::nlopt: return "nlopt";
        case adaptive_search::sweep: return "sweep";
        case adaptive_search::race: return "race";
    }
    return "local";
}

}  // namespace aloe

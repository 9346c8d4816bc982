// parallel_for's compiled half: resolve the schedule, fork the team, run each worker's
// chunks, join, and fold the workers' records into the site's history and statistics.
//
// Per loop, on the thread that starts it: one site lookup (thread-local cache; the site is
// held, so not evicted, until the loop is committed), one try-acquire of the team, for
// `adaptive` the site policy's choice (adapt/), the schedule's setup in the team's arena
// (no allocation in the steady state), the site's mutex twice (setup, commit). A call with
// no iteration stops after the lookup and counts as an empty invocation. Per worker: one
// std::visit, then a loop instantiated for the concrete schedule (no per-chunk dispatch),
// three clock reads.
#include "loop/any_schedule.hpp"
#include "loop/loop_stats.hpp"
#include "loop/site_registry.hpp"
#include "runtime/config.hpp"
#include "runtime/output_path.hpp"
#include "runtime/printable_text.hpp"
#include "runtime/report.hpp"
#include "runtime/team.hpp"

#include <aloe/parallel_for.hpp>

#include <cstdlib>
#include <mutex>

namespace aloe::loop {

namespace {

struct loop_job {
    any_schedule* sched;
    worker_record* records;
    detail::chunk_fn fn;
    void* ctx;
};

template <loop_schedule S>
void run_worker(S& s, int id, worker_record& rec, detail::chunk_fn fn, void* ctx) noexcept {
    worker_cursor w;
    w.id = id;
    chunk c;
    rec.start = runtime::now_ticks();
    std::uint64_t static_iterations = 0;
    while (s.next_static(w, c)) {
        fn(ctx, c.begin, c.end, id);
        static_iterations += c.end - c.begin;
    }
    rec.static_end = runtime::now_ticks();
    std::uint64_t dynamic_iterations = 0, chunks = 0, steals = 0;
    for (take t; (t = s.next_dynamic(w, c)) != take::none;) {
        fn(ctx, c.begin, c.end, id);
        dynamic_iterations += c.end - c.begin;
        ++chunks;
        steals += t == take::stolen ? 1 : 0;
    }
    rec.end = runtime::now_ticks();
    rec.static_iterations = static_iterations;
    rec.dynamic_iterations = dynamic_iterations;
    rec.chunks = chunks;
    rec.steals = steals;
}

void job_entry(void* p, int worker) noexcept {
    auto& job = *static_cast<loop_job*>(p);
    std::visit(
        [&](auto& s) {
            if constexpr (!std::is_same_v<std::decay_t<decltype(s)>, std::monostate>)
                run_worker(s, worker, job.records[worker], job.fn, job.ctx);
        },
        *job.sched);
}

void write_stats_at_exit() {
    // Named for this process (%p, %r, %h; the rank added in a job of several ranks), so the
    // processes of a job never write one file (runtime/output_path.hpp).
    const runtime::config& cfg = runtime::current_config();
    const std::string path =
        runtime::expand_output_path(cfg.stats_file, runtime::process_identity::of_this_process(cfg));
    std::string message;
    if (!write_stats_json(path, &message))
        runtime::report_once({runtime::report_level::warning, runtime::report_category::loop, "W302",
                              "cannot write the ALOE_STATS file: " + message, ""});
}

void arrange_stats_at_exit() {
    static std::once_flag once;
    std::call_once(once, [] {
        if (!runtime::current_config().stats_file.empty()) std::atexit(write_stats_at_exit);
    });
}

void run_serial(site_state& st, std::uint64_t n, const schedule& s, detail::chunk_fn fn, void* ctx) {
    fn(ctx, 0, n, 0);
    {
        std::lock_guard lock(st.mutex);
        st.stats.add_serial(n, s);
    }
    count_serial_loop(n);
}

}  // namespace

}  // namespace aloe::loop

namespace aloe::detail {

void run_loop(team& t, const iteration_space& space, const schedule& s, const loop_site& site, chunk_fn fn,
              void* ctx) {
    using namespace aloe::loop;
    const std::uint64_t n = space.count;
    arrange_stats_at_exit();
    const site_ref held = site_registry::instance().acquire(site);
    site_state& st = *held;
    if (n == 0) [[unlikely]] {
        record_empty_call(st, s);
        return;
    }
    runtime::worker_team& workers = t.workers();
    if (s.kind() == schedule_kind::adaptive && workers.size() > 1 && !runtime::worker_team::in_job()) prepare_adaptive(t);
    if (workers.size() == 1 || !workers.try_acquire()) {
        run_serial(st, n, s, fn, ctx);
        return;
    }
    struct release_on_exit {
        runtime::worker_team& team;
        ~release_on_exit() { team.release(); }
    } hold{workers};

    const int p = workers.size();
    runtime::arena& scratch = workers.scratch();
    scratch.reset();
    const std::span<worker_record> records = scratch.make<worker_record>(static_cast<std::size_t>(p));
    any_schedule sched;
    {
        // Only schedules that read the site's history (or tuner) need its mutex here.
        std::unique_lock lock(st.mutex, std::defer_lock);
        if (reads_history(s)) lock.lock();
        make_site_schedule(sched, st, s, n, p, scratch);
    }
    loop_job job{&sched, records.data(), fn, ctx};
    const runtime::ticks t0 = runtime::now_ticks();
    workers.run(&job_entry, &job);
    const runtime::ticks t1 = runtime::now_ticks();
    {
        std::lock_guard lock(st.mutex);
        commit_site_run(sched, st, s, records, t0, t1);
    }
    count_loop(records, t0, t1);
}

const schedule& environment_schedule() {
    static const schedule from_env = [] {
        const std::string& text = runtime::current_config().schedule;
        schedule s;
        std::string message;
        if (!text.empty() && !schedule::try_parse(text, s, message)) {
            // `program` and `forward` are the OpenMP interposer's choices (aloe run), which
            // reach it as ALOE_OMP_SCHEDULE; say so rather than "malformed".
            const bool interposer_choice = text == "program" || text == "forward";
            runtime::report_once({runtime::report_level::warning, runtime::report_category::config, "W301",
                                  "ALOE_SCHEDULE='" + runtime::printable(text) + "' " +
                                      (interposer_choice ? "is a choice for aloe run's OpenMP interposer (set it as "
                                                           "ALOE_OMP_SCHEDULE), not a schedule for aloe's own loops"
                                                         : "is malformed (" + message + ")"),
                                  "static"});
            s = schedule();
        }
        return s;
    }();
    return from_env;
}

}  // namespace aloe::detail

namespace aloe {

schedule schedule_from_environment() { return detail::environment_schedule(); }

}  // namespace aloe

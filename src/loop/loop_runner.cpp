// parallel_for's compiled half: plan the run (the site's policy chain: schedule and thread
// count), fork the team (k of its p workers; inside a job of the team, the workers idle at
// that moment), drive each participant through the schedule (loop_driver.hpp), join, and
// fold the participants' accounts into the site's history, policies and statistics.
//
// Per loop, on the thread that starts it: one site lookup (thread-local cache; the site is
// held, so not evicted, until the loop is committed), one try-acquire of the team, the plan
// (the chain under the site's mutex only where it has a say), the schedule's setup in the
// team's arena (no allocation in the steady state), the site's mutex at commit. A call with
// no iteration stops after the lookup and counts as an empty invocation. Per participant:
// one std::visit, then a loop instantiated for the concrete schedule (no per-chunk
// dispatch), three clock reads, one fold of its tallies.
#include "loop/any_schedule.hpp"
#include "loop/loop_driver.hpp"
#include "loop/loop_stats.hpp"
#include "loop/site_registry.hpp"
#include "loop/task_loop.hpp"
#include "runtime/borrowed_cores.hpp"
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

// The job is its own door (participant 0 knocks on it; open_door finds the job from it).
struct loop_job : loop_door {
    any_schedule* sched = nullptr;
    participant* participants = nullptr;  // [slots]: the planned ones, then room for guests
    worker_record* records = nullptr;
    detail::chunk_fn fn = nullptr;
    void* ctx = nullptr;
    int planned = 1;            // participants at the fork
    int slots = 1;              // the team's workers, spares included
    int joined = 0;             // guests that came in mid-way (written by participant 0 only)
    int own_planned = 1;        // the plan's threads on the program's own cores
    runtime::worker_team* team = nullptr;
};

// Participant 0, after a refresh moved the limit: spares join as guests for the cores
// borrowed now (never beyond the limit or the team).
void open_door(loop_door* d) noexcept {
    d->seen = participant_limit_changes();
    loop_job& job = *static_cast<loop_job*>(d);
    // The plan's own threads (a policy may have planned fewer than the team's own count)
    // plus every core borrowed now.
    const int target = std::min({participant_limit(), job.own_planned + runtime::borrowed_core_count(), job.slots});
    const int have = job.planned + job.joined;
    if (target <= have) return;
    for (int i = have; i < target; ++i) {
        participant& g = job.participants[i];
        g = participant{};
        g.cursor.id = i;
        g.cursor.static_done = true;  // a guest has no static part: the dynamic pool only
    }
    job.joined += job.team->join_running(have, target);
}

void job_entry(void* p, int id) noexcept {
    auto& job = *static_cast<loop_job*>(p);
    participant& me = job.participants[id];
    std::visit(
        [&](auto& s) {
            if constexpr (!std::is_same_v<std::decay_t<decltype(s)>, std::monostate>)
                run_participant(s, me, [&](const chunk& c) { job.fn(job.ctx, c.begin, c.end, id); });
        },
        *job.sched);
    me.close(runtime::now_ticks(), job.records[id]);
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

// A `tasks` loop: on the task scheduler through adapt/'s runner (the process team's tasks,
// whatever team was named), counted as a serial run of the site with that schedule (the
// task counters describe how it ran); without the runner, serially.
void run_as_tasks(site_state& st, std::uint64_t n, const schedule& s, detail::chunk_fn fn, void* ctx) {
    if (const task_loop_fn runner = task_loop_runner()) {
        runner(s, st.key_name, n, fn, ctx);
        {
            std::lock_guard lock(st.mutex);
            st.stats.add_serial(n, s);
        }
        count_serial_loop(n);
        return;
    }
    run_serial(st, n, s, fn, ctx);
}

}  // namespace

}  // namespace aloe::loop

namespace aloe::detail {

namespace {

// Runs a loop on `k` participants of `workers` (the holder's fork, or a nested loop's
// claimed workers): setup, run, commit. `scratch` holds the loop's state.
// `guests_from`: the team whose spares may join the running loop (the holder's fork), else
// nullptr (a nested loop's claimed workers: no spares there).
template <class Fork>
void run_on(loop::site_state& st, const iteration_space& space, const schedule& s, int available,
            runtime::arena& scratch, chunk_fn fn, void* ctx, runtime::worker_team* guests_from, Fork&& fork) {
    using namespace aloe::loop;
    const std::uint64_t n = space.count;
    any_schedule sched;
    // Counted before the plan: its policies may read the daemon's socket, and cores lent then
    // must let guests in at the first knock, not count as seen.
    const auto limit_seen = participant_limit_changes();
    const loop_plan plan = setup_site_run(sched, st, s, n, available, scratch, st.key_name);
    const auto k = static_cast<std::size_t>(plan.threads);
    const bool doors = guests_from != nullptr && guests_from->spare() > 0 &&
                       std::visit([](const auto& v) { return welcomes_guests<std::decay_t<decltype(v)>>; }, sched);
    const std::size_t slots = doors ? static_cast<std::size_t>(guests_from->size()) : k;
    const std::span<participant> parts = scratch.make<participant>(slots);
    const std::span<worker_record> records = scratch.make<worker_record>(slots);
    for (std::size_t i = 0; i < k; ++i) parts[i].cursor.id = static_cast<int>(i);
    loop_job job{};
    job.sched = &sched;
    job.participants = parts.data();
    job.records = records.data();
    job.fn = fn;
    job.ctx = ctx;
    job.planned = plan.threads;
    job.slots = static_cast<int>(slots);
    job.own_planned = doors ? std::min(plan.threads, guests_from->own_size()) : plan.threads;
    job.team = guests_from;
    job.open = &open_door;
    job.seen = limit_seen;
    loop_door* const outer = doors ? set_loop_door(&job) : nullptr;
    const runtime::ticks t0 = runtime::now_ticks();
    fork(&job_entry, &job, plan.threads);
    const runtime::ticks t1 = runtime::now_ticks();
    if (doors) set_loop_door(outer);
    {
        std::lock_guard lock(st.mutex);
        commit_site_run(sched, st, s, records.first(k + static_cast<std::size_t>(job.joined)), t0, t1);
    }
}

}  // namespace

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
    if (s.kind() == schedule_kind::tasks) [[unlikely]] {
        run_as_tasks(st, n, s, fn, ctx);
        return;
    }
    runtime::worker_team& workers = t.workers();
    // The program's own workers, and the spares of cores other ranks lend it now.
    const int borrowed = workers.spare() > 0 ? std::min(runtime::borrowed_core_count(), workers.spare()) : 0;
    const int p = workers.own_size() + borrowed;
    if (p > 1 && workers.in_job_of_this()) {
        // Nested (DESIGN.md "Team"): the workers idle now help; none idle, the caller alone.
        runtime::worker_team::claimed helpers;
        if (workers.claim_idle(p - 1, helpers) == 0) {
            run_serial(st, n, s, fn, ctx);
            return;
        }
        runtime::arena scratch;  // the team's arena belongs to the outer loop's holder
        const int available = 1 + static_cast<int>(helpers.workers.size());
        run_on(st, space, s, available, scratch, fn, ctx, nullptr, [&](runtime::worker_team::job_fn job, void* c, int k) {
            workers.unclaim(helpers, static_cast<std::size_t>(k - 1));  // the plan may use fewer
            workers.run_claimed(job, c, helpers);
        });
        return;
    }
    if ((p > 1 || workers.spare() > 0) && !runtime::worker_team::in_job() && chain_applies(policy_scope::loop, &s))
        prepare_policies(t, s);
    // With spares, a one-thread loop still takes the team: cores lent while it runs join it.
    if ((p == 1 && workers.spare() == 0) || !workers.try_acquire()) {
        run_serial(st, n, s, fn, ctx);
        return;
    }
    struct release_on_exit {
        runtime::worker_team& team;
        ~release_on_exit() { team.release(); }
    } hold{workers};
    runtime::arena& scratch = workers.scratch();
    scratch.reset();
    run_on(st, space, s, p, scratch, fn, ctx, &workers,
           [&](runtime::worker_team::job_fn job, void* c, int k) { workers.run(job, c, k); });
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

// The workloads' common driver: one binary runs the same loops on aloe, OpenMP (GNU libgomp,
// or LLVM libomp loaded in its place), oneTBB or serially, with the same threads and pinning,
// times each timestep, injects seeded noise, checks the result and prints one JSON record.
//
// A workload is a main() like this (apps/synthetic/synthetic.cpp is the smallest):
//
//   int main(int argc, char** argv) {
//       return aloe_apps::run_workload("jacobi3d", argc, argv, [](aloe_apps::harness& h) {
//           const auto n = h.flags().integer("--n", 128, "grid points per side");
//           h.start();                           // after the workload's own flags
//           grid g(n); ...
//           h.run_steps([&](int step) {
//               h.parallel_for("jacobi3d/planes", n - 2, [&](std::int64_t k) { sweep(k + 1); });
//           });
//           h.checksum(g.sum());                  // bitwise-compared with the serial run
//           h.check(residual < 1e-12, "residual against the serial sweep", residual, 0);
//       });
//   }
//
// Common flags (see `--help` of any workload):
//   --runtime aloe|libgomp|libomp|tbb|serial|taskflow   --schedule S   --threads N   --bind close|none
//   (taskflow: task workloads only, and only when built with ALOE_TASKFLOW_DIR)
//   (OpenMP --schedule runtime: the loop is compiled schedule(runtime) and the run-sched-var
//   comes from OMP_SCHEDULE, or from a tool such as `aloe run`; runtime,KIND[,C] sets it here)
//   --steps K  --warmup W  --noise-p P  --noise-us D  --noise-core random|C  --noise-seed S
//   --background CPU:DUTY[:PERIOD_US]  --timeline  --json FILE|-  --check full|quick
//   --record-costs FILE (each loop site's mean time per iteration over the timed steps, the
//   input of `aloe sim`)  --corrupt-result (tests: the check must then fail)
// Exit status: 0 ok, 1 runtime failure, 2 bad command line, 3 the result check failed.
//
// A program of several processes (apps/jacobi3d-mpi) initialises MPI in before_threads(),
// gives each rank its own noise seed there, and has only rank 0 write the record
// (writes_record, step_seconds, record: the last section of the class). --record-costs is
// written by every rank, each to its own file (the rank goes into the name, as for aloe's
// statistics files: runtime/output_path.hpp).
//
// A task workload (apps/fib, uts, sort, nqueens, stencil1d-tasks) calls task_workload() before
// start() and runs its own task program per runtime (common/task_runtimes.hpp has the roots):
// aloe's tasks run on the process team (start() sets ALOE_NUM_THREADS to --threads), oneTBB's
// in tbb_arena(), Taskflow's on taskflow_executor(), OpenMP's in a parallel region the workload
// opens. Its --schedule is checked for the runtime and recorded, but not used: no loop runs.
#pragma once

#include "args.hpp"
#include "background_load.hpp"
#include "noise_injector.hpp"

#include <aloe/aloe.hpp>

#include <omp.h>
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/partitioner.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_scheduler_observer.h>

#include <concepts>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tf {
class Executor;
}

namespace aloe_apps {

class json_writer;

/// taskflow: Taskflow's executor, for task workloads, when the build has it
/// (taskflow_built_in()).
enum class runtime_kind { aloe, libgomp, libomp, tbb, serial, taskflow };

/// Whether this build compiled the Taskflow variants (CMake's ALOE_TASKFLOW_DIR was set).
constexpr bool taskflow_built_in() noexcept {
#ifdef ALOE_APPS_TASKFLOW
    return true;
#else
    return false;
#endif
}

/// An OpenMP schedule the workloads can select at run time (each is its own pragma).
/// `runtime` is schedule(runtime): the run-sched-var ICV decides (OMP_SCHEDULE,
/// omp_set_schedule, or a tool that takes the loop over, such as `aloe run`).
enum class omp_kind { static_block, static_chunk, dynamic, guided, nonmonotonic_dynamic, runtime };
/// A oneTBB partitioner.
enum class tbb_kind { simple, auto_part, affinity, static_part };

/// The schedule a run uses, parsed once from --schedule for the selected runtime.
struct run_schedule {
    std::string text;                 // as given, canonical for aloe
    std::optional<aloe::schedule> aloe_schedule;
    omp_kind omp = omp_kind::static_block;
    tbb_kind tbb = tbb_kind::auto_part;
    std::int64_t chunk = 1;           // OpenMP chunk, TBB grain size
    /// omp_kind::runtime with "runtime,KIND[,C]": the harness sets the run-sched-var to KIND
    /// and `chunk` (0: the library's default) with omp_set_schedule. Plain "runtime" leaves
    /// the ICV to the environment (empty here).
    std::optional<omp_sched_t> runtime_set;
};

/// Parses `text` for `runtime`; throws usage_error naming what is wrong. Accepted:
/// aloe: any aloe schedule string; libgomp/libomp: static, static,C, dynamic[,C], guided[,C],
/// nonmonotonic:dynamic[,C], runtime, runtime,KIND[,C] (KIND: static, dynamic, guided, auto);
/// tbb: simple[,GRAIN], auto[,GRAIN], affinity[,GRAIN], static; serial: serial (or empty);
/// taskflow: default (or empty).
run_schedule parse_run_schedule(runtime_kind runtime, std::string_view text);
std::string_view to_string(runtime_kind r) noexcept;

class harness {
public:
    harness(std::string_view workload, args& flags);
    ~harness();
    harness(const harness&) = delete;
    harness& operator=(const harness&) = delete;

    /// The workload reads its own flags from here before start().
    args& flags() noexcept { return flags_; }

    /// The workload's own defaults for --steps and --warmup (else 20 and 2); before start().
    void default_steps(int steps, int warmup) noexcept { default_steps_ = steps; default_warmup_ = warmup; }

    /// Marks a task workload (before start()): --runtime taskflow is accepted, aloe runs on the
    /// process team of --threads workers (aloe::team::global(), where aloe's tasks run), and
    /// --schedule is validated and recorded but runs nothing.
    void task_workload() noexcept { tasks_ = true; }
    bool is_task_workload() const noexcept { return tasks_; }

    /// Ends flag parsing (unknown flags are an error; --help prints and exits 0), then starts
    /// the runtime's threads, the pinning and the noise. Call once, before any loop.
    void start();

    bool started() const noexcept { return started_; }
    int threads() const noexcept { return threads_; }
    runtime_kind runtime() const noexcept { return runtime_; }
    const run_schedule& schedule() const noexcept { return schedule_; }
    int steps() const noexcept { return steps_; }
    int warmup() const noexcept { return warmup_; }
    bool full_check() const noexcept { return full_check_; }
    /// --corrupt-result (tests only): the workload must spoil one value of its result before
    /// checking it, so the test sees the check fail and the run exit 3.
    bool corrupt_result() const noexcept { return corrupt_; }

    /// The runtimes' own objects, after start(), for task workloads: the oneTBB arena of
    /// --threads slots (tbb runs) and Taskflow's executor of --threads workers, pinned as the
    /// other runtimes' threads (taskflow runs). Throw std::logic_error on another runtime.
    tbb::task_arena& tbb_arena();
    tf::Executor& taskflow_executor();

    /// A workload parameter, recorded in the JSON record under "params".
    void param(std::string_view key, double value);
    void param(std::string_view key, std::string_view value);
    void param(std::string_view key, const char* value) { param(key, std::string_view(value)); }
    template <std::integral T>
    void param(std::string_view key, T value) { params_.emplace_back(std::string(key), std::to_string(value)); }  // exact, unlike a double

    /// Runs body(i) for i in [0, n) on the selected runtime; `site` is a string literal that
    /// names the loop (aloe's loop site, oneTBB's affinity state). With --record-costs, each
    /// iteration of a timed step's loop is timed around the body, on the thread that runs it.
    template <class Body>
    void parallel_for(const char* site, std::int64_t n, Body&& body);

    /// Runs warmup() untimed-for-results steps, then steps() timed ones: step(s) with s
    /// counting from 0 over all of them. Noise is injected in the timed steps only.
    void run_steps(const std::function<void(int)>& step);

    /// The result's checksum: the driver compares its bits with the serial run's.
    void checksum(double value);
    /// A self-check: `ok` false makes the run fail (exit 3) and is printed loudly.
    void check(bool ok, std::string_view what, double value, double reference);

    /// Writes the JSON record; returns the exit status (0, or 3 when a check failed).
    int finish();

    // --- For programs of several processes (MPI ranks; apps/jacobi3d-mpi). -----------------

    /// Called by start() once the flags are read and the environment is settled (the program
    /// may have re-executed itself), before any runtime thread, noise injector or background
    /// child starts: where an MPI program calls MPI_Init_thread, and may call the setters
    /// below. Set before start().
    void before_threads(std::function<void()> hook) { before_threads_ = std::move(hook); }
    /// This process's noise seed (--noise-seed until changed, e.g. to seed + rank), and
    /// whether it injects noise or runs the background child at all. From the hook.
    std::uint64_t noise_seed() const noexcept { return noise_opts_.seed; }
    void noise_seed(std::uint64_t seed) noexcept { noise_opts_.seed = seed; }
    void without_noise() noexcept { noise_off_ = true; }
    void without_background() noexcept { background_off_ = true; }
    /// Whether this process injects noise (--noise-p/--noise-us given, not switched off) and
    /// runs the background child; after start().
    bool injects_noise() const noexcept { return noise_ != nullptr; }
    bool runs_background() const noexcept { return background_ != nullptr; }
    /// The noise this process injected so far (0 without an injector).
    std::int64_t noise_events() const noexcept;
    double noise_injected_s();
    /// The CPU of each thread (pinned runs), after start().
    const std::vector<int>& cpus() const noexcept { return cpus_; }

    /// The timed steps' times; a job replaces them with its own (per step, the slowest
    /// process's) before finish(), which recomputes total_s.
    const std::vector<double>& step_seconds() const noexcept { return step_s_; }
    void step_seconds(std::vector<double> seconds);
    /// A field of the record after the common ones: key and already-formatted JSON.
    void record(std::string_view key, std::string json);
    /// false: finish() writes no record and no summary, and failed checks are not printed
    /// (an MPI rank other than 0, whose job record rank 0 writes). The exit status stands.
    void writes_record(bool yes) noexcept { writes_record_ = yes; }

private:
    struct site_state {
        const char* name;
        std::optional<aloe::loop_site> aloe_site;
        std::unique_ptr<tbb::affinity_partitioner> affinity;
    };
    site_state& site(const char* name);
    // --record-costs: one entry per site and iteration count, each iteration's time summed
    // over the timed invocations (element i is written only by the thread that runs
    // iteration i, and the loop's join orders one invocation before the next).
    struct cost_record {
        std::string site;
        std::int64_t iterations = 0;
        std::int64_t invocations = 0;
        std::vector<std::int64_t> sum_ns;
    };
    cost_record& costs_of(const char* site, std::int64_t n);
    bool write_costs();  // false: the file could not be written (said on stderr)
    template <class Body> void dispatch(const char* site, std::int64_t n, Body& body);
    [[noreturn]] static void no_taskflow_loops();
    void loop_started();
    void loop_finished(site_state& s);
    void write_tuning(json_writer& j) const;
    void write_openmp_schedule(json_writer& j) const;
    std::int64_t& finish_stamp(int thread) noexcept { return finish_ns_[static_cast<std::size_t>(thread) * 8]; }
    static std::int64_t now_ns() noexcept;

    template <class Body> void omp_for(std::int64_t n, Body& body);
    template <class Body> void tbb_for(site_state& s, std::int64_t n, Body& body);

    std::string workload_;
    args& flags_;
    runtime_kind runtime_ = runtime_kind::aloe;
    run_schedule schedule_;
    int threads_ = 1;
    int steps_ = 0;
    int warmup_ = 0;
    int default_steps_ = 20;
    int default_warmup_ = 2;
    bool full_check_ = false;
    bool timeline_ = false;
    bool corrupt_ = false;
    bool started_ = false;
    bool tasks_ = false;
    bool noise_off_ = false;
    bool background_off_ = false;
    bool writes_record_ = true;
    std::function<void()> before_threads_;
    std::vector<std::pair<std::string, std::string>> extra_;  // record(): key, JSON value
    std::string json_path_;
    std::string costs_path_;          // --record-costs, expanded for this process ("": off)
    bool record_costs_ = false;
    std::deque<cost_record> costs_;   // a deque: an entry stays put while others are added
    std::string bind_;
    std::string openmp_library_;
    std::string interposer_;          // a loaded libaloe-gomp*, e.g. under `aloe run`
    // schedule(runtime) runs: the run-sched-var as omp_get_schedule() reported it at start
    // (kind name with an optional "monotonic:" modifier, chunk), and where it came from.
    std::string runtime_value_;
    std::string runtime_kind_name_;
    int runtime_chunk_ = 0;
    std::string runtime_source_;
    std::optional<std::string> runtime_env_;  // OMP_SCHEDULE as the process saw it
    std::string noise_core_text_;
    noise_options noise_opts_;
    std::optional<background_options> background_opts_;
    std::vector<int> cpus_;  // CPU of thread i (pinned runs)

    aloe::team* team_ = nullptr;             // the loops' team: that one, or the process team
    std::unique_ptr<tbb::task_scheduler_handle> tbb_handle_;  // to join oneTBB's workers at the end
    std::unique_ptr<tbb::global_control> tbb_limit_;
    std::unique_ptr<tbb::task_arena> arena_;
    std::unique_ptr<tbb::task_scheduler_observer> pinner_;
    struct taskflow_deleter {
        void operator()(tf::Executor* e) const noexcept;  // harness.cpp: a complete type there
    };
    std::unique_ptr<tf::Executor, taskflow_deleter> taskflow_;  // taskflow runs
    std::unique_ptr<noise_injector> noise_;
    std::unique_ptr<background_load> background_;
    std::vector<site_state> sites_;

    // Records, written by finish().
    std::vector<std::pair<std::string, std::string>> params_;  // key, JSON value
    std::vector<double> step_s_;
    double total_s_ = 0;
    std::optional<double> checksum_;
    struct check_record { bool ok; std::string what; double value; double reference; };
    std::vector<check_record> checks_;

    // Timeline (--timeline): per loop, start/end and each thread's finish, relative to the
    // run's first timed step.
    struct loop_record { int step; double start_s; double end_s; std::vector<double> busy_s; };
    std::vector<loop_record> timeline_loops_;
    std::vector<std::int64_t> finish_ns_;  // padded: thread i at [8 i]
    std::int64_t loop_start_ns_ = 0;
    std::int64_t run_start_ns_ = 0;
    int current_step_ = -1;
};

/// Thrown by a workload to end with `status` and print nothing more (the message, if any,
/// was printed already, e.g. by another MPI rank).
struct quiet_exit {
    int status;
};

/// Parses the common flags, calls `workload(h)`, writes the record; turns usage errors into
/// exit 2 and any other exception into exit 1 with the message on stderr (quiet_exit: its
/// status, silently).
int run_workload(std::string_view name, int argc, char** argv, const std::function<void(harness&)>& workload);

// ---------------------------------------------------------------------------------------
// Dispatch. Each runtime gets the loop the way its users write it: aloe::parallel_for with a
// schedule value, `#pragma omp parallel for schedule(...)`, tbb::parallel_for with a
// partitioner. Timeline runs add one clock read per thread per loop (OpenMP, oneTBB: per
// chunk) and aloe's are read from its statistics, so timed runs carry no instrumentation.

template <class Body>
void harness::omp_for(std::int64_t n, Body& body) {
    [[maybe_unused]] const std::int64_t c = schedule_.chunk;
    // _Pragma takes one string literal, so each schedule spells both forms in full.
#define ALOE_APPS_OMP_LOOP(COMBINED, WORKSHARE)                                \
    if (timeline_) {                                                           \
        _Pragma("omp parallel") {                                              \
            _Pragma(WORKSHARE) for (std::int64_t i = 0; i < n; ++i) body(i);   \
            finish_stamp(omp_get_thread_num()) = now_ns();                     \
        }                                                                      \
    } else {                                                                   \
        _Pragma(COMBINED) for (std::int64_t i = 0; i < n; ++i) body(i);        \
    }
    switch (schedule_.omp) {
    case omp_kind::static_block:
        ALOE_APPS_OMP_LOOP("omp parallel for schedule(static)", "omp for schedule(static) nowait")
        break;
    case omp_kind::static_chunk:
        ALOE_APPS_OMP_LOOP("omp parallel for schedule(static, c)", "omp for schedule(static, c) nowait")
        break;
    case omp_kind::dynamic:
        ALOE_APPS_OMP_LOOP("omp parallel for schedule(dynamic, c)", "omp for schedule(dynamic, c) nowait")
        break;
    case omp_kind::guided:
        ALOE_APPS_OMP_LOOP("omp parallel for schedule(guided, c)", "omp for schedule(guided, c) nowait")
        break;
    case omp_kind::nonmonotonic_dynamic:
        ALOE_APPS_OMP_LOOP("omp parallel for schedule(nonmonotonic: dynamic, c)",
                           "omp for schedule(nonmonotonic: dynamic, c) nowait")
        break;
    case omp_kind::runtime:
        ALOE_APPS_OMP_LOOP("omp parallel for schedule(runtime)", "omp for schedule(runtime) nowait")
        break;
    }
#undef ALOE_APPS_OMP_LOOP
}

template <class Body>
void harness::tbb_for(site_state& s, std::int64_t n, Body& body) {
    const std::int64_t grain = schedule_.chunk;
    arena_->execute([&] {
        auto chunk = [&](const tbb::blocked_range<std::int64_t>& r) {
            for (std::int64_t i = r.begin(); i != r.end(); ++i) body(i);
            if (timeline_) finish_stamp(tbb::this_task_arena::current_thread_index()) = now_ns();
        };
        const tbb::blocked_range<std::int64_t> range(0, n, static_cast<std::size_t>(grain));
        switch (schedule_.tbb) {
        case tbb_kind::simple: tbb::parallel_for(range, chunk, tbb::simple_partitioner()); break;
        case tbb_kind::auto_part: tbb::parallel_for(range, chunk, tbb::auto_partitioner()); break;
        case tbb_kind::affinity: tbb::parallel_for(range, chunk, *s.affinity); break;
        case tbb_kind::static_part: tbb::parallel_for(range, chunk, tbb::static_partitioner()); break;
        }
    });
}

template <class Body>
void harness::parallel_for(const char* site_name, std::int64_t n, Body&& body) {
    // Recording is chosen here, once per loop: without --record-costs (and in the warmup)
    // the runtime gets the workload's own body, untouched.
    if (record_costs_ && current_step_ >= 0) [[unlikely]] {
        cost_record& c = costs_of(site_name, n);
        std::int64_t* const sum = c.sum_ns.data();
        auto timed = [&body, sum](std::int64_t i) {
            const std::int64_t t0 = now_ns();
            body(i);
            sum[i] += now_ns() - t0;
        };
        dispatch(site_name, n, timed);
        ++c.invocations;
        return;
    }
    dispatch(site_name, n, body);
}

template <class Body>
void harness::dispatch(const char* site_name, std::int64_t n, Body& body) {
    site_state& s = site(site_name);
    loop_started();
    switch (runtime_) {
    case runtime_kind::aloe:
        aloe::parallel_for(*team_, 0, n, *schedule_.aloe_schedule, body, *s.aloe_site);
        break;
    case runtime_kind::libgomp:
    case runtime_kind::libomp:
        omp_for(n, body);
        break;
    case runtime_kind::tbb:
        tbb_for(s, n, body);
        break;
    case runtime_kind::serial:
        for (std::int64_t i = 0; i < n; ++i) body(i);
        if (timeline_) finish_stamp(0) = now_ns();
        break;
    case runtime_kind::taskflow:
        no_taskflow_loops();
    }
    loop_finished(s);
}

}  // namespace aloe_apps

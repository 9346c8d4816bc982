#include "harness.hpp"

#include "json_writer.hpp"
#include "runtime/config.hpp"
#include "runtime/json_text.hpp"
#include "runtime/output_file.hpp"
#include "runtime/output_path.hpp"
#include "process_setup.hpp"
#include "taskflow_header.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <new>
#include <stdexcept>

namespace aloe_apps {

std::string_view to_string(runtime_kind r) noexcept {
    switch (r) {
    case runtime_kind::aloe: return "aloe";
    case runtime_kind::libgomp: return "libgomp";
    case runtime_kind::libomp: return "libomp";
    case runtime_kind::tbb: return "tbb";
    case runtime_kind::serial: return "serial";
    case runtime_kind::taskflow: return "taskflow";
    }
    return "?";
}

namespace {

runtime_kind parse_runtime(std::string_view text, bool task_workload) {
    for (const runtime_kind r : {runtime_kind::aloe, runtime_kind::libgomp, runtime_kind::libomp, runtime_kind::tbb,
                                 runtime_kind::serial, runtime_kind::taskflow}) {
        if (text != to_string(r)) continue;
        if (r == runtime_kind::taskflow && !task_workload)
            throw usage_error("--runtime taskflow runs the task workloads only (fib, uts, sort, nqueens, "
                              "stencil1d-tasks); this one is a loop workload");
        if (r == runtime_kind::taskflow && !taskflow_built_in())
            throw usage_error("--runtime taskflow: this build has no Taskflow (configure with "
                              "-DALOE_TASKFLOW_DIR=<a Taskflow checkout> to build the Taskflow variants)");
        return r;
    }
    throw usage_error("--runtime '" + std::string(text) + "': expected aloe, libgomp, libomp, tbb, serial" +
                      (task_workload ? " or taskflow" : " or (task workloads only) taskflow"));
}

// "kind" or "kind,N": the kind, and the chunk (fallback when absent; validated by
// parse_chunk once the kind is known to be right, so the error names the real problem).
std::pair<std::string, std::string> split_kind(std::string_view text) {
    const std::size_t comma = text.find(',');
    if (comma == std::string_view::npos) return {std::string(text), {}};
    return {std::string(text.substr(0, comma)), std::string(text.substr(comma + 1))};
}

std::int64_t parse_chunk(runtime_kind r, std::string_view text, const std::string& number) {
    if (number.empty() && text.find(',') == std::string_view::npos) return 1;
    char* end = nullptr;
    const long long chunk = std::strtoll(number.c_str(), &end, 10);
    if (number.empty() || end != number.c_str() + number.size() || chunk < 1) {
        throw usage_error("--schedule '" + std::string(text) + "' for " + std::string(to_string(r)) + ": '" + number +
                          "' is not a positive chunk size");
    }
    return chunk;
}

// omp_get_schedule()'s kind as OMP_SCHEDULE spells it ("dynamic", "monotonic:guided", …).
std::string omp_kind_name(omp_sched_t kind) {
    const auto bits = static_cast<unsigned>(kind);
    constexpr unsigned monotonic = 0x80000000U;  // omp_sched_monotonic (OpenMP 4.5)
    std::string name = (bits & monotonic) != 0 ? "monotonic:" : "";
    switch (static_cast<omp_sched_t>(bits & ~monotonic)) {
    case omp_sched_static: return name + "static";
    case omp_sched_dynamic: return name + "dynamic";
    case omp_sched_guided: return name + "guided";
    case omp_sched_auto: return name + "auto";
    default: return name + "kind" + std::to_string(bits & ~monotonic);  // an extension's kind
    }
}

}  // namespace

run_schedule parse_run_schedule(runtime_kind runtime, std::string_view text) {
    run_schedule s;
    s.text = std::string(text);
    const auto bad = [&](std::string_view expected) {
        return usage_error("--schedule '" + std::string(text) + "' is not a " + std::string(to_string(runtime)) +
                           " schedule; expected " + std::string(expected));
    };
    switch (runtime) {
    case runtime_kind::aloe: {
        std::string error;
        aloe::schedule parsed;
        if (!aloe::schedule::try_parse(text, parsed, error)) throw usage_error("--schedule: " + error);
        s.aloe_schedule = parsed;
        return s;
    }
    case runtime_kind::libgomp:
    case runtime_kind::libomp: {
        constexpr std::string_view expected =
            "static, static,C, dynamic[,C], guided[,C], nonmonotonic:dynamic[,C], runtime or runtime,KIND[,C]";
        if (text == "runtime" || text.starts_with("runtime,")) {
            s.omp = omp_kind::runtime;
            s.chunk = 0;
            if (text == "runtime") return s;  // the run-sched-var is the environment's
            const std::string_view rest = text.substr(std::string_view("runtime,").size());
            const auto [kind, number] = split_kind(rest);
            if (kind == "static") s.runtime_set = omp_sched_static;
            else if (kind == "dynamic") s.runtime_set = omp_sched_dynamic;
            else if (kind == "guided") s.runtime_set = omp_sched_guided;
            else if (kind == "auto") s.runtime_set = omp_sched_auto;
            else throw bad("runtime,KIND[,C] with KIND static, dynamic, guided or auto");
            if (rest.find(',') != std::string_view::npos) s.chunk = parse_chunk(runtime, text, number);
            return s;
        }
        const auto [kind, number] = split_kind(text);
        if (kind == "static") s.omp = text.find(',') == std::string_view::npos ? omp_kind::static_block : omp_kind::static_chunk;
        else if (kind == "dynamic") s.omp = omp_kind::dynamic;
        else if (kind == "guided") s.omp = omp_kind::guided;
        else if (kind == "nonmonotonic:dynamic") s.omp = omp_kind::nonmonotonic_dynamic;
        else throw bad(expected);
        s.chunk = parse_chunk(runtime, text, number);
        return s;
    }
    case runtime_kind::tbb: {
        constexpr std::string_view expected = "simple[,GRAIN], auto[,GRAIN], affinity[,GRAIN] or static";
        const auto [kind, number] = split_kind(text);
        if (kind == "simple") s.tbb = tbb_kind::simple;
        else if (kind == "auto") s.tbb = tbb_kind::auto_part;
        else if (kind == "affinity") s.tbb = tbb_kind::affinity;
        else if (kind == "static" && text == "static") s.tbb = tbb_kind::static_part;
        else throw bad(expected);
        s.chunk = parse_chunk(runtime, text, number);
        return s;
    }
    case runtime_kind::serial:
        if (text != "serial" && !text.empty()) throw bad("serial");
        s.text = "serial";
        return s;
    case runtime_kind::taskflow:
        if (text != "default" && !text.empty()) throw bad("default");
        s.text = "default";
        return s;
    }
    return s;
}

namespace {

// Pins each oneTBB thread of the arena to the CPU an OpenMP or aloe thread with the same
// index would have (thread i on the i-th allowed CPU).
class tbb_pinner final : public tbb::task_scheduler_observer {
public:
    tbb_pinner(tbb::task_arena& arena, std::vector<int> cpus) : tbb::task_scheduler_observer(arena), cpus_(std::move(cpus)) {
        observe(true);
    }
    ~tbb_pinner() override { observe(false); }
    tbb_pinner(const tbb_pinner&) = delete;
    tbb_pinner& operator=(const tbb_pinner&) = delete;

    void on_scheduler_entry(bool) override {
        const int index = tbb::this_task_arena::current_thread_index();
        if (index >= 0) pin_current_thread(cpus_[static_cast<std::size_t>(index) % cpus_.size()]);
    }

private:
    std::vector<int> cpus_;
};

#ifdef ALOE_APPS_TASKFLOW
// Pins Taskflow's worker i to the CPU an OpenMP or aloe thread with the same index would have.
class taskflow_pinner final : public tf::WorkerInterface {
public:
    explicit taskflow_pinner(std::vector<int> cpus) : cpus_(std::move(cpus)) {}
    void scheduler_prologue(tf::Worker& w) override { pin_current_thread(cpus_[w.id() % cpus_.size()]); }
    void scheduler_epilogue(tf::Worker&, std::exception_ptr) override {}

private:
    std::vector<int> cpus_;
};
#endif

double seconds(std::int64_t ns) { return static_cast<double>(ns) * 1e-9; }

}  // namespace

harness::harness(std::string_view workload, args& flags) : workload_(workload), flags_(flags) {}

void harness::taskflow_deleter::operator()([[maybe_unused]] tf::Executor* e) const noexcept {
#ifdef ALOE_APPS_TASKFLOW
    delete e;
#endif
}

harness::~harness() {
    taskflow_.reset();  // joins its workers before the rest goes
    if (tbb_handle_) {
        // oneTBB does not join its workers at exit unless asked: a worker still winding down
        // when the process ends shows up as a leak (LeakSanitizer) or a late pinning call.
        // The parallelism limit goes last: dropped before, it leaves a process with one CPU
        // and more threads a worker that finalize waits for and nothing wakes.
        pinner_.reset();
        arena_.reset();
        (void)tbb::finalize(*tbb_handle_, std::nothrow);
        tbb_limit_.reset();
    }
}

std::int64_t harness::now_ns() noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

void harness::start() {
    if (started_) throw std::logic_error("harness::start called twice");
    started_ = true;
    const std::vector<int> allowed = allowed_cpus();
    const std::string runtime_text =
        flags_.text("--runtime", "aloe",
                    tasks_ ? "aloe, libgomp, libomp, tbb, serial or taskflow" : "aloe, libgomp, libomp, tbb or serial");
    const std::string schedule_text =
        flags_.text("--schedule", "", "schedule for the runtime (default: static; tbb: auto; OpenMP runtime: "
                                      "OMP_SCHEDULE decides; see apps/README.md)");
    const std::int64_t threads = flags_.integer("--threads", static_cast<std::int64_t>(allowed.size()),
                                                "threads of every runtime (default: the CPUs this process may use)");
    bind_ = flags_.text("--bind", "close", "close: thread i on the i-th allowed CPU; none: leave placement to the OS");
    steps_ = static_cast<int>(flags_.integer("--steps", default_steps_, "timed timesteps"));
    warmup_ = static_cast<int>(flags_.integer("--warmup", default_warmup_, "untimed timesteps before them"));
    noise_opts_.probability = flags_.real("--noise-p", 0, "per timed step, probability that one CPU is taken");
    noise_opts_.length_us = flags_.real("--noise-us", 0, "how long the CPU is taken, microseconds");
    noise_core_text_ = flags_.text("--noise-core", "random", "which thread's CPU the noise takes: random or an index");
    noise_opts_.seed = static_cast<std::uint64_t>(flags_.integer("--noise-seed", 1, "seed of the noise draws"));
    noise_opts_.delay_us =
        flags_.real("--noise-delay-us", noise_opts_.delay_us, "when in the step the event starts, microseconds");
    const std::string background = flags_.text("--background", "", "CPU:DUTY[:PERIOD_US] load from a child process");
    timeline_ = flags_.present("--timeline", "record each thread's busy time per loop");
    const std::string check = flags_.text("--check", "quick", "quick or full (also a whole serial re-run)");
    json_path_ = flags_.text("--json", "", "write the record as JSON to this file, or - for stdout");
    const std::string costs_pattern = flags_.text(
        "--record-costs", "",
        "write each loop site's mean time per iteration over the timed steps to this JSON file "
        "(aloe-iteration-costs/1, the input of `aloe sim`): each iteration is timed around the body on the thread "
        "that runs it, so with more than one thread the costs include contention; %r, %p, %h name the process, and "
        "in a job of several ranks each rank writes its own file (costs.rank1.json)");
    corrupt_ = flags_.present("--corrupt-result", "tests only: spoil one value so the check must fail");

    if (flags_.help_requested()) {
        std::cout << flags_.help("workload '" + workload_ + "' of the aloe benchmark harness (apps/README.md)");
        std::exit(0);
    }
    flags_.reject_unread();

    runtime_ = parse_runtime(runtime_text, tasks_);
    const std::string default_schedule = runtime_ == runtime_kind::tbb        ? "auto"
                                         : runtime_ == runtime_kind::serial   ? "serial"
                                         : runtime_ == runtime_kind::taskflow ? "default"
                                                                              : "static";
    schedule_ = parse_run_schedule(runtime_, schedule_text.empty() ? default_schedule : schedule_text);
    if (threads < 1 || threads > 4096) throw usage_error("--threads " + std::to_string(threads) + " is not in [1, 4096]");
    threads_ = runtime_ == runtime_kind::serial ? 1 : static_cast<int>(threads);
    if (bind_ != "close" && bind_ != "none") throw usage_error("--bind '" + bind_ + "': expected close or none");
    if (steps_ < 1) throw usage_error("--steps must be at least 1");
    if (warmup_ < 0) throw usage_error("--warmup must not be negative");
    if (check != "quick" && check != "full") throw usage_error("--check '" + check + "': expected quick or full");
    full_check_ = check == "full";
    if (costs_pattern == "-") throw usage_error("--record-costs needs a file name, not - (stdout is the record's)");
    record_costs_ = !costs_pattern.empty();
    const bool noisy = noise_opts_.probability > 0 || noise_opts_.length_us > 0;
    if (noisy) {
        if (noise_core_text_ != "random") {
            char* end = nullptr;
            const long core = std::strtol(noise_core_text_.c_str(), &end, 10);
            if (noise_core_text_.empty() || *end != '\0' || core < 0)
                throw usage_error("--noise-core '" + noise_core_text_ + "': expected random or a thread index");
            noise_opts_.fixed_cpu = static_cast<int>(core);
        }
    }
    try {
        if (!background.empty()) background_opts_ = parse_background(background);
    } catch (const std::invalid_argument& e) {
        throw usage_error(e.what());
    }

    // Pinning variables are read when the runtimes load, so they go in before (re-exec).
    // OpenMP binding only for OpenMP runs: libgomp pins the initial thread as it loads, which
    // would narrow the CPUs of the other runtimes' threads.
    const bool openmp = runtime_ == runtime_kind::libgomp || runtime_ == runtime_kind::libomp;
    std::vector<std::pair<std::string, std::string>> wanted;
    if (bind_ == "close" && openmp) wanted = {{"OMP_PROC_BIND", "close"}, {"OMP_PLACES", "cores"}};
    else wanted = {{"OMP_PROC_BIND", "false"}, {"OMP_PLACES", ""}};
    wanted.emplace_back("ALOE_PROC_BIND", bind_ == "close" ? "close" : "none");
    // aloe runs on the process team, which takes its size from here: a task workload's tasks
    // run there, and only that team carries spare workers for cores other ranks of an MPI
    // job lend (runtime/borrowed_cores.hpp).
    if (runtime_ == runtime_kind::aloe) wanted.emplace_back("ALOE_NUM_THREADS", std::to_string(threads_));
    std::vector<std::string> words{flags_.program()};
    words.insert(words.end(), flags_.words().begin(), flags_.words().end());
    ensure_environment(wanted, runtime_ == runtime_kind::libomp, words);
    if (before_threads_) before_threads_();
    if (record_costs_) {
        // As aloe's own output files: %r/%p/%h expanded, the rank added in a job of several.
        const aloe::runtime::config& cfg = aloe::runtime::current_config();
        costs_path_ = aloe::runtime::expand_output_path(costs_pattern,
                                                        aloe::runtime::process_identity::of_this_process(cfg));
    }

    for (int i = 0; i < threads_; ++i) cpus_.push_back(allowed[static_cast<std::size_t>(i) % allowed.size()]);

    // The background child is forked before any runtime starts a thread.
    if (background_opts_ && !background_off_) {
        if (std::find(allowed.begin(), allowed.end(), background_opts_->cpu) == allowed.end())
            throw usage_error("--background: CPU " + std::to_string(background_opts_->cpu) + " is not one this process may use");
        background_ = std::make_unique<background_load>(*background_opts_);
    }

    switch (runtime_) {
    case runtime_kind::aloe:
        team_ = &aloe::team::global();  // started here, outside the timed steps
        if (team_->size() != threads_)
            throw std::runtime_error("the process team has " + std::to_string(team_->size()) + " workers, not --threads " +
                                     std::to_string(threads_) + " (ALOE_NUM_THREADS overridden?)");
        break;
    case runtime_kind::libgomp:
    case runtime_kind::libomp: {
        omp_set_dynamic(0);
        omp_set_num_threads(threads_);
        if (schedule_.omp == omp_kind::runtime) {
            // The run-sched-var, before the first region: set here for runtime,KIND[,C]; for
            // plain runtime left as OMP_SCHEDULE (or a tool such as `aloe run`) has it.
            const char* env = std::getenv("OMP_SCHEDULE");
            if (schedule_.runtime_set) {
                omp_set_schedule(*schedule_.runtime_set, static_cast<int>(schedule_.chunk));
                runtime_source_ = "omp_set_schedule";
            } else {
                runtime_source_ = env != nullptr && *env != '\0' ? "OMP_SCHEDULE" : "default";
            }
            omp_sched_t kind{};
            omp_get_schedule(&kind, &runtime_chunk_);
            runtime_kind_name_ = omp_kind_name(kind);
            runtime_value_ = runtime_kind_name_ + (runtime_chunk_ > 0 ? "," + std::to_string(runtime_chunk_) : "");
            if (env != nullptr) runtime_env_ = env;
        }
#pragma omp parallel
        { (void)omp_get_thread_num(); }  // start the pool outside the timed steps
        openmp_library_ = loaded_openmp_library();
        interposer_ = loaded_library("libaloe-gomp");
        const bool is_libomp = openmp_library_.starts_with("libomp");
        if (is_libomp != (runtime_ == runtime_kind::libomp)) {
            throw std::runtime_error("--runtime " + std::string(to_string(runtime_)) + " but the loaded OpenMP library is '" +
                                     openmp_library_ + "'");
        }
        break;
    }
    case runtime_kind::tbb:
        tbb_handle_ = std::make_unique<tbb::task_scheduler_handle>(tbb::attach{});
        tbb_limit_ = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                                           static_cast<std::size_t>(threads_));
        arena_ = std::make_unique<tbb::task_arena>(threads_, 1);
        arena_->initialize();
        if (bind_ == "close") pinner_ = std::make_unique<tbb_pinner>(*arena_, cpus_);
        break;
    case runtime_kind::serial:
        if (bind_ == "close") pin_current_thread(cpus_[0]);
        break;
    case runtime_kind::taskflow:
#ifdef ALOE_APPS_TASKFLOW
    {
        std::shared_ptr<tf::WorkerInterface> pinner;
        if (bind_ == "close") pinner = tf::make_worker_interface<taskflow_pinner>(cpus_);
        taskflow_.reset(new tf::Executor(static_cast<std::size_t>(threads_), std::move(pinner)));
    }
#endif
        break;
    }
    finish_ns_.assign(static_cast<std::size_t>(threads_) * 8, 0);
    if (noisy && !noise_off_) {
        try {
            noise_ = std::make_unique<noise_injector>(noise_opts_, cpus_);
        } catch (const std::invalid_argument& e) {
            throw usage_error(e.what());
        }
    }
}

tbb::task_arena& harness::tbb_arena() {
    if (!arena_) throw std::logic_error("harness::tbb_arena: not a started tbb run");
    return *arena_;
}

tf::Executor& harness::taskflow_executor() {
    if (!taskflow_) throw std::logic_error("harness::taskflow_executor: not a started taskflow run");
    return *taskflow_;
}

void harness::no_taskflow_loops() {
    throw std::logic_error("harness::parallel_for has no Taskflow version (a task workload runs its own tasks)");
}

void harness::param(std::string_view key, double value) {
    params_.emplace_back(std::string(key), aloe::runtime::json_number(value));
}

void harness::param(std::string_view key, std::string_view value) {
    params_.emplace_back(std::string(key), aloe::runtime::json_quote(value));
}

harness::site_state& harness::site(const char* name) {
    for (site_state& s : sites_)
        if (std::string_view(s.name) == name) return s;
    if (!started_) throw std::logic_error("harness::parallel_for before start()");
    site_state& s = sites_.emplace_back();
    s.name = name;
    s.aloe_site.emplace(std::string_view(name));
    s.affinity = std::make_unique<tbb::affinity_partitioner>();
    return s;
}

harness::cost_record& harness::costs_of(const char* name, std::int64_t n) {
    for (cost_record& c : costs_)
        if (c.iterations == n && c.site == name) return c;
    cost_record& c = costs_.emplace_back();
    c.site = name;
    c.iterations = n;
    c.sum_ns.assign(static_cast<std::size_t>(std::max<std::int64_t>(n, 0)), 0);
    return c;
}

bool harness::write_costs() {
    json_writer j;
    j.begin_object();
    j.key("format").value("aloe-iteration-costs/1");
    j.key("workload").value(workload_).key("runtime").value(to_string(runtime_)).key("schedule").value(schedule_.text);
    j.key("threads").value(threads_).key("steps").value(steps_).key("warmup").value(warmup_);
    j.key("loops").begin_array();
    for (const cost_record& c : costs_) {
        j.begin_object().key("site").value(c.site).key("iterations").value(c.iterations);
        j.key("invocations").value(c.invocations).key("cost_s").begin_array();
        const double per = c.invocations > 0 ? 1e-9 / static_cast<double>(c.invocations) : 0.0;
        for (const std::int64_t ns : c.sum_ns) j.value(static_cast<double>(ns) * per);
        j.end_array().end_object();
    }
    j.end_array().end_object();
    std::string error;  // whole or not at all, never through a planted link
    if (!aloe::runtime::write_output_file(costs_path_, j.text() + '\n', error)) {
        std::cerr << workload_ << ": cannot write the iteration costs: " << error << '\n';
        return false;
    }
    return true;
}

void harness::loop_started() {
    if (!timeline_ || current_step_ < 0) return;
    loop_start_ns_ = now_ns();
    for (int t = 0; t < threads_; ++t) finish_stamp(t) = loop_start_ns_;
}

void harness::loop_finished(site_state& s) {
    if (!timeline_ || current_step_ < 0) return;
    const std::int64_t end = now_ns();
    loop_record r{current_step_, seconds(loop_start_ns_ - run_start_ns_), seconds(end - run_start_ns_), {}};
    if (runtime_ == runtime_kind::aloe) {
        // aloe's own statistics: each thread's static + dynamic time in this run of the site.
        if (const auto st = aloe::stats_of(*s.aloe_site)) {
            for (const aloe::thread_loop_stats& t : st->last) r.busy_s.push_back(t.static_s + t.dynamic_s);
        }
    } else {
        for (int t = 0; t < threads_; ++t) r.busy_s.push_back(seconds(finish_stamp(t) - loop_start_ns_));
    }
    if (timeline_loops_.size() < 20000) timeline_loops_.push_back(std::move(r));
}

void harness::write_tuning(json_writer& j) const {
    // Each adaptive site's tuner: what it chose, why, and every invocation it saw (for the
    // harness's convergence plots). Only aloe runs of an adaptive schedule have one.
    if (runtime_ != runtime_kind::aloe) return;
    bool any = false;
    for (const site_state& s : sites_) {
        const auto st = aloe::stats_of(*s.aloe_site);
        if (!st || !st->tuning) continue;
        if (!any) j.key("tuning").begin_array();
        any = true;
        const std::string object = aloe::tuning_json(*st->tuning);  // {"search": …}
        j.raw("{\"site\": " + aloe::runtime::json_quote(s.name) + ", " + object.substr(1));
    }
    if (any) j.end_array();
}

void harness::write_openmp_schedule(json_writer& j) const {
    // What an OpenMP run's loops really ran under: schedule(runtime)'s run-sched-var as
    // omp_get_schedule() reported it, and the aloe interposer when one was preloaded (`aloe
    // run`), with the choice it was told to use. Only OpenMP runs have these keys.
    if (runtime_ != runtime_kind::libgomp && runtime_ != runtime_kind::libomp) return;
    if (schedule_.omp == omp_kind::runtime) {
        j.key("runtime_schedule").begin_object();
        j.key("value").value(runtime_value_).key("kind").value(runtime_kind_name_);
        j.key("chunk").value(runtime_chunk_).key("source").value(runtime_source_);
        j.key("OMP_SCHEDULE");
        if (runtime_env_) j.value(*runtime_env_); else j.null();
        j.end_object();
    }
    j.key("interposer");
    if (interposer_.empty()) {
        j.null();
    } else {
        // `aloe run` tells the interposer its choice in ALOE_OMP_SCHEDULE (ALOE_SCHEDULE is
        // left to aloe's own loops).
        const char* aloe_schedule = std::getenv("ALOE_OMP_SCHEDULE");
        j.begin_object().key("library").value(interposer_).key("ALOE_OMP_SCHEDULE");
        if (aloe_schedule != nullptr) j.value(std::string_view(aloe_schedule)); else j.null();
        j.end_object();
    }
}

void harness::run_steps(const std::function<void(int)>& step) {
    const int total = warmup_ + steps_;
    step_s_.reserve(static_cast<std::size_t>(steps_));
    for (int s = 0; s < total; ++s) {
        const bool timed = s >= warmup_;
        if (timed && s == warmup_) run_start_ns_ = now_ns();
        current_step_ = timed ? s - warmup_ : -1;
        // The clock starts first: an event is part of the step it disturbs.
        const std::int64_t t0 = now_ns();
        if (timed && noise_) noise_->at_step_start();
        step(s);
        const std::int64_t t1 = now_ns();
        if (timed) step_s_.push_back(seconds(t1 - t0));
    }
    current_step_ = -1;
    total_s_ = 0;
    for (const double t : step_s_) total_s_ += t;
}

void harness::checksum(double value) { checksum_ = value; }

std::int64_t harness::noise_events() const noexcept { return noise_ ? noise_->events() : 0; }

double harness::noise_injected_s() { return noise_ ? noise_->injected_seconds() : 0.0; }

void harness::step_seconds(std::vector<double> seconds) {
    step_s_ = std::move(seconds);
    total_s_ = 0;
    for (const double t : step_s_) total_s_ += t;
}

void harness::record(std::string_view key, std::string json) { extra_.emplace_back(std::string(key), std::move(json)); }

void harness::check(bool ok, std::string_view what, double value, double reference) {
    checks_.push_back({ok, std::string(what), value, reference});
    if (!ok && writes_record_) {
        std::cerr << "CHECK FAILED [" << workload_ << " " << to_string(runtime_) << " '" << schedule_.text << "']: " << what
                  << ": got " << value << ", expected " << reference << '\n';
    }
}

int harness::finish() {
    const double injected = noise_ ? noise_->injected_seconds() : 0.0;
    bool ok = checksum_.has_value() && !checks_.empty();
    for (const check_record& c : checks_) ok = ok && c.ok;
    // Every process writes its own costs, the ranks that write no record too; a file that
    // cannot be written fails the run (1), after the record.
    const bool costs_written = !record_costs_ || write_costs();
    const int status = !costs_written ? 1 : ok ? 0 : 3;
    if (!writes_record_) return status;
    if (!checksum_) std::cerr << "CHECK FAILED [" << workload_ << "]: the workload recorded no checksum\n";
    if (checks_.empty()) std::cerr << "CHECK FAILED [" << workload_ << "]: the workload recorded no check\n";

    json_writer j;
    j.begin_object();
    j.key("workload").value(workload_).key("runtime").value(to_string(runtime_)).key("schedule").value(schedule_.text);
    j.key("threads").value(threads_).key("bind").value(bind_);
    j.key("cpus").begin_array();
    for (const int c : cpus_) j.value(c);
    j.end_array();
    j.key("openmp_library");
    if (openmp_library_.empty()) j.null(); else j.value(openmp_library_);
    write_openmp_schedule(j);
    j.key("steps").value(steps_).key("warmup").value(warmup_).key("total_s").value(total_s_);
    j.key("step_s").begin_array();
    for (const double t : step_s_) j.value(t);
    j.end_array();
    j.key("params").begin_object();
    for (const auto& [k, v] : params_) j.key(k).raw(v);
    j.end_object();
    j.key("checksum");
    if (checksum_) j.value(*checksum_); else j.null();
    char bits[24];
    std::snprintf(bits, sizeof bits, "%016" PRIx64, checksum_ ? std::bit_cast<std::uint64_t>(*checksum_) : 0);
    j.key("checksum_bits").value(checksum_ ? std::string_view(bits) : std::string_view(""));
    j.key("checks").begin_array();
    for (const check_record& c : checks_) {
        j.begin_object().key("what").value(c.what).key("ok").value(c.ok).key("value").value(c.value);
        j.key("reference").value(c.reference).end_object();
    }
    j.end_array();
    j.key("ok").value(ok);
    j.key("noise").begin_object();
    j.key("p").value(noise_ ? noise_opts_.probability : 0.0).key("us").value(noise_ ? noise_opts_.length_us : 0.0);
    j.key("core").value(noise_core_text_).key("seed").value(static_cast<std::int64_t>(noise_opts_.seed));
    j.key("delay_us").value(noise_opts_.delay_us);
    j.key("priority");
    if (noise_) j.value(noise_->priority()); else j.null();
    j.key("events").value(noise_ ? noise_->events() : std::int64_t{0}).key("injected_s").value(injected);
    j.key("background");
    if (background_opts_) {
        j.begin_object().key("cpu").value(background_opts_->cpu).key("duty").value(background_opts_->duty);
        j.key("period_us").value(background_opts_->period_us).end_object();
    } else {
        j.null();
    }
    j.end_object();
    write_tuning(j);
    if (timeline_) {
        j.key("timeline").begin_array();
        for (const loop_record& r : timeline_loops_) {
            j.begin_object().key("step").value(r.step).key("start_s").value(r.start_s).key("end_s").value(r.end_s);
            j.key("busy_s").begin_array();
            for (const double b : r.busy_s) j.value(b);
            j.end_array().end_object();
        }
        j.end_array();
    }
    for (const auto& [k, v] : extra_) j.key(k).raw(v);
    j.end_object();

    if (json_path_ == "-") {
        std::cout << j.text() << std::endl;
    } else if (!json_path_.empty()) {
        std::string error;  // whole or not at all, never through a planted link
        if (!aloe::runtime::write_output_file(json_path_, j.text() + '\n', error)) {
            std::cerr << workload_ << ": cannot write the record: " << error << '\n';
            return 1;
        }
    }
    std::vector<double> sorted = step_s_;
    std::sort(sorted.begin(), sorted.end());
    const double median = sorted.empty() ? 0.0 : sorted[sorted.size() / 2];
    std::string shown = schedule_.text;  // and what schedule(runtime) ran, and under aloe run
    if (!runtime_value_.empty()) shown += " (" + runtime_value_ + ")";
    if (!interposer_.empty()) shown += " [aloe run]";
    std::fprintf(stderr, "%s %s '%s' threads=%d: %d steps, median step %.3f ms, total %.4f s, noise events %lld, %s\n",
                 workload_.c_str(), std::string(to_string(runtime_)).c_str(), shown.c_str(), threads_, steps_,
                 median * 1e3, total_s_, static_cast<long long>(noise_ ? noise_->events() : 0),
                 ok ? "check ok" : "CHECK FAILED");
    return status;
}

int run_workload(std::string_view name, int argc, char** argv, const std::function<void(harness&)>& workload) {
    const std::string label(name);
    try {
        args flags(argc, argv);
        harness h(name, flags);
        workload(h);
        if (!h.started()) throw std::logic_error("the workload never called harness::start()");
        return h.finish();
    } catch (const quiet_exit& e) {
        return e.status;
    } catch (const usage_error& e) {
        std::cerr << label << ": " << e.what() << '\n';
        return 2;
    } catch (const std::exception& e) {
        std::cerr << label << ": error: " << e.what() << '\n';
        return 1;
    }
}

}  // namespace aloe_apps

#include "runtime/team.hpp"

#include "runtime/counters.hpp"
#include "runtime/cpu_mask.hpp"
#include "runtime/process_copies.hpp"
#include "runtime/report.hpp"
#include "runtime/topology.hpp"

#include <aloe/error.hpp>
#include <aloe/team.hpp>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>

#include <pthread.h>
#include <sched.h>

namespace aloe::runtime {

namespace {

thread_local bool running_job = false;

struct job_marker {
    job_marker() noexcept { running_job = true; }
    ~job_marker() { running_job = false; }
};

// --- After fork() (README "After fork()") -------------------------------------------------
//
// Lock order around fork(), taken by before_fork() and released in reverse by the other two:
//   1. process_team_mutex   making the process team, and parking dead teams' threads
//   2. hooks_mutex          registration of fork hooks (so the table cannot change meanwhile)
//   3. the registered hooks in fork_order: the interposer's sites (libaloe-gomp.so only), loop
//      sites, counters, reports.
// Making the process team may register a module's hooks (its first report, say), so the
// team's mutex comes first; registering holds hooks_mutex for a table write and nothing else.
// None of these is held while a loop body runs, so fork() from a loop body (or from any
// thread while loops run) only waits for short critical sections to end. The child handler
// runs on the only thread the child has: it bumps the generation and unlocks.

constinit std::atomic<std::uint32_t> generation{0};

constexpr std::array fork_order{fork_rank::omp_sites, fork_rank::loop_sites, fork_rank::counters,
                                fork_rank::reports};
constinit std::mutex hooks_mutex;
constinit std::array<fork_hooks, fork_order.size()> hooks_at{};  // by position in fork_order

constinit std::mutex process_team_mutex;
constinit std::atomic<team*> process_team{nullptr};

void before_fork() noexcept {
    process_team_mutex.lock();
    hooks_mutex.lock();
    for (const fork_hooks& h : hooks_at)
        if (h.prepare != nullptr) h.prepare();
}

void after_fork_in_parent() noexcept {
    for (auto h = hooks_at.rbegin(); h != hooks_at.rend(); ++h)
        if (h->parent != nullptr) h->parent();
    hooks_mutex.unlock();
    process_team_mutex.unlock();
}

void after_fork_in_child() noexcept {
    generation.fetch_add(1, std::memory_order_relaxed);  // the child has one thread: no race
    for (auto h = hooks_at.rbegin(); h != hooks_at.rend(); ++h)
        if (h->child != nullptr) h->child();
    hooks_mutex.unlock();
    process_team_mutex.unlock();
}

void arm_fork_handler() noexcept {
    static const bool armed = [] {
        if (pthread_atfork(&before_fork, &after_fork_in_parent, &after_fork_in_child) == 0) return true;
        report_once({report_level::warning, report_category::runtime, "W012",
                     "pthread_atfork failed: a child of fork() may block in its first loop", ""});
        return false;
    }();
    (void)armed;
}

// Teams made before fork() cannot be destroyed in the child: their std::thread objects name
// threads that do not exist there (joining one would block for ever, and glibc may already
// have given its stack to a new thread, so detaching it could detach that one). Their
// threads are parked here instead, reachable, never destroyed. Under process_team_mutex.
std::vector<std::thread>& threads_lost_to_fork() {
    static auto* const lost = new std::vector<std::thread>;
    return *lost;
}

// Process teams left behind by a fork(), kept reachable for references taken before it.
std::vector<team*>& teams_lost_to_fork() {
    static auto* const lost = new std::vector<team*>;
    return *lost;
}

// An unbound worker inherits the mask of the thread that started it, which the program (or
// libgomp under OMP_PROC_BIND) may have narrowed to one CPU: the whole team would then share
// it. Such a worker takes the process's allowed CPUs instead (topology::allowed_cpus(): the
// mask at load, the cgroup cpuset), so "unbound" means the OS places it within them.
// Sets of any size (cpu_mask.hpp): a machine may have more CPUs than CPU_SETSIZE.
void spread_over_allowed_cpus(const topology& topo) noexcept {
    const std::vector<int>& allowed = topo.allowed_cpus();  // ascending
    if (allowed.empty() || allowed.front() < 0) return;
    const std::optional<std::vector<int>> mine = read_affinity_mask();
    if (!mine || mine->size() >= allowed.size()) return;
    const int ncpus = allowed.back() + 1;
    cpu_set_t* wanted = CPU_ALLOC(ncpus);
    if (wanted == nullptr) return;
    const std::size_t size = CPU_ALLOC_SIZE(ncpus);
    CPU_ZERO_S(size, wanted);
    for (const int c : allowed) CPU_SET_S(c, size, wanted);
    sched_setaffinity(0, size, wanted);
    CPU_FREE(wanted);
}

[[gnu::cold, gnu::noinline]] bool refuse_after_fork(int size) noexcept {
    static std::atomic<bool> reported{false};
    if (!reported.exchange(true, std::memory_order_relaxed))
        report_once({report_level::warning, report_category::runtime, "W010",
                     "a team of " + std::to_string(size) +
                         " workers made before fork() has no workers in this child process",
                     "serial loops on it"});
    return false;
}

}  // namespace

std::uint32_t fork_generation() noexcept { return generation.load(std::memory_order_relaxed); }

void register_fork_hooks(fork_rank rank, const fork_hooks& hooks) noexcept {
    arm_fork_handler();
    std::lock_guard lock(hooks_mutex);
    for (std::size_t i = 0; i < fork_order.size(); ++i)
        if (fork_order[i] == rank && hooks_at[i].prepare == nullptr) hooks_at[i] = hooks;
}

worker_team::worker_team(int size, const config& cfg)
    : size_(size), born_in_(fork_generation()),
      wait_(wait_settings::from_config(cfg, size, topology::machine().cores())) {
    arm_fork_handler();
    const topology& topo = topology::machine();
    const proc_bind_kind bind = cfg.proc_bind;
    // Bound workers cannot move; oversubscribed ones share CPUs whatever they do.
    repair_placement_ = bind == proc_bind_kind::none && !wait_.oversubscribed;
    threads_.reserve(static_cast<std::size_t>(size_ - 1));
    try {
        for (int w = 1; w < size_; ++w) {
            threads_.emplace_back([this, w, bind, &topo] {
                const int core = topo.core_for_worker(w, size_, bind);
                if (core >= 0) topo.bind_current_thread(core);
                else spread_over_allowed_cpus(topo);
                worker_main(w);
            });
        }
    } catch (...) {
        // The OS refused a thread: stop the ones already started, then report to the caller.
        stop_workers();
        throw;
    }
    // Worker 0 is whichever thread holds the team; it is bound only when binding is asked
    // for and the team is the process team (see aloe::team::global()).
}

worker_team::~worker_team() {
    if (usable()) {
        stop_workers();
        return;
    }
    std::lock_guard lock(process_team_mutex);
    std::vector<std::thread>& lost = threads_lost_to_fork();
    for (std::thread& t : threads_) lost.push_back(std::move(t));
}

bool worker_team::usable() const noexcept { return born_in_ == fork_generation(); }

void worker_team::stop_workers() noexcept {
    quit_ = true;
    fork_gen_.fetch_add(1, std::memory_order_seq_cst);
    wake_waiters(fork_gen_, fork_sleepers_);
    for (std::thread& t : threads_) t.join();
    threads_.clear();
}

bool worker_team::in_job() noexcept { return running_job; }

bool worker_team::try_acquire() noexcept {
    if (running_job) return false;
    if (!usable()) [[unlikely]]
        return refuse_after_fork(size_);
    bool expected = false;
    return held_.compare_exchange_strong(expected, true, std::memory_order_acquire, std::memory_order_relaxed);
}

void worker_team::release() noexcept { held_.store(false, std::memory_order_release); }

void worker_team::run(job_fn job, void* ctx) noexcept {
    job_ = job;
    ctx_ = ctx;
    pending_.store(static_cast<std::uint32_t>(size_ - 1), std::memory_order_relaxed);
    // Where the holder runs now (glibc reads it from rseq: a load, no syscall).
    if (repair_placement_) holder_cpu_.store(sched_getcpu(), std::memory_order_relaxed);
    // seq_cst: publishes job_, ctx_, pending_ and holder_cpu_ (release) and orders the
    // sleeper check.
    fork_gen_.fetch_add(1, std::memory_order_seq_cst);
    wake_waiters(fork_gen_, fork_sleepers_);
    {
        job_marker mark;
        job(ctx, 0);
    }
    // This thread called fork() in its share and is the child's only thread: the workers
    // that had not finished by then never will here.
    if (!usable() && pending_.load(std::memory_order_acquire) != 0) [[unlikely]]
        returned_after_fork(0);
    for (std::uint32_t left; (left = pending_.load(std::memory_order_acquire)) != 0;)
        wait_while_equal(pending_, left, join_sleepers_, wait_);
}

void worker_team::worker_main(int worker) {
    std::uint32_t seen = 0;
    for (;;) {
        wait_while_equal(fork_gen_, seen, fork_sleepers_, wait_);
        seen = fork_gen_.load(std::memory_order_acquire);
        if (quit_) return;
        if (repair_placement_) {
            const int here = sched_getcpu();
            if (here >= 0 && here == holder_cpu_.load(std::memory_order_relaxed)) [[unlikely]]
                step_off(here);
        }
        {
            job_marker mark;
            job_(ctx_, worker);
        }
        if (!usable()) [[unlikely]]
            returned_after_fork(worker);  // it called fork() in the job: no holder here
        // seq_cst: releases this worker's writes to the holder and orders the sleeper check.
        if (pending_.fetch_sub(1, std::memory_order_seq_cst) == 1) wake_waiters(pending_, join_sleepers_);
    }
}

void worker_team::returned_after_fork(int worker) const noexcept {
    report({report_level::fatal, report_category::runtime, "F013",
            "fork() was called inside a loop body and the child returned from it (worker " +
                std::to_string(worker) +
                "): the rest of the loop ran in the parent; a child forked in a loop body must "
                "exec or _exit before its body returns",
            ""});
    std::fflush(stderr);  // abort() flushes nothing; stdout is left alone (the parent prints its copy)
    std::abort();
}

void worker_team::step_off(int here) noexcept {
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
    cpu_set_t elsewhere = allowed;
    CPU_CLR(here, &elsewhere);
    if (CPU_COUNT(&elsewhere) == 0) return;  // nowhere else to go
    // Narrowing the mask migrates this thread now; restoring it leaves it where it landed.
    if (sched_setaffinity(0, sizeof elsewhere, &elsewhere) == 0) {
        sched_setaffinity(0, sizeof allowed, &allowed);
        static const counter_handle moves = register_counter(
            {.object = "threads", .name = "cpu-moves", .unit = counter_unit::count,
             .help = "unbound workers moved off their holder's CPU after a wake-up", .alias = "team.cpu_moves"});
        moves.add(1);
    }
}

int default_team_size() { return resolved_num_threads(current_config(), topology::machine().default_threads()); }

}  // namespace aloe::runtime

namespace aloe {

team::team(int threads) {
    if (threads < 1 || threads > runtime::max_num_threads)
        throw error("aloe::team: thread count " + std::to_string(threads) + " is outside [1, " +
                    std::to_string(runtime::max_num_threads) + "]");
    workers_ = std::make_unique<runtime::worker_team>(threads, runtime::current_config());
}

team::~team() = default;

int team::size() const noexcept { return workers_->size(); }

namespace {

// Makes the process team: on first use, and in a child of fork() whose team is the
// parent's (it has no workers here). The old one is kept, never destroyed (a reference
// taken before the fork stays valid; its loops run serially). Where no thread can be
// started in the child, the fresh team has one worker: the child's loops run serially.
[[gnu::noinline]] team& make_process_team() {
    // Armed before the lock: pthread_atfork waits for a fork() in progress, whose prepare
    // handler waits for this lock.
    runtime::arm_fork_handler();
    std::lock_guard lock(runtime::process_team_mutex);
    team* const old = runtime::process_team.load(std::memory_order_relaxed);
    if (old != nullptr && old->workers().usable()) return *old;  // another thread made it
    const runtime::config& cfg = runtime::current_config();
    if (old == nullptr) runtime::note_other_copies();
    team* fresh = nullptr;
    if (old == nullptr) {
        fresh = new team(runtime::default_team_size());
    } else {
        runtime::teams_lost_to_fork().push_back(old);
        try {
            fresh = new team(runtime::default_team_size());
        } catch (const std::exception& e) {
            runtime::report_once({runtime::report_level::warning, runtime::report_category::runtime, "W011",
                                  std::string("cannot start the process team's workers after fork(): ") + e.what(),
                                  "serial loops (a team of 1)"});
            fresh = new team(1);
        }
    }
    const int core = runtime::topology::machine().core_for_worker(0, fresh->size(), cfg.proc_bind);
    if (core >= 0) runtime::topology::machine().bind_current_thread(core);
    // release: the team is complete before another thread's acquire load in global() sees it.
    runtime::process_team.store(fresh, std::memory_order_release);
    return *fresh;
}

}  // namespace

team& team::global() {
    // Never destroyed: loops may run from other static destructors, and the statistics
    // written at exit read the team's sites. The OS reclaims the threads at exit.
    team* const t = runtime::process_team.load(std::memory_order_acquire);
    if (t != nullptr && t->workers().usable()) [[likely]]
        return *t;
    return make_process_team();
}

}  // namespace aloe

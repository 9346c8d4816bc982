#include "runtime/team.hpp"

#include "runtime/borrowed_cores.hpp"
#include "runtime/counters.hpp"
#include "runtime/cpu_mask.hpp"
#include "runtime/process_copies.hpp"
#include "runtime/report.hpp"
#include "runtime/topology.hpp"

#include <aloe/error.hpp>
#include <aloe/team.hpp>

#include <algorithm>
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

// The team whose job this thread runs now (nullptr: none). Saved and restored, so a
// worker that runs a nested loop's share is still inside its outer job afterwards.
thread_local const worker_team* running_team = nullptr;

struct job_marker {
    const worker_team* saved;
    explicit job_marker(const worker_team* t) noexcept : saved(running_team) { running_team = t; }
    ~job_marker() { running_team = saved; }
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
                                fork_rank::reports, fork_rank::task_memory};
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

worker_team::worker_team(int size, const config& cfg, int spare)
    : size_(size), spare_(std::clamp(spare, 0, size - 1)), born_in_(fork_generation()),
      wait_(wait_settings::from_config(cfg, size, topology::machine().cores())) {
    arm_fork_handler();
    const topology& topo = topology::machine();
    const proc_bind_kind bind = cfg.proc_bind;
    // Bound workers cannot move; oversubscribed ones share CPUs whatever they do.
    repair_placement_ = bind == proc_bind_kind::none && !wait_.oversubscribed;
    boxes_ = std::make_unique<mailbox[]>(static_cast<std::size_t>(size_));
    threads_.reserve(static_cast<std::size_t>(size_ - 1));
    try {
        for (int w = 1; w < size_; ++w) {
            threads_.emplace_back([this, w, bind, &topo] {
                // Spares are placed when they are given a borrowed core (place_spare).
                const int core = w < own_size() ? topo.core_for_worker(w, own_size(), bind) : -1;
                if (core >= 0) topo.bind_current_thread(core);
                else if (w < own_size()) spread_over_allowed_cpus(topo);
                set_counter_worker(w);  // its counts read as /threads{locality#0/worker-thread#w}/…
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
    quit_.store(true, std::memory_order_relaxed);
    for (std::size_t w = 1; w < threads_.size() + 1; ++w) {
        mailbox& box = boxes_[w];
        box.go.fetch_add(1, std::memory_order_seq_cst);  // publishes quit_
        wake_waiters(box.go, box.sleepers);
    }
    for (std::thread& t : threads_) t.join();
    threads_.clear();
}

bool worker_team::in_job() noexcept { return running_team != nullptr; }

worker_team::job_scope::job_scope(const worker_team& t) noexcept : saved_(running_team) { running_team = &t; }
worker_team::job_scope::~job_scope() { running_team = saved_; }

bool worker_team::in_job_of_this() const noexcept { return running_team == this; }

bool worker_team::try_acquire() noexcept {
    if (running_team != nullptr) return false;
    if (!usable()) [[unlikely]]
        return refuse_after_fork(size_);
    bool expected = false;
    return held_.compare_exchange_strong(expected, true, std::memory_order_acquire, std::memory_order_relaxed);
}

void worker_team::release() noexcept { held_.store(false, std::memory_order_release); }

void worker_team::deliver(int worker, job_fn job, void* ctx, int participant, join_point* join) noexcept {
    mailbox& box = boxes_[static_cast<std::size_t>(worker)];
    box.job = job;
    box.ctx = ctx;
    box.participant = participant;
    box.join = join;
    // seq_cst: publishes the assignment (release) and orders the sleeper check.
    box.go.fetch_add(1, std::memory_order_seq_cst);
    wake_waiters(box.go, box.sleepers);
}

void worker_team::wait_for(join_point& j) noexcept {
    for (std::uint32_t left; (left = j.pending.load(std::memory_order_acquire)) != 0;)
        wait_while_equal(j.pending, left, j.sleepers, wait_);
}

void worker_team::run(job_fn job, void* ctx, int k) noexcept {
    k = std::clamp(k, 1, size_);
    fork_join_.pending.store(static_cast<std::uint32_t>(k - 1), std::memory_order_relaxed);
    running_job_ = job;
    running_ctx_ = ctx;
    // Where the holder runs now (glibc reads it from rseq: a load, no syscall).
    if (repair_placement_) holder_cpu_.store(sched_getcpu(), std::memory_order_relaxed);
    // Workers 1..k-1 are idle here unless one is draining the work sources (tasks): the
    // fork waits for it to finish (no helper of an earlier job is left: each marks itself
    // idle before it reports to its join).
    for (int w = 1; w < k; ++w) {
        std::atomic<std::uint32_t>& state = boxes_[static_cast<std::size_t>(w)].state;
        std::uint32_t expected = idle;
        if (!state.compare_exchange_strong(expected, claimed_state, std::memory_order_acquire,
                                           std::memory_order_relaxed)) {
            // Busy with the work sources (tasks): ask them to hand the worker back.
            fork_waiting_.fetch_add(1, std::memory_order_seq_cst);
            const int n = source_count_.load(std::memory_order_acquire);
            for (int i = 0; i < n; ++i)
                if (const work_source& src = sources_[static_cast<std::size_t>(i)]; src.wake != nullptr)
                    src.wake(src.ctx);
            for (expected = idle; !state.compare_exchange_weak(expected, claimed_state, std::memory_order_acquire,
                                                               std::memory_order_relaxed);
                 expected = idle)
                sched_yield();
            fork_waiting_.fetch_sub(1, std::memory_order_relaxed);
        }
        deliver(w, job, ctx, w, &fork_join_);
    }
    {
        job_marker mark(this);
        job(ctx, 0);
    }
    // This thread called fork() in its share and is the child's only thread: the workers
    // that had not finished by then never will here.
    if (!usable() && fork_join_.pending.load(std::memory_order_acquire) != 0) [[unlikely]]
        returned_after_fork(0);
    wait_for(fork_join_);
    running_job_ = nullptr;
}

int worker_team::join_running(int first, int last) noexcept {
    if (running_job_ == nullptr || first < 1) return 0;
    int joined = 0;
    for (int w = first; w < std::min(last, size_); ++w) {
        std::uint32_t expected = idle;
        if (!boxes_[static_cast<std::size_t>(w)].state.compare_exchange_strong(expected, claimed_state,
                                                                              std::memory_order_acquire))
            break;
        // Counted before it can report: the caller is participant 0, not yet waiting.
        fork_join_.pending.fetch_add(1, std::memory_order_relaxed);
        deliver(w, running_job_, running_ctx_, w, &fork_join_);
        ++joined;
    }
    return joined;
}

int worker_team::claim_idle(int most, claimed& out) noexcept {
    out.workers.clear();
    if (most <= 0 || !usable()) return 0;
    // Box 0 has no worker (participant 0 is the holder).
    for (int w = 1; w < own_size() && static_cast<int>(out.workers.size()) < most; ++w) {
        std::uint32_t expected = idle;
        if (boxes_[static_cast<std::size_t>(w)].state.compare_exchange_strong(
                expected, claimed_state, std::memory_order_acquire, std::memory_order_relaxed)) {
            try {
                out.workers.push_back(w);
            } catch (...) {
                boxes_[static_cast<std::size_t>(w)].state.store(idle, std::memory_order_release);
                break;
            }
        }
    }
    return static_cast<int>(out.workers.size());
}

void worker_team::unclaim(claimed& out, std::size_t keep) noexcept {
    for (std::size_t i = keep; i < out.workers.size(); ++i)
        boxes_[static_cast<std::size_t>(out.workers[i])].state.store(idle, std::memory_order_release);
    if (keep < out.workers.size()) out.workers.resize(keep);
}

void worker_team::run_claimed(job_fn job, void* ctx, const claimed& out) noexcept {
    join_point join;
    join.may_sleep = false;
    join.pending.store(static_cast<std::uint32_t>(out.workers.size()), std::memory_order_relaxed);
    int participant = 1;
    for (const int w : out.workers) deliver(w, job, ctx, participant++, &join);
    {
        job_marker mark(this);
        job(ctx, 0);
    }
    // Spin, then yield (see join_point::may_sleep): the helpers are busy with this loop only.
    for (int spins = 0; join.pending.load(std::memory_order_acquire) != 0; ++spins) {
        if (spins < 64) cpu_relax();
        else sched_yield();
    }
}

bool worker_team::add_work_source(const work_source& source) noexcept {
    static std::mutex adding;
    std::lock_guard lock(adding);
    const int n = source_count_.load(std::memory_order_relaxed);
    if (n >= max_work_sources || source.poll == nullptr) return false;
    sources_[static_cast<std::size_t>(n)] = source;
    source_count_.store(n + 1, std::memory_order_release);  // publishes the entry
    return true;
}

bool worker_team::poll_sources(int worker) noexcept {
    const int n = source_count_.load(std::memory_order_acquire);
    for (int i = 0; i < n; ++i) {
        const work_source& src = sources_[static_cast<std::size_t>(i)];
        if (src.poll(src.ctx, worker)) return true;
    }
    return false;
}

void worker_team::drain_sources(void* team, int worker) noexcept {
    auto& self = *static_cast<worker_team*>(team);
    while (self.poll_sources(worker)) {}
}

int worker_team::notify_work(int most) noexcept {
    if (source_count_.load(std::memory_order_acquire) == 0) return 0;
    claimed got;
    const int n = claim_idle(most, got);
    // The participant number is the worker's own: a source polls on behalf of that worker.
    for (const int w : got.workers) deliver(w, &drain_sources, this, w, nullptr);
    return n;
}

void worker_team::place_spare(int worker, std::uint32_t& placed, const cpu_set_t& home) noexcept {
    const std::uint32_t now = borrowed_placement_generation();
    if (now == placed) return;
    placed = now;
    pin_to_borrowed_cpu(worker - own_size(), home);  // no CPU named: where the process may run
}

void worker_team::worker_main(int worker) {
    mailbox& box = boxes_[static_cast<std::size_t>(worker)];
    std::uint32_t seen = 0;
    const bool spare = worker >= own_size();
    std::uint32_t placed = 0;
    cpu_set_t home;  // a spare's mask as started (the process's): where it goes back to
    CPU_ZERO(&home);
    if (spare) sched_getaffinity(0, sizeof home, &home);
    for (;;) {
        if (spare && wait_.kind == wait_policy_kind::hybrid) [[unlikely]]
            wait_awake_on_lent_cpu(box.go, seen, placed, wait_.yield_ticks);
        wait_while_equal(box.go, seen, box.sleepers, wait_);
        seen = box.go.load(std::memory_order_acquire);
        if (quit_.load(std::memory_order_relaxed)) return;
        if (spare) [[unlikely]] place_spare(worker, placed, home);
        if (repair_placement_) {
            const int here = sched_getcpu();
            if (here >= 0 && here == holder_cpu_.load(std::memory_order_relaxed)) [[unlikely]]
                step_off(here);
        }
        join_point* const join = box.join;
        {
            job_marker mark(this);
            box.job(box.ctx, box.participant);
        }
        if (!usable()) [[unlikely]]
            returned_after_fork(worker);  // it called fork() in the job: no holder here
        // Idle before reporting: whoever waits on the join may claim this worker at once.
        box.state.store(idle, std::memory_order_release);
        // seq_cst: releases this worker's writes to the joiner and orders the sleeper check.
        if (join != nullptr) {
            const bool may_sleep = join->may_sleep;  // read before: a nested join may be gone after
            if (join->pending.fetch_sub(1, std::memory_order_seq_cst) == 1 && may_sleep)
                wake_waiters(join->pending, join->sleepers);
        }
        // Work an upper layer added while this worker was busy (tasks): before waiting.
        if (!spare && source_count_.load(std::memory_order_relaxed) != 0) {
            std::uint32_t expected = idle;
            if (box.state.compare_exchange_strong(expected, claimed_state, std::memory_order_acquire)) {
                {
                    job_marker mark(this);
                    drain_sources(this, worker);
                }
                box.state.store(idle, std::memory_order_release);
            }
        }
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

team::team(int threads) : team(threads, 0) {}

team::team(int threads, int spare) {
    if (threads < 1 || threads > runtime::max_num_threads)
        throw error("aloe::team: thread count " + std::to_string(threads) + " is outside [1, " +
                    std::to_string(runtime::max_num_threads) + "]");
    workers_ = std::make_unique<runtime::worker_team>(threads + spare, runtime::current_config(), spare);
}

team::~team() = default;

int team::size() const noexcept { return workers_->own_size(); }

// The process team: the program's own count, plus spares for borrowed cores where ranks
// of its MPI job may lend it some (runtime/borrowed_cores.hpp).
team* detail::make_process_team_object() {
    const int own = runtime::default_team_size();
    const int spare = std::clamp(runtime::default_spare_workers(own), 0, runtime::max_num_threads - own);
    return new team(own, spare);
}

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
        fresh = detail::make_process_team_object();
    } else {
        runtime::teams_lost_to_fork().push_back(old);
        try {
            fresh = detail::make_process_team_object();
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

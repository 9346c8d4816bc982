#include "runtime/team.hpp"

#include "runtime/counters.hpp"
#include "runtime/report.hpp"
#include "runtime/topology.hpp"

#include <aloe/error.hpp>
#include <aloe/team.hpp>

#include <string>

#include <sched.h>

namespace aloe::runtime {

namespace {

thread_local bool running_job = false;

struct job_marker {
    job_marker() noexcept { running_job = true; }
    ~job_marker() { running_job = false; }
};

}  // namespace

worker_team::worker_team(int size, const config& cfg)
    : size_(size), wait_(wait_settings::from_config(cfg, size, topology::machine().cores())) {
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

worker_team::~worker_team() { stop_workers(); }

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
        // seq_cst: releases this worker's writes to the holder and orders the sleeper check.
        if (pending_.fetch_sub(1, std::memory_order_seq_cst) == 1) wake_waiters(pending_, join_sleepers_);
    }
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
        static counter& moves = register_counter("team.cpu_moves");
        moves.add(1);
    }
}

int default_team_size() { return resolved_num_threads(current_config(), topology::machine().cores()); }

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

team& team::global() {
    // Never destroyed: loops may run from other static destructors, and the statistics
    // written at exit read the team's sites. The OS reclaims the threads at exit.
    static team* const process_team = [] {
        const runtime::config& cfg = runtime::current_config();
        auto* t = new team(runtime::default_team_size());
        const int core = runtime::topology::machine().core_for_worker(0, t->size(), cfg.proc_bind);
        if (core >= 0) runtime::topology::machine().bind_current_thread(core);
        return t;
    }();
    return *process_team;
}

}  // namespace aloe

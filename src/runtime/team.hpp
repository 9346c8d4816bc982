// The worker team: threads created once and reused by every loop.
//
// Protocol (fork / join), one job at a time:
//   holder:  try_acquire() → run(job, ctx) as often as it likes → release().
//   run:     publish job_/ctx_, set pending_ = size-1, bump fork_gen_ (seq_cst), wake
//            sleepers; run the job as worker 0; wait until pending_ == 0.
//   worker:  wait until fork_gen_ changes; run the job; decrement pending_ (seq_cst) and
//            wake the holder when it was the last one.
// Shared lines: fork_gen_ (read by all waiting workers, written once per job), pending_
// (one decrement per worker per job), the job line (written by the holder before the bump).
// Waiting uses wait_policy.hpp (spin, yield, futex) with the team's settings.
// A thread inside a job (a worker, or the holder running worker 0) is marked so that a
// loop started from inside a body runs serially instead of deadlocking.
//
// Placement repair (unbound teams with no more threads than cores): Linux tends to wake a
// thread on the waker's CPU, so after a pause a worker and the holder often end up sharing
// one CPU, loop after loop, while the other CPU idles (seen on the 2-core VM in about 70% of
// loops after a pause; bench/results/overhead-20261121-spin100). The holder records its CPU
// at each fork (glibc reads it from its rseq area: a load, no syscall); a worker that starts
// a job on that CPU steps off it by excluding the CPU from its affinity for one call and
// restoring the original mask (counter `team.cpu_moves`). Checking only after a futex
// wake-up was tried and left pairs that met mid-batch together (balanced loops 1.3x
// libgomp). Workers sharing a CPU with each other are left to the kernel.
//
// After fork() (README "After fork()"): the child keeps only the thread that called fork(),
// so a team made before it has no workers there. This file's pthread_atfork handler (one
// per copy of aloe in the process: libaloe and libaloe-gomp.so each arm their own, over
// their own state) takes the process-wide locks a child's first loop needs, in fork_rank
// order, and in the child bumps fork_generation(): a team made in an older generation is
// not usable (its loops run serially, W010) and team::global() builds a fresh process team.
#pragma once

#include "runtime/arena.hpp"
#include "runtime/wait_policy.hpp"

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace aloe::runtime {

class worker_team {
public:
    using job_fn = void (*)(void* ctx, int worker) noexcept;

    /// Starts size-1 threads, bound per `cfg.proc_bind`. `size` >= 1.
    worker_team(int size, const config& cfg);
    ~worker_team();
    worker_team(const worker_team&) = delete;
    worker_team& operator=(const worker_team&) = delete;

    int size() const noexcept { return size_; }

    /// Takes the team for the calling thread; false when another holder has it or the caller
    /// is already running inside a job (of any team).
    bool try_acquire() noexcept;
    void release() noexcept;

    /// Runs job(ctx, w) for every worker w in [0, size) and returns when all are done.
    /// Worker 0 is the calling thread. Requires the team to be held by the caller.
    void run(job_fn job, void* ctx) noexcept;

    /// Scratch memory for the current holder's loop state (reset by the holder).
    arena& scratch() noexcept { return scratch_; }

    /// True on a thread that is running a job right now.
    static bool in_job() noexcept;

    const wait_settings& waiting() const noexcept { return wait_; }

    /// False in a child forked after this team was made: its workers are not there.
    bool usable() const noexcept;

private:
    void worker_main(int worker);
    [[noreturn, gnu::cold]] void returned_after_fork(int worker) const noexcept;
    void step_off(int cpu) noexcept;  // move this thread off `cpu` (placement repair)
    void stop_workers() noexcept;

    const int size_;
    const std::uint32_t born_in_;  // fork_generation() when the team was made
    wait_settings wait_;

    alignas(cache_line) std::atomic<std::uint32_t> fork_gen_{0};
    std::atomic<std::uint32_t> fork_sleepers_{0};

    alignas(cache_line) std::atomic<std::uint32_t> pending_{0};
    std::atomic<std::uint32_t> join_sleepers_{0};

    alignas(cache_line) job_fn job_ = nullptr;  // written by the holder before the fork bump
    void* ctx_ = nullptr;
    bool quit_ = false;

    alignas(cache_line) std::atomic<int> holder_cpu_{-1};  // CPU of the holder at a fork that woke sleepers
    bool repair_placement_ = false;                         // see "Placement repair" above

    alignas(cache_line) std::atomic<bool> held_{false};
    arena scratch_;
    std::vector<std::thread> threads_;
};

/// The number of workers the process team gets: ALOE_NUM_THREADS, else OMP_NUM_THREADS,
/// else topology::default_threads(): the allowed cores (affinity mask, cgroup cpuset), fewer
/// under a cgroup CPU quota.
int default_team_size();

/// How many fork()s separate this process from the one this copy of aloe started in: 0
/// there, one more in each child (the atfork child handler adds it). Relaxed load.
std::uint32_t fork_generation() noexcept;

/// The modules that take locks around fork(), in the order they take them. It is the order
/// the code nests those locks in: the process team's creation (built in, first), the site
/// registry and then its sites, then the counter registry and the report module, which are
/// always taken innermost. Prepare handlers run in ascending rank, parent and child
/// handlers in descending rank.
/// `omp_sites` (the GOMP interposer's site tables, region pool and trace buffers) comes
/// first: creating an interposer site pins a loop site while its table's mutex is held.
enum class fork_rank : int { omp_sites = 5, loop_sites = 10, counters = 20, reports = 30 };

/// One module's handlers around fork(): `prepare` takes its locks in the parent just before
/// fork(); `parent` and `child` release them just after it, in each process (`child` may
/// also reset state: only the forking thread is left). They run with the lower ranks' locks
/// held, so they must not take those; they must not allocate, report or throw.
struct fork_hooks {
    void (*prepare)() noexcept;
    void (*parent)() noexcept;
    void (*child)() noexcept;
};

/// Registers `hooks` at `rank` (once per module, when its state is created; a second call
/// for a rank is ignored) and arms the atfork handler. Thread-safe.
void register_fork_hooks(fork_rank rank, const fork_hooks& hooks) noexcept;

}  // namespace aloe::runtime

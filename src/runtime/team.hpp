// The worker team: threads created once and reused by every loop.
//
// One worker loop, with its work sources in order (DESIGN.md, "Team"):
//   1. its mailbox: a fork/join job of the team's holder, or a share of a nested loop that
//      a thread inside a job handed it;
//   2. the work sources an upper layer registered (the task layer's own deque, then
//      stealing), polled in registration order until they are all empty;
//   3. waiting on its mailbox (wait_policy.hpp: spin, yield, futex).
// Every worker has its own mailbox line: `state` (idle or claimed), the assignment (job,
// context, participant number, the join to report to) and `go`, which the assigner bumps
// (seq_cst) after writing the rest and the worker waits on. Nothing else is shared while a
// worker waits, so an assigner wakes exactly the workers it claimed.
//
// Fork / join (the holder):  try_acquire() → run(job, ctx, k) as often as it likes →
// release(). run() claims workers 1..k-1 (they are idle: the previous join saw every
// participant finish, and a helper marks itself idle before it reports), sets the join's
// pending count to k-1, bumps their mailboxes, runs participant 0 itself and waits for the
// count to reach 0. Workers k..p-1 are not woken: a loop can run on k of the p workers.
//
// Nested loops (a thread inside a job of this team starts another): claim_idle() takes the
// workers that are idle at that moment (a CAS from idle to claimed on each mailbox), the
// caller sizes its loop for 1 + the number it got, and run_claimed() runs it on them with
// a join of its own. While every worker is busy with the outer job, none is idle and the
// nested loop runs on its caller alone; workers that finished their outer share, workers
// outside a k-of-p loop and workers waiting on tasks help. A worker that turns idle after
// the claim does not join (the loop's shares were cut already). A thread inside a job of
// another team still runs its loops on this team serially (neither team may wait on the
// other).
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
// per process: libaloe-gomp.so links libaloe.so) takes the process-wide locks a child's
// first loop needs, in fork_rank order, and in the child bumps fork_generation(): a team
// made in an older generation is not usable (its loops run serially, W010) and
// team::global() builds a fresh process team.
#pragma once

#include "runtime/arena.hpp"
#include "runtime/wait_policy.hpp"

#include <sched.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <thread>
#include <vector>

namespace aloe::runtime {

/// A source of work an upper layer plugs into the worker loop (the task layer's deques):
/// `poll` runs one piece of work for `worker` and returns true, or returns false when it
/// has none. Called by idle workers after their mailbox, in registration order.
struct work_source {
    bool (*poll)(void* ctx, int worker) noexcept = nullptr;
    void* ctx = nullptr;
    /// Called (if set) when a fork waits for workers busy in `poll`: wake any that sleep
    /// there so they see wants_workers() and return.
    void (*wake)(void* ctx) noexcept = nullptr;
};

class worker_team {
public:
    using job_fn = void (*)(void* ctx, int participant) noexcept;

    /// The most work sources a team takes (the task layer needs two: own deque, steal).
    static constexpr int max_work_sources = 4;

    /// Starts size-1 threads, bound per `cfg.proc_bind`. `size` >= 1. The last `spare` of
    /// them (0 <= spare < size) are kept for cores borrowed from other ranks
    /// (borrowed_cores.hpp): unbound, woken only by a fork or a join that names them,
    /// never for tasks or nested loops; each moves to its borrowed CPU when it starts a job.
    worker_team(int size, const config& cfg, int spare = 0);
    ~worker_team();
    worker_team(const worker_team&) = delete;
    worker_team& operator=(const worker_team&) = delete;

    /// Workers and holder, spares included (run() takes up to this many participants).
    int size() const noexcept { return size_; }
    /// The program's own participants: size() less the spares.
    int own_size() const noexcept { return size_ - spare_; }
    int spare() const noexcept { return spare_; }

    /// Takes the team for the calling thread; false when another holder has it, when the
    /// caller is running inside a job of any team (a loop there is nested: claim_idle), or
    /// in a child of fork() made after the team.
    bool try_acquire() noexcept;
    void release() noexcept;

    /// Runs job(ctx, i) for every participant i in [0, k) and returns when all are done:
    /// participant 0 is the calling thread, i >= 1 is worker i. Workers k..size-1 are not
    /// woken. Requires the team to be held by the caller; 1 <= k <= size.
    void run(job_fn job, void* ctx, int k) noexcept;
    void run(job_fn job, void* ctx) noexcept { run(job, ctx, size_); }

    /// From inside the job that run() is running, on its caller (participant 0): adds
    /// participants [first, last) to it (spare workers for borrowed cores, joining a running
    /// loop), each running the same job with its own number; run() waits for them too.
    /// Returns how many joined (a worker that is not idle is skipped, and so are the ones
    /// after it: participant numbers stay contiguous).
    int join_running(int first, int last) noexcept;

    /// Workers claimed for a nested loop (below).
    struct claimed {
        std::vector<int> workers;
    };

    /// From inside a job of this team: claims up to `most` idle workers for a nested loop
    /// and returns how many it got (0 when every worker is busy). Every claimed worker must
    /// then be given its share with run_claimed().
    int claim_idle(int most, claimed& out) noexcept;

    /// Gives back the claimed workers after the first `keep` (a loop planned on fewer).
    void unclaim(claimed& out, std::size_t keep) noexcept;

    /// Runs job(ctx, i) for i in [0, 1 + out.workers.size()): 0 on the calling thread, i on
    /// claimed worker i-1; returns when all are done.
    void run_claimed(job_fn job, void* ctx, const claimed& out) noexcept;

    /// Adds a work source that idle workers poll (an upper layer, once); false when full.
    bool add_work_source(const work_source& source) noexcept;

    /// Wakes up to `most` idle workers to poll the work sources (after work was added).
    /// Returns how many it woke.
    int notify_work(int most) noexcept;

    /// True while a fork (run()) waits for workers that are busy with the work sources: a
    /// source should hand its worker back soon (after its current piece of work). Relaxed.
    bool wants_workers() const noexcept { return fork_waiting_.load(std::memory_order_relaxed) != 0; }

    /// Marks the calling thread as running a job of this team (what a worker's own jobs do)
    /// for the scope: a loop it starts then claims idle workers instead of taking the team.
    /// For threads that run work of the sources outside a job (a task waiter).
    class job_scope {
    public:
        explicit job_scope(const worker_team& t) noexcept;
        ~job_scope();
        job_scope(const job_scope&) = delete;
        job_scope& operator=(const job_scope&) = delete;

    private:
        const worker_team* saved_;
    };

    /// Scratch memory for the current holder's loop state (reset by the holder).
    arena& scratch() noexcept { return scratch_; }

    /// True on a thread that is running a job right now (of any team).
    static bool in_job() noexcept;
    /// True on a thread that is running a job of this team right now.
    bool in_job_of_this() const noexcept;

    const wait_settings& waiting() const noexcept { return wait_; }

    /// False in a child forked after this team was made: its workers are not there.
    bool usable() const noexcept;

private:
    struct join_point {
        alignas(cache_line) std::atomic<std::uint32_t> pending{0};
        std::atomic<std::uint32_t> sleepers{0};
        /// False for a nested loop's join, on its caller's stack: the joiner only spins and
        /// yields, so a worker touches nothing of it after its decrement (the frame may be
        /// gone by then). The team's own fork join lives as long as the team and may sleep.
        bool may_sleep = true;
    };
    enum : std::uint32_t { idle = 0, claimed_state = 1 };
    struct alignas(cache_line) mailbox {
        std::atomic<std::uint32_t> go{0};
        std::atomic<std::uint32_t> sleepers{0};
        std::atomic<std::uint32_t> state{idle};
        int participant = 0;
        job_fn job = nullptr;  // written by the assigner before the go bump
        void* ctx = nullptr;
        join_point* join = nullptr;  // nullptr: poll the work sources, report to no one
    };

    void worker_main(int worker);
    void deliver(int worker, job_fn job, void* ctx, int participant, join_point* join) noexcept;
    void wait_for(join_point& j) noexcept;
    bool poll_sources(int worker) noexcept;
    static void drain_sources(void* team, int worker) noexcept;
    [[noreturn, gnu::cold]] void returned_after_fork(int worker) const noexcept;
    void step_off(int cpu) noexcept;  // move this thread off `cpu` (placement repair)
    void stop_workers() noexcept;

    void place_spare(int worker, std::uint32_t& placed, const cpu_set_t& home) noexcept;  // onto its borrowed CPU

    const int size_;
    const int spare_;
    const std::uint32_t born_in_;  // fork_generation() when the team was made
    wait_settings wait_;

    std::unique_ptr<mailbox[]> boxes_;  // [size_]; box 0 is unused (participant 0 is the holder)
    join_point fork_join_;
    job_fn running_job_ = nullptr;  // run()'s job and context while it runs (join_running)
    void* running_ctx_ = nullptr;
    std::atomic<bool> quit_{false};

    std::array<work_source, max_work_sources> sources_{};
    std::atomic<int> fork_waiting_{0};  // forks waiting for a worker busy with the sources
    std::atomic<int> source_count_{0};

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
/// `task_memory` (task/'s depot of blocks) comes last: its lock is held around a vector's
/// push or pop and nothing else.
enum class fork_rank : int { omp_sites = 5, loop_sites = 10, counters = 20, reports = 30, task_memory = 40 };

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

#include "task/task_pool.hpp"

#include "runtime/config.hpp"
#include "runtime/futex.hpp"
#include "runtime/report.hpp"
#include "runtime/thread_share.hpp"
#include "runtime/topology.hpp"

#include <aloe/team.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <exception>
#include <string>

namespace aloe::task {

namespace {

// Below this much stack left, a waiter stops running other tasks (see task_pool.hpp).
constexpr std::size_t stack_reserve = 128 * 1024;
// Relief threads running at once (task_pool.hpp), each with a stack of its own size, not
// the process's `ulimit -s` (under `ulimit -s 1024` a chain of 300,000 nested waits filled
// 64 default stacks and hung): 64 stacks of 64 MiB (address space; only the pages touched
// are memory) carry a chain of about 8 million nested waits.
constexpr int max_relief_threads = 64;
constexpr std::size_t relief_stack_bytes = std::size_t{64} << 20;
// A spawn onto a deque that already holds this many tasks runs a task at once, on the
// spawner's stack (the deque's thieves have plenty), as libomp does past its 256-entry deque
// and libgomp past 64 queued tasks per thread. A flood from one thread then costs a call per
// task, not a queued task each, and holds at most this many at once. Unlike theirs, the task
// run is the oldest queued one, the new one queued in its place (unless thieves are taking
// from the top: spawn()): a thread that floods runs queued tasks only when it waits, so
// running the newest left the first 256 queued until then, and in a dataflow graph built by
// one thread every node downstream of them pending: the whole graph alive in memory
// (taskflow_ports graph_traversal, 4 million nodes: 13.8 -> 4.3 s on one thread, 6.0 -> 2.5 s
// on two; bench/results/taskflow-ports-20261127-fifo).
constexpr std::int64_t inline_after = 256;
// A thief that finds a deque holding more than this many takes up to this many at once.
constexpr int steal_batch = 8;

std::atomic<task_pool*> process_pool{nullptr};
std::mutex process_pool_mutex;

std::uintptr_t stack_low_end() noexcept {
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) != 0) return 0;
    void* base = nullptr;
    std::size_t size = 0;
    const int got = pthread_attr_getstack(&attr, &base, &size);
    pthread_attr_destroy(&attr);
    return got == 0 ? reinterpret_cast<std::uintptr_t>(base) : 0;
}

}  // namespace

// What the scheduler keeps per thread (any thread that spawns, runs or waits).
struct task_pool::thread_state {
    task_pool* pool = nullptr;  // the pool `slot` belongs to
    int slot = -1;              // -1: none (spawns go to the shared queue)
    bool claimed_slot0 = false;
    int loop_depth = 0;          // nesting of scheduling loops (a waiter inside a task)
    int task_depth = 0;          // tasks running on this thread's stack
    runtime::ticks loop_mark = 0;   // overall time counted up to here
    runtime::ticks phase_start = 0; // the running task's current phase began here
    unsigned spawn_count = 0;
    std::uint64_t rng = 0x9e3779b97f4a7c15ULL;
    std::uintptr_t stack_floor = 0;  // lowest usable stack address + reserve; 0: unknown

    ~thread_state() {
        if (claimed_slot0 && pool != nullptr && pool == process_pool.load(std::memory_order_acquire))
            pool->slots_[0].owned.store(false, std::memory_order_release);
    }
};

task_pool::thread_state& task_pool::this_thread() noexcept {
    static thread_local thread_state ts;
    return ts;
}

task_pool::task_pool(runtime::worker_team& team)
    : team_(team), slot_count_(team.size()), slots_(new slot[static_cast<std::size_t>(team.size())]),
      limit_(team.size()), user_limit_(team.size()), node_share_(team.size()), counters_(counters::registered()), ns_scale_(runtime::ns_scale()) {
    const runtime::wait_settings& ws = team.waiting();
    const bool passive = ws.kind == runtime::wait_policy_kind::passive;
    spin_ticks_ = passive ? 0 : ws.spin_ticks;
    grace_ticks_ = passive ? 0 : static_cast<runtime::ticks>(50e-6 * runtime::ticks_per_second());
    yield_ticks_ = passive ? 0 : ws.yield_ticks;
    plan_victims();
    team_.add_work_source({&poll, this, &wake_for_fork});
}

task_pool::~task_pool() = default;  // the process pool is never destroyed (as its team)

void task_pool::plan_victims() {
    const runtime::config& cfg = runtime::current_config();
    const runtime::topology& topo = runtime::topology::machine();
    for (int s = 0; s < slot_count_; ++s)
        slots_[s].core = topo.core_for_worker(s, slot_count_, cfg.proc_bind);
    for (int s = 0; s < slot_count_; ++s) {
        slot& me = slots_[s];
        std::vector<std::pair<int, int>> by_distance;  // (distance, slot)
        for (int v = 0; v < slot_count_; ++v) {
            if (v == s) continue;
            const int d = me.core < 0 || slots_[v].core < 0 ? 0 : topo.distance(me.core, slots_[v].core);
            by_distance.emplace_back(d, v);
        }
        std::stable_sort(by_distance.begin(), by_distance.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        for (std::size_t i = 0; i < by_distance.size(); ++i) {
            me.victims.push_back(by_distance[i].second);
            if (i + 1 == by_distance.size() || by_distance[i + 1].first != by_distance[i].first)
                me.class_ends.push_back(static_cast<int>(i + 1));
        }
    }
}

task_pool& task_pool::process() {
    runtime::worker_team& team = aloe::team::global().workers();
    task_pool* p = process_pool.load(std::memory_order_acquire);
    if (p != nullptr && &p->team_ == &team) [[likely]]
        return *p;
    std::lock_guard lock(process_pool_mutex);
    p = process_pool.load(std::memory_order_relaxed);
    if (p == nullptr || &p->team_ != &team) {
        // A new process team (first use, or the first after fork()): a new pool; the old one
        // is left with its team (a child of fork() has none of its threads).
        task_pool* parent = p;
        p = new task_pool(team);
        if (parent != nullptr) p->take_queued_after_fork(*parent);
        process_pool.store(p, std::memory_order_release);
        // Once per process image (a fork child inherits it and finds its own pool).
        if (parent == nullptr) std::atexit(&stop_at_exit);
    }
    return *p;
}

// Registered after the team and the objects it reads were made, so it runs before their
// destructors (and those of every static made before the first task) run: without it the
// workers went on starting queued tasks while the program's statics were destroyed (a task
// of a dropped future read a freed global). A task already running goes on, as any thread's
// code does at exit; a thread waiting for a result still runs the tasks it needs.
// A child of fork() that never used tasks has its parent's pool: it says nothing of the
// parent's queue (a fork-and-exit helper process would warn for tasks that are not its).
void task_pool::stop_at_exit() noexcept {
    task_pool* p = process_pool.load(std::memory_order_acquire);
    if (p == nullptr) return;
    // No slot may run tasks now: the workers check the limit before each task they take.
    p->exiting_.store(true, std::memory_order_seq_cst);
    p->limit_.store(0, std::memory_order_seq_cst);
    if (p->made_by_ == ::getpid() && p->queued())
        runtime::report_once({runtime::report_level::warning, runtime::report_category::runtime, "W020",
                              "tasks were still queued when the process began to exit (a future dropped, or a "
                              "task_group not waited for, before main returned or exit()): the workers start "
                              "no more; a thread that waits for them (a static task_group's destructor) runs "
                              "them itself, the others are not run",
                              "wait for futures and groups before exiting"});
}

// A child of fork() (the only reason the process team is made again): the tasks the parent's
// pool held queued at the fork are this process's too (its groups and futures count them),
// but none of that pool's threads is here to run them, so they move to this pool's shared
// queue, each deque's oldest first. Only this thread exists, so taking from the old deques
// races no one. Not here: a task another thread was running at the fork, and the old shared
// queue when a thread held its lock at the fork (docs/tasks.md, "after fork()").
void task_pool::take_queued_after_fork(task_pool& parent) noexcept {
    try {
        for (int s = 0; s < parent.slot_count_; ++s) {
            task_node* t = nullptr;
            for (;;) {
                const auto r = parent.slots_[s].deque.steal(t);
                if (r == work_deque<task_node*>::steal_result::empty) break;
                if (r == work_deque<task_node*>::steal_result::taken) shared_.push_back(t);
            }
        }
        if (parent.shared_mutex_.try_lock()) {
            std::lock_guard lock(parent.shared_mutex_, std::adopt_lock);
            shared_.insert(shared_.end(), parent.shared_.begin(), parent.shared_.end());
            parent.shared_.clear();
        }
    } catch (...) {  // no memory for the queue: the tasks not moved stay behind, as running ones
    }
    shared_size_.store(shared_.size(), std::memory_order_release);
    const int limit = parent.user_limit_.load(std::memory_order_relaxed);
    if (limit < parent.slot_count_) set_concurrency(limit);  // the program's limit holds in the child
}

void task_pool::adopt(thread_state& ts) noexcept {
    ts = thread_state{};
    ts.pool = this;
    ts.rng ^= reinterpret_cast<std::uintptr_t>(&ts) * 0x2545f4914f6cdd1dULL;
    if (const std::uintptr_t low = stack_low_end(); low != 0) ts.stack_floor = low + stack_reserve;
}

int task_pool::slot_of_this_thread(thread_state& ts) noexcept {
    if (ts.pool == this) [[likely]] {
        // Slotless: slot 0's owner may have exited since (a relaxed look first, no CAS per spawn).
        if (ts.slot < 0 && !slots_[0].owned.load(std::memory_order_relaxed)) claim_slot0(ts);
        return ts.slot;
    }
    adopt(ts);
    if (team_.in_job_of_this() && runtime::counter_worker() > 0 && runtime::counter_worker() < slot_count_) {
        ts.slot = runtime::counter_worker();  // a worker of this team, in a loop job
        return ts.slot;
    }
    claim_slot0(ts);
    return ts.slot;
}

void task_pool::claim_slot0(thread_state& ts) noexcept {
    // acquire: the deque as its last owner left it (its destructor's release store).
    bool expected = false;
    if (slots_[0].owned.compare_exchange_strong(expected, true, std::memory_order_acquire)) {
        ts.slot = 0;
        ts.claimed_slot0 = true;
    }
}

// --- spawning --------------------------------------------------------------------------------

void task_pool::spawn(task_node* t) noexcept {
    thread_state& ts = this_thread();
    const int s = slot_of_this_thread(ts);
    if (++ts.spawn_count % wait_sample_period == 0 && counting_.load(std::memory_order_relaxed))
        t->queued_at = runtime::now_ticks();
    if (s >= 0 && stack_has_room(ts)) {
        // Past the bound the oldest queued task runs now and the new one takes its place
        // (first in, first out), unless thieves took from the top since the last look: they
        // run the oldest already, and racing them for the top's line at every spawn would
        // slow them and the spawner alike; the new task runs then. Below the bound, or when a
        // thief took the oldest just before the owner's CAS (room now): queue as usual.
        work_deque<task_node*>& own = slots_[s].deque;
        task_node* oldest = nullptr;
        switch (own.take_oldest_past(inline_after, oldest)) {
        case work_deque<task_node*>::take_result::stolen: run_inline(ts, t); return;
        case work_deque<task_node*>::take_result::taken:
            own.push(t);  // never grows (one was just taken), so never throws
            run_inline(ts, oldest);
            return;
        case work_deque<task_node*>::take_result::none: break;
        }
    }
    bool queued = false;
    if (s >= 0) {
        try {
            slots_[s].deque.push(t);
            queued = true;
        } catch (...) {  // no memory to grow the deque: the shared queue takes it
        }
    }
    if (!queued) {
        {
            std::lock_guard lock(shared_mutex_);
            try {
                shared_.push_back(t);
                shared_size_.fetch_add(1, std::memory_order_release);
                queued = true;
            } catch (...) {
            }
        }
        if (!queued) {  // no memory even there: run it now rather than lose it
            t->execute(t);
            return;
        }
    }
    // Dekker with a sleeper's re-check (sleep_a_while, help_until) and a leaving worker's
    // (worker_session).
    std::atomic_thread_fence(std::memory_order_seq_cst);
    // A sleeper that would run the task is woken: a worker, or a thread waiting for a result
    // with stack to run tasks (the one spawning may be such a waiter itself, inside a task: so
    // counting the waiters, not the sleeping ones, left the other core asleep 20 ms while a
    // task's spawns waited). Asleep means past ALOE_SPIN_US of finding nothing, so this costs
    // a syscall only for spawns that far apart.
    if (const std::uint32_t runners = runner_sleepers_.load(std::memory_order_relaxed); runners != 0) {
        // The word's sleepers wake in no set order: enough for a runner past the others.
        const std::uint32_t all = sleepers_.load(std::memory_order_relaxed);
        epoch_.fetch_add(1, std::memory_order_relaxed);
        runtime::futex_wake(epoch_, static_cast<int>(std::min<std::uint32_t>(all > runners ? all - runners + 1 : 1, 1024)));
    }
    if (workers_in_loop_.load(std::memory_order_relaxed) < limit_.load(std::memory_order_relaxed) - 1) wake_someone();
}

void task_pool::wake_someone() noexcept {
    if (slot_count_ <= 1 || waking_.exchange(true, std::memory_order_acquire)) return;
    // The woken worker clears `waking_` when it enters the loop; none woken: clear it here.
    if (team_.notify_work(1) == 0) waking_.store(false, std::memory_order_release);
}

void task_pool::wake_waiters() noexcept {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_relaxed) != 0) {
        epoch_.fetch_add(1, std::memory_order_relaxed);
        runtime::futex_wake_all(epoch_);
    }
}

void task_pool::set_counting(bool on) noexcept { counting_.store(on, std::memory_order_relaxed); }

void task_pool::set_concurrency(int k) noexcept {
    user_limit_.store(k <= 0 ? slot_count_ : std::min(k, slot_count_), std::memory_order_relaxed);
    apply_limits();
}

void task_pool::apply_limits() noexcept {
    // seq_cst with stop_at_exit's pair (exiting_, then 0): one of them stores 0 last.
    limit_.store(std::min(user_limit_.load(std::memory_order_relaxed), node_share_.load(std::memory_order_relaxed)),
                 std::memory_order_seq_cst);
    if (exiting_.load(std::memory_order_seq_cst)) limit_.store(0, std::memory_order_seq_cst);
}

void task_pool::follow_node_share() noexcept {
    // Workers above the share stop before their next task (worker_session checks the limit);
    // a larger share wakes one, which passes the wake-up on while work is queued.
    const int share = static_cast<int>(runtime::thread_share(static_cast<unsigned>(slot_count_)));
    const int before = node_share_.load(std::memory_order_relaxed);
    if (share == before) return;
    node_share_.store(share, std::memory_order_relaxed);
    apply_limits();
    if (share > before && queued()) wake_someone();  // queued work need not wait for a spawn
}

// --- finding work ----------------------------------------------------------------------------

task_node* task_pool::take_shared() noexcept {
    if (shared_size_.load(std::memory_order_acquire) == 0) return nullptr;
    std::lock_guard lock(shared_mutex_);
    if (shared_.empty()) return nullptr;
    task_node* t = shared_.front();
    shared_.pop_front();
    shared_size_.fetch_sub(1, std::memory_order_relaxed);
    return t;
}

std::uint64_t task_pool::next_random(thread_state& ts) noexcept {
    ts.rng ^= ts.rng << 13;  // xorshift64
    ts.rng ^= ts.rng >> 7;
    ts.rng ^= ts.rng << 17;
    return ts.rng;
}

task_node* task_pool::steal_from_others(thread_state& ts, int s) noexcept {
    // One slot: nothing to steal for its owner, but a thread with no slot still takes from it.
    if (slot_count_ <= 1 && s >= 0) return nullptr;
    // Nearest class first; a random rotation inside each class.
    if (s < 0) {  // no slot: random victims
        const int start = static_cast<int>(next_random(ts) % static_cast<std::uint64_t>(slot_count_));
        for (int i = 0; i < slot_count_; ++i) {
            const int v = (start + i) % slot_count_;
            task_node* t = nullptr;
            if (slots_[v].deque.steal(t) == work_deque<task_node*>::steal_result::taken) {
                counters_.stolen_from.add_for_worker(v, 1);
                counters_.stolen_to.add(1);
                return t;
            }
        }
        return nullptr;
    }
    const slot& me = slots_[s];
    int begin = 0;
    for (const int end : me.class_ends) {
        const int n = end - begin;
        const int start = static_cast<int>(next_random(ts) % static_cast<std::uint64_t>(n));
        for (int i = 0; i < n; ++i) {
            const int v = me.victims[static_cast<std::size_t>(begin + (start + i) % n)];
            task_node* t = nullptr;
            auto r = slots_[v].deque.steal(t);
            if (r == work_deque<task_node*>::steal_result::lost) r = slots_[v].deque.steal(t);  // once more
            if (r == work_deque<task_node*>::steal_result::taken) {
                const int taken = 1 + steal_more(s, v);
                counters_.stolen_from.add_for_worker(v, static_cast<std::uint64_t>(taken));
                counters_.stolen_to.add(static_cast<std::uint64_t>(taken));
                return t;
            }
        }
        begin = end;
    }
    return nullptr;
}

// After a steal from `v`, when its deque still holds more than `steal_batch`: up to
// steal_batch - 1 more of its oldest (leaving it at least steal_batch), one CAS each, into the thief's own deque (empty: the
// thief looked there first), the next oldest on top, so they run in their queued order and
// others may steal them on. A flood from one thread then moves its tasks in batches: the
// lines of the victim's top and bottom cross between cores once a batch, not once a task.
int task_pool::steal_more(int s, int v) noexcept {
    std::array<task_node*, steal_batch - 1> more;
    work_deque<task_node*>& victim = slots_[v].deque;
    // Sized once (each steal reads top and bottom again itself); the victim's own pops and
    // other thieves in between are settled by the steals, which stop at the first miss.
    const auto wanted = std::min<std::int64_t>(steal_batch - 1, victim.size() - steal_batch);
    int n = 0;
    while (n < wanted && victim.steal(more[static_cast<std::size_t>(n)]) == work_deque<task_node*>::steal_result::taken) ++n;
    for (int k = n - 1; k >= 0; --k) slots_[s].deque.push(more[static_cast<std::size_t>(k)]);  // never grows
    return n;
}

task_node* task_pool::find(thread_state& ts, int s, bool& local) noexcept {
    local = false;
    if (s >= 0) {
        const bool counting = counting_.load(std::memory_order_relaxed);
        if (counting) counters_.pending_accesses.add(1);
        task_node* t = nullptr;
        if (slots_[s].deque.pop(t)) {
            local = true;
            return t;
        }
        if (counting) counters_.pending_misses.add(1);
    }
    if (task_node* t = take_shared()) return t;
    return steal_from_others(ts, s);
}

bool task_pool::outstanding() const noexcept { return waiters_.load(std::memory_order_relaxed) != 0 || queued(); }

bool task_pool::queued() const noexcept {
    if (shared_size_.load(std::memory_order_relaxed) != 0) return true;
    for (int s = 0; s < slot_count_; ++s)
        if (!slots_[s].deque.maybe_empty()) return true;
    return false;
}

// --- running ---------------------------------------------------------------------------------

// `start` is now, or a reading taken just before when only a pop of the own deque came
// between (the clock costs 30 ns on a VM: two readings per task, not four, in the common
// case of recursive spawning). Returns the reading at the task's end.
runtime::ticks task_pool::execute(thread_state& ts, task_node* t, runtime::ticks start) noexcept {
    if (!counting_.load(std::memory_order_relaxed)) [[unlikely]] {
        ++ts.task_depth;
        t->execute(t);
        --ts.task_depth;
        return 0;
    }
    if (start == 0) start = runtime::now_ticks();
    if (t->queued_at != 0) {
        counters_.wait_sum.add(ns(start > t->queued_at ? start - t->queued_at : 0));
        counters_.wait_samples.add(1);
    }
    // Counted before it runs: the task publishes its result itself, and a reader that saw the
    // result must see the task counted. Its time is added just after (docs/tasks.md).
    counters_.tasks.add(1);
    counters_.phases.add(1);
    // A task running here already waits (help_until closed its phase and reopens it).
    ++ts.task_depth;
    ts.phase_start = start;
    t->execute(t);  // frees t
    --ts.task_depth;
    const runtime::ticks end = runtime::now_ticks();
    counters_.cumulative.add(ns(end - ts.phase_start));
    if (ts.loop_depth > 0) {
        counters_.overall.add(ns(end - ts.loop_mark));
        ts.loop_mark = end;
    }
    return end;
}

bool task_pool::stack_has_room(const thread_state& ts) noexcept {
    char here;  // the caller's frame, give or take this small one
    return ts.stack_floor == 0 || reinterpret_cast<std::uintptr_t>(&here) > ts.stack_floor;
}

void task_pool::run_inline(thread_state& ts, task_node* t) noexcept {
    const bool counting = counting_.load(std::memory_order_relaxed);
    if (counting && ts.task_depth == 0) {
        // From outside any task: timed as a visit of the scheduling loop that ran one task (a
        // thread outside the loop adds the same time to t_func, or idle-rate would go negative).
        const runtime::ticks start = runtime::now_ticks();
        const runtime::ticks end = execute(ts, t, start);
        if (ts.loop_depth == 0) counters_.overall.add(ns(end - start));
        return;
    }
    // Spawned by a running task: that task's open phase covers this one's time, and t_exec
    // counts each moment once, whichever task it is charged to. So no clock is read (two
    // readings would cost more than a local pop, which shares one): the task and its phase
    // are counted, its time stays in the spawner's phase.
    if (counting) {
        counters_.tasks.add(1);
        counters_.phases.add(1);
    }
    ++ts.task_depth;
    t->execute(t);  // frees t
    --ts.task_depth;
}

bool task_pool::spin_or_yield(runtime::ticks idle) const noexcept {
    if (idle < spin_ticks_) runtime::cpu_relax();
    else if (idle < spin_ticks_ + yield_ticks_) sched_yield();
    else return false;
    return true;
}

void task_pool::sleep_a_while(bool (*leave)(const task_pool&) noexcept) noexcept {
    const std::uint32_t seen = epoch_.load(std::memory_order_relaxed);
    // seq_cst: the Dekker pair with spawn() (its push, then its load of runner_sleepers_).
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    runner_sleepers_.fetch_add(1, std::memory_order_seq_cst);
    if (!queued() && !leave(*this)) runtime::futex_wait_for(epoch_, seen, idle_recheck_ns_.load(std::memory_order_relaxed));
    runner_sleepers_.fetch_sub(1, std::memory_order_relaxed);
    sleepers_.fetch_sub(1, std::memory_order_relaxed);
}

void task_pool::wake_for_fork(void* pool) noexcept {
    auto& self = *static_cast<task_pool*>(pool);
    self.epoch_.fetch_add(1, std::memory_order_seq_cst);
    runtime::futex_wake_all(self.epoch_);
}

bool task_pool::poll(void* pool, int worker) noexcept {
    static_cast<task_pool*>(pool)->worker_session(worker);
    return false;  // the session ran until nothing was left: the team may wait now
}

void task_pool::worker_session(int worker) noexcept {
    waking_.store(false, std::memory_order_relaxed);
    if (worker >= limit_.load(std::memory_order_relaxed) || !outstanding()) return;
    thread_state& ts = this_thread();
    if (ts.pool != this) adopt(ts);
    ts.slot = worker;
    runtime::set_counter_worker(worker);
    workers_in_loop_.fetch_add(1, std::memory_order_relaxed);
    ++ts.loop_depth;
    ts.loop_mark = runtime::now_ticks();
    runtime::ticks idle_since = 0;
    runtime::ticks recent = 0;  // the last task's end, while nothing but local pops followed
    for (;;) {
        // Before taking a task: a lowered limit (0 once the process exits) or a fork waiting
        // for the team stops this worker before it runs one more.
        if (team_.wants_workers() || worker >= limit_.load(std::memory_order_relaxed)) break;
        bool local = false;
        if (task_node* t = find(ts, worker, local)) {
            idle_since = 0;
            // Found work while others may be asleep: pass the wake-up on.
            if (!local && workers_in_loop_.load(std::memory_order_relaxed) < limit_.load(std::memory_order_relaxed) - 1 &&
                outstanding())
                wake_someone();
            recent = execute(ts, t, local ? recent : 0);
            continue;
        }
        recent = 0;
        const runtime::ticks now = runtime::now_ticks();
        if (idle_since == 0) idle_since = now;
        // Nothing outstanding for a short grace (a spawner's next task is usually on its
        // way): leave.
        if (now - idle_since >= grace_ticks_ && !outstanding()) {
            // Leave, then look once more: a spawn that saw this thread in the loop did not
            // wake anyone (the Dekker pair with spawn()).
            workers_in_loop_.fetch_sub(1, std::memory_order_seq_cst);
            if (!outstanding()) {
                --ts.loop_depth;
                counters_.overall.add(ns(runtime::now_ticks() - ts.loop_mark));
                return;
            }
            workers_in_loop_.fetch_add(1, std::memory_order_relaxed);
            continue;
        }
        if (!spin_or_yield(now - idle_since)) {
            sleep_a_while([](const task_pool& p) noexcept { return p.team_.wants_workers(); });
            idle_since = runtime::now_ticks() - spin_ticks_ - yield_ticks_;  // stay in the sleep phase
        }
    }
    workers_in_loop_.fetch_sub(1, std::memory_order_relaxed);
    --ts.loop_depth;
    counters_.overall.add(ns(runtime::now_ticks() - ts.loop_mark));
}

void task_pool::help_until(bool (*done)(const void*) noexcept, const void* ctx) noexcept {
    thread_state& ts = this_thread();
    const int s = slot_of_this_thread(ts);
    // Too little stack left to run another task's frames: only wait. The concurrency limit
    // does not stop a thread that waits: it holds its core anyway, and a worker inside a
    // loop body that waits for its own tasks must run them when the limit (the node's
    // share, or set_task_concurrency) drops below its slot: no one else would.
    const bool may_run = stack_has_room(ts);
    const bool counting = counting_.load(std::memory_order_relaxed);
    const runtime::ticks enter = counting ? runtime::now_ticks() : 0;
    if (counting && ts.task_depth > 0) counters_.cumulative.add(ns(enter - ts.phase_start));  // its phase ends
    const bool outermost = ts.loop_depth == 0;
    if (outermost) {
        // A thread entering the scheduling loop from outside (the program's thread): a
        // waiter, which keeps the workers looking.
        waiters_.fetch_add(1, std::memory_order_relaxed);
        ts.loop_mark = enter;
    }
    ++ts.loop_depth;
    // A task run here may start a loop: it must claim idle workers, not take the team (a
    // fork there could wait for this very thread).
    runtime::worker_team::job_scope in_job(team_);
    runtime::ticks idle_since = 0;
    runtime::ticks recent = enter;  // a reading still good as "now" (see execute)
    std::shared_ptr<std::atomic<bool>> relief_stop;  // set: this wait's relief thread may end
    if (outermost) follow_node_share();  // before a task runs here, and at every round below
    while (!done(ctx)) {
        if (outermost) follow_node_share();
        if (may_run) {
            bool local = false;
            if (task_node* t = find(ts, s, local)) {
                idle_since = 0;
                recent = execute(ts, t, local ? recent : 0);
                continue;
            }
        }
        recent = 0;
        const runtime::ticks now = runtime::now_ticks();
        if (idle_since == 0) idle_since = now;
        if (!spin_or_yield(now - idle_since)) {
            // Past its floor with tasks queued: maybe no runner has stack left (see .hpp).
            if (!may_run && relief_stop == nullptr && queued()) relief_stop = start_relief();
            const std::uint32_t seen = epoch_.load(std::memory_order_relaxed);
            sleepers_.fetch_add(1, std::memory_order_seq_cst);
            if (may_run) runner_sleepers_.fetch_add(1, std::memory_order_seq_cst);
            if (!done(ctx) && !(may_run && queued())) runtime::futex_wait_for(epoch_, seen, idle_recheck_ns_.load(std::memory_order_relaxed));
            if (may_run) runner_sleepers_.fetch_sub(1, std::memory_order_relaxed);
            sleepers_.fetch_sub(1, std::memory_order_relaxed);
            // Woken (a spawn, a completion): spin and yield again, the next task is near. Timed
            // out: stay in the sleep phase (waits that never end, past W019, then cost no CPU).
            idle_since = epoch_.load(std::memory_order_relaxed) != seen ? 0 : runtime::now_ticks() - spin_ticks_ - yield_ticks_;
        }
    }
    if (relief_stop != nullptr) {
        relief_stop->store(true, std::memory_order_release);
        wake_waiters();  // the relief thread may sleep in its loop
    }
    --ts.loop_depth;
    const runtime::ticks leave = !counting ? 0 : recent != 0 ? recent : runtime::now_ticks();
    if (outermost) {
        if (counting) counters_.overall.add(ns(leave - ts.loop_mark));
        waiters_.fetch_sub(1, std::memory_order_relaxed);
    }
    if (counting && ts.task_depth > 0) {  // the task that waited resumes: a new phase
        ts.phase_start = leave;
        counters_.phases.add(1);
    }
}

std::shared_ptr<std::atomic<bool>> task_pool::start_relief() noexcept {
    // The waiter goes on waiting; W019 says why it may wait long.
    const auto no_relief = [](const std::string& why) {
        runtime::report_once({runtime::report_level::warning, runtime::report_category::runtime, "W019",
                              why + "; a wait with no stack left relies on other threads to run its tasks, and "
                                    "never returns if every thread's stack is as full (a chain of nested waits "
                                    "millions deep)",
                              {}});
    };
    if (relief_threads_.fetch_add(1, std::memory_order_relaxed) >= max_relief_threads) {
        relief_threads_.fetch_sub(1, std::memory_order_relaxed);
        no_relief(std::to_string(max_relief_threads) + " relief threads already run tasks for such waits");
        return nullptr;
    }
    struct relief {
        task_pool* pool;
        // Shared, not on the waiter's stack: the waiter returns as soon as its wait is over,
        // while this thread may still be inside a task it took.
        std::shared_ptr<std::atomic<bool>> stop;
        static void* run(void* arg) noexcept {
            const std::unique_ptr<relief> r(static_cast<relief*>(arg));
            r->pool->help_until([](const void* flag) noexcept {
                return static_cast<const std::atomic<bool>*>(flag)->load(std::memory_order_acquire);
            }, r->stop.get());
            r->pool->relief_threads_.fetch_sub(1, std::memory_order_relaxed);
            return nullptr;
        }
    };
    std::shared_ptr<std::atomic<bool>> stop;
    std::unique_ptr<relief> r;
    try {
        stop = std::make_shared<std::atomic<bool>>(false);
        r = std::make_unique<relief>(relief{this, stop});
    } catch (const std::exception&) {
        relief_threads_.fetch_sub(1, std::memory_order_relaxed);
        no_relief("no memory for a relief thread");
        return nullptr;
    }
    // Its own stack size; where the address space is limited (ulimit -v), the default.
    int err = EAGAIN;
    for (const std::size_t bytes : {relief_stack_bytes, std::size_t{0}}) {
        pthread_attr_t attr;
        if (pthread_attr_init(&attr) != 0) continue;
        pthread_t thread;
        if (bytes == 0 || pthread_attr_setstacksize(&attr, bytes) == 0) err = pthread_create(&thread, &attr, &relief::run, r.get());
        pthread_attr_destroy(&attr);
        if (err == 0) {
            pthread_detach(thread);
            static_cast<void>(r.release());  // the thread owns it now
            return stop;
        }
    }
    relief_threads_.fetch_sub(1, std::memory_order_relaxed);
    no_relief(std::string("a relief thread could not start (") + std::strerror(err) + ")");
    return nullptr;
}

}  // namespace aloe::task

// --- the C++ API's entry points (include/aloe/task.hpp) -------------------------------------

namespace aloe::detail {

void task_spawn(task_node* t) noexcept { aloe::task::task_pool::process().spawn(t); }

void task_help_until(bool (*done)(const void*) noexcept, const void* ctx) noexcept {
    aloe::task::task_pool::process().help_until(done, ctx);
}

void task_wake_waiters() noexcept { aloe::task::task_pool::process().wake_waiters(); }

}  // namespace aloe::detail

#include "omp/team_region.hpp"

#include "coord/daemon_client.hpp"
#include "coord/node_share_policy.hpp"

#include "omp/fork_lock.hpp"
#include "omp/guest_seats.hpp"
#include "omp/interposer_settings.hpp"
#include "omp/loop_takeover.hpp"
#include "omp/trace_log.hpp"
#include "runtime/borrowed_cores.hpp"
#include "runtime/config.hpp"
#include "runtime/report.hpp"

#define ALOE_DETAIL_ALLOWED
#include <aloe/detail/iteration_space.hpp>
#undef ALOE_DETAIL_ALLOWED

#include <algorithm>
#include <cassert>
#include <memory>
#include <utility>

namespace aloe::omp {

constinit thread_local thread_view this_thread_view __attribute__((tls_model("initial-exec")));

namespace {



struct region_pool {
    std::mutex mutex;
    std::vector<std::unique_ptr<team_region>> all;
    std::vector<team_region*> free;
};

// The pool as the fork hooks and the exit report see it: they must not go through pool()'s
// guarded static (a fork during its first use would leave the guard held in the child; at
// exit, a program that ran no region has no pool to make).
constinit std::atomic<region_pool*> pool_for_fork{nullptr};
// What the forking thread locked (fork_lock.hpp): the pool may be made between the hooks.
constinit thread_local std::mutex* region_pool_locked_for_fork __attribute__((tls_model("initial-exec"))) = nullptr;

region_pool& pool() {
    static region_pool* const p = [] {
        auto* made = new region_pool;  // never destroyed: pool threads outlive statics
        pool_for_fork.store(made, std::memory_order_release);
        return made;
    }();
    return *p;
}

}  // namespace

iteration_map iteration_map::for_long(long start, long end, long incr) noexcept {
    iteration_map m;
    m.start = static_cast<std::uint64_t>(start);
    m.end = static_cast<std::uint64_t>(end);
    m.incr = static_cast<std::uint64_t>(incr);
    if (incr > 0 && end > start) {
        m.count = aloe::detail::iteration_space::steps_in(static_cast<std::uint64_t>(end) - static_cast<std::uint64_t>(start),
                           static_cast<std::uint64_t>(incr));
    } else if (incr < 0 && start > end) {
        m.count = aloe::detail::iteration_space::steps_in(static_cast<std::uint64_t>(start) - static_cast<std::uint64_t>(end),
                           std::uint64_t{0} - static_cast<std::uint64_t>(incr));
    }
    return m;
}

iteration_map iteration_map::for_ull(bool up, ull start, ull end, ull incr) noexcept {
    iteration_map m;
    m.start = start;
    m.end = end;
    m.incr = incr;
    if (incr == 0) return m;
    if (up && end > start) m.count = aloe::detail::iteration_space::steps_in(end - start, incr);
    else if (!up && start > end) m.count = aloe::detail::iteration_space::steps_in(start - end, std::uint64_t{0} - incr);
    return m;
}


void lock_region_pool_for_fork() noexcept {
    region_pool* p = pool_for_fork.load(std::memory_order_acquire);
    lock_for_fork(p != nullptr ? &p->mutex : nullptr, region_pool_locked_for_fork);
}

void unlock_region_pool_after_fork() noexcept { unlock_after_fork(region_pool_locked_for_fork); }

namespace {

template <class F>
void for_each_slot(team_region& r, F&& fn) {
    for (loop_slot& s : r.slots) fn(s);
    r.overflow.for_each_slot(fn);
}

}  // namespace

void flush_taken_runs() {
    // Every region, running or not: a slot's batch has its own lock (shared_loop), and the
    // region's lock keeps its overflow slots where they are meanwhile.
    region_pool* p = pool_for_fork.load(std::memory_order_acquire);
    if (p == nullptr) return;  // no region ever ran: nothing to commit, nothing to make at exit
    std::lock_guard pool_lock(p->mutex);
    for (const std::unique_ptr<team_region>& r : p->all) {
        std::lock_guard region_lock(r->mutex);
        for_each_slot(*r, [](loop_slot& s) { s.engine.flush(); });
    }
}

void forget_taken_runs_in_child() noexcept {
    // The child has one thread: every region, in use at the fork or not, is its own now.
    region_pool* p = pool_for_fork.load(std::memory_order_acquire);
    if (p == nullptr) return;
    for (const std::unique_ptr<team_region>& r : p->all)
        for_each_slot(*r, [](loop_slot& s) { s.engine.discard_batch(); });
}

loop_slot* overflow_loops::find(std::uint64_t index) noexcept {
    const auto begin = entries_.begin() + static_cast<std::ptrdiff_t>(first_);
    const auto at = std::lower_bound(begin, entries_.end(), index,
                                     [](const entry& e, std::uint64_t i) { return e.index < i; });
    return at != entries_.end() && at->index == index ? at->slot : nullptr;
}

loop_slot& overflow_loops::add(std::uint64_t index) {
    assert(entries_.size() == first_ || entries_.back().index < index);
    if (free_.empty()) {
        auto made = std::make_unique<loop_slot>();
        made->overflow = true;
        // Room for every slot: remove() and clear() then return them without allocating.
        if (free_.capacity() < all_.size() + 1) free_.reserve(std::max(2 * free_.capacity(), all_.size() + 1));
        all_.push_back(std::move(made));
        free_.push_back(all_.back().get());
    }
    loop_slot* s = free_.back();
    free_.pop_back();
    s->holds.store(index + 1, std::memory_order_relaxed);
    entries_.push_back({index, s});
    ++live_;
    return *s;
}

void overflow_loops::remove(loop_slot& s) noexcept {
    const std::uint64_t index = s.holds.load(std::memory_order_relaxed) - 1;
    const auto begin = entries_.begin() + static_cast<std::ptrdiff_t>(first_);
    const auto at = std::lower_bound(begin, entries_.end(), index,
                                     [](const entry& e, std::uint64_t i) { return e.index < i; });
    assert(at != entries_.end() && at->slot == &s);
    at->slot = nullptr;
    s.holds.store(0, std::memory_order_relaxed);
    free_.push_back(&s);  // never allocates: add() reserved room for every slot
    --live_;
    // Drop the gaps at either end; when none is left in use, start again at the front.
    while (first_ < entries_.size() && entries_[first_].slot == nullptr) ++first_;
    while (entries_.size() > first_ && entries_.back().slot == nullptr) entries_.pop_back();
    if (first_ == entries_.size()) {
        entries_.clear();
        first_ = 0;
    }
}

void overflow_loops::clear() noexcept {
    for (std::size_t i = first_; i < entries_.size(); ++i)
        if (loop_slot* s = entries_[i].slot) {
            s->holds.store(0, std::memory_order_relaxed);
            s->departed.store(0, std::memory_order_relaxed);
            free_.push_back(s);
        }
    entries_.clear();
    first_ = 0;
    live_ = 0;
}

void release_overflow_slot(team_region& r, loop_slot& s) noexcept {
    std::lock_guard lock(r.mutex);
    r.overflow.remove(s);
}

bool region_cancelled() noexcept {
    constexpr int gomp_cancel_parallel = 1;  // libgomp_g.h: GOMP_CANCEL_PARALLEL
    const real_gomp& g = real();
    return g.cancellation_point != nullptr && g.cancellation_point(gomp_cancel_parallel);
}

team_region& acquire_region(omp_site& site, region_body body, void* data) {
    // The site's spare first (the common case: one execution at a time, not nested).
    team_region* r = site.spare_region.exchange(nullptr, std::memory_order_acquire);
    if (r == nullptr) {
        region_pool& p = pool();
        std::lock_guard lock(p.mutex);
        if (!p.free.empty()) {
            r = p.free.back();
            p.free.pop_back();
        } else {
            p.all.push_back(std::make_unique<team_region>());
            r = p.all.back().get();
        }
    }
    r->site = &site;
    r->body = body;
    r->data = data;
    r->preset_loop = false;
    r->chain_planned = false;
    r->own_threads = 0;
    r->guest_moved.store(false, std::memory_order_relaxed);
    r->loop_iterations.store(0, std::memory_order_relaxed);
    r->threads.store(0, std::memory_order_relaxed);
    r->forward_from = team_region::no_forwarding;
    for (loop_slot& s : r->slots) {
        s.holds.store(0, std::memory_order_relaxed);
        s.departed.store(0, std::memory_order_relaxed);
    }
    r->overflow.clear();  // a cancelled execution may have left some in use
    return *r;
}

void release_region(team_region& r) noexcept {
    team_region* none = nullptr;
    if (r.site->spare_region.compare_exchange_strong(none, &r, std::memory_order_release, std::memory_order_relaxed))
        return;
    region_pool& p = pool();
    std::lock_guard lock(p.mutex);
    p.free.push_back(&r);
}

namespace {

void note_team(team_region& r, int threads) {
    // Every thread sees the same team size; the first to get here sizes the busy array
    // (the others wait for it: nothing may index busy before it has room). Every thread
    // writes its own entry before the join, so a busy array with room needs no filling:
    // then one CAS publishes the size.
    // The room is read through busy_room, never busy.size(): another thread may be resizing.
    if (threads <= r.busy_room.load(std::memory_order_acquire)) {
        int none = 0;
        if (r.threads.load(std::memory_order_acquire) == 0)
            r.threads.compare_exchange_strong(none, threads, std::memory_order_acq_rel, std::memory_order_acquire);
        return;
    }
    if (r.threads.load(std::memory_order_acquire) == 0) {
        std::lock_guard lock(r.mutex);
        if (r.threads.load(std::memory_order_relaxed) == 0) {
            if (r.busy.size() < static_cast<std::size_t>(threads)) {
                r.busy.resize(static_cast<std::size_t>(threads));
                r.busy_room.store(threads, std::memory_order_release);
            }
            std::fill_n(r.busy.begin(), threads, runtime::ticks{0});
            r.threads.store(threads, std::memory_order_release);
        }
    }
}

// Makes `v` the view of a thread entering region `r`, in place: only the fields a view
// outside any loop reads (the rest is written when the thread enters a loop).
void enter_view(thread_view& v, team_region& r) {
    const real_gomp& g = real();
    v.region = &r;
    v.thread = g.get_thread_num();
    v.threads = g.get_num_threads();
    v.level = g.get_level();
    v.loops_met = 0;
    v.clear_loop();
    v.forwarded = nullptr;
    note_team(r, v.threads);
    if (r.preset_loop) {
        v.loops_met = 1;
        enter_taken(v, r.slots[0]);
    }
}

// A thread outside any region, loop or forwarded loop of aloe's: the common case of a
// region's entry, which then needs no copy of the whole view (it is large: the taken
// loop's stepper and map live in it).
bool outside(const thread_view& v) noexcept { return v.region == nullptr && v.loop == nullptr && v.forwarded == nullptr; }

void back_outside(thread_view& v) noexcept {
    v.region = nullptr;
    v.clear_loop();
    v.forwarded = nullptr;
    v.thread = 0;
    v.threads = 1;
    v.level = 0;
    v.loops_met = 0;
}



}  // namespace

namespace {

// A thread past the region's own count runs on a core another rank lent (issue 19), seated
// by omp/guest_seats.hpp; a region whose guest had to move says so (guest_payoff.hpp leaves
// its time out).
class borrowed_seat {
public:
    borrowed_seat(team_region& r, int thread) noexcept : guest_(take_guest_seat(thread, r.own_threads, &moved_)) {
        if (moved_) [[unlikely]] r.guest_moved.store(true, std::memory_order_relaxed);
    }
    ~borrowed_seat() {
        if (guest_) [[unlikely]] leave_guest_seat();
    }
    borrowed_seat(const borrowed_seat&) = delete;
    borrowed_seat& operator=(const borrowed_seat&) = delete;

private:
    bool moved_ = false;  // initialised before guest_ (declaration order): take_guest_seat sets it
    bool guest_;
};

void run_body(thread_view& v, team_region& r) {
    const int me = v.thread;
    const borrowed_seat seat(r, me);
    const runtime::ticks t0 = runtime::now_ticks();
    r.body(r.data);
    const runtime::ticks t1 = runtime::now_ticks();
    r.busy[static_cast<std::size_t>(me)] = t1 - t0;
    if (tracing()) trace_event(trace_kind::region, *r.site, t0, t1, me, 0);
}

}  // namespace

void region_entry(void* region) noexcept {
    team_region& r = *static_cast<team_region*>(region);
    thread_view& v = this_thread_view;
    if (outside(v)) [[likely]] {
        enter_view(v, r);
        run_body(v, r);
        back_outside(v);
        return;
    }
    // Nested in something of aloe's (a region, a loop's body): the outer view comes back.
    const thread_view saved = v;
    enter_view(v, r);
    run_body(v, r);
    v = saved;
}

thread_view enter_region_as_master(team_region& r) {
    thread_view& v = this_thread_view;
    const thread_view saved = v;
    enter_view(v, r);
    return saved;
}

void leave_region_as_master(team_region& r, const thread_view& saved, runtime::ticks t0) {
    const runtime::ticks t1 = runtime::now_ticks();
    r.busy[0] = t1 - t0;
    if (tracing()) trace_event(trace_kind::region, *r.site, t0, t1, 0, 0);
    this_thread_view = saved;
}

void record_region(team_region& r, runtime::ticks t0, runtime::ticks t1) {
    omp_site& s = *r.site;
    const int n = r.threads.load(std::memory_order_acquire);
    s.invocations.add(1);
    s.region_time.add(runtime::ticks_to_ns(t1 - t0));
    s.threads_last.store(n, std::memory_order_relaxed);
    if (region_borrowing_threads() > 0 && !r.guest_moved.load(std::memory_order_relaxed))
        s.guests.region_ran(r.own_threads > 0, runtime::ticks_to_seconds(t1 - t0));
    if (r.chain_planned) {
        // The chain that sized the region sees how it went (the node daemon's efficiency).
        loop::loop_outcome outcome;
        outcome.fork = t0;
        outcome.join = t1;
        outcome.iterations = r.loop_iterations.load(std::memory_order_relaxed);
        std::lock_guard lock(s.chain_mutex);
        s.region_chain.observe(outcome);
    }
    int seen = s.threads_max.load(std::memory_order_relaxed);
    while (n > seen && !s.threads_max.compare_exchange_weak(seen, n, std::memory_order_relaxed)) {}
    if (n <= 0) return;
    runtime::ticks most = 0, sum = 0;
    for (int i = 0; i < n; ++i) {
        most = std::max(most, r.busy[static_cast<std::size_t>(i)]);
        sum += r.busy[static_cast<std::size_t>(i)];
    }
    if (sum == 0) return;
    const double imbalance = static_cast<double>(most) * n / static_cast<double>(sum);
    s.imbalance.add(static_cast<std::uint64_t>(imbalance * 1e6 + 0.5));  // ratio unit: millionths
}

namespace {

constinit std::atomic<bool> program_reads_team_size{false};

// The threads this process's regions could put on borrowed cores: as many as the native
// team's spares would be for the region's own count (runtime/borrowed_cores.hpp); first
// asked by libaloe-mpi at MPI_Init, once libgomp has read its settings. A program without
// libgomp (an MPI code with no OpenMP under `aloe run --mpi`) runs no region: none, and
// libgomp's entry points are not looked for (real() stops a program that has none).
//
// Only where lending was asked for by name (`--lend reactive|predictive`, ALOE_LEND): under
// the default (auto) an OpenMP program's regions keep their count, since an unmodified
// program may keep a count read in one region (omp_get_num_threads()) for a later one, and a
// wider team then wrote past a per-thread array and summed stale entries (a hostile test's
// program: 2-3% off, 98 writes out of range). Its rank still lends, and aloe's own loops
// still borrow.
int borrowable_threads() noexcept {
    static const int most = [] {
        if (real_symbol("omp_get_max_threads") == nullptr) return 0;
        const int own = settings().threads > 0 ? settings().threads : real().get_max_threads();
        int spares = 0;
        try {
            spares = runtime::default_spare_workers(std::max(own, 1));
        } catch (...) {
        }
        if (spares > 0 && runtime::current_config().lend == runtime::lend_mode::automatic) {
            runtime::report_once({runtime::report_level::info, runtime::report_category::omp, "I506",
                                  "ALOE_LEND is auto: the program's parallel regions keep their thread count "
                                  "(an unmodified program may keep a count read in one region for the next)",
                                  "lending without borrowing; --lend predictive or reactive lets regions borrow"});
            return 0;
        }
        return spares;
    }();
    return most;
}

}  // namespace

void note_program_reads_team_size(const char* call) noexcept {
    if (program_reads_team_size.load(std::memory_order_relaxed) ||
        program_reads_team_size.exchange(true, std::memory_order_relaxed))
        return;
    if (borrowable_threads() > 0)
        runtime::report_once({runtime::report_level::info, runtime::report_category::omp, "I505",
                              std::string("the program reads ") + call +
                                  "(): its parallel regions keep their thread count from now on (a per-thread "
                                  "array sized by it, or work split by it, would miss a borrowed core's thread)",
                              "lending without borrowing"});
}

int region_borrowing_threads() noexcept {
    return program_reads_team_size.load(std::memory_order_relaxed) ? 0 : borrowable_threads();
}

namespace {

// Cores lent by other ranks of the job (issue 19) join the region as extra threads, one
// per borrowed CPU the daemon named, no more than the process asked for; the region
// learns its own count so that region_entry pins the extra ones.
unsigned with_borrowed_cores(team_region& r, unsigned threads, int available) {
    const int named = runtime::borrowed_cores_named();
    if (named <= 0) [[likely]] return threads;
    const int extra = std::min(named, region_borrowing_threads());
    if (extra <= 0) return threads;
    const int own = threads > 0 ? static_cast<int>(threads) : std::max(available, 1);
    if (!r.site->guests.take_guests()) {
        runtime::note_region_kept_without_guests();
        return threads;
    }
    r.own_threads = own;
    return static_cast<unsigned>(own + extra);
}

}  // namespace

// Regions watch for the node daemon (coord/node_share_policy.hpp), even while none answers,
// so that a program under `aloe run` joins a daemon started after it. Their regions, not
// the native team's spares, take the cores other ranks lend.
__attribute__((constructor)) void keep_node_share_for_regions() {
    coord::keep_node_share_policy();
    runtime::set_borrowing_threads_source(&region_borrowing_threads);
    runtime::set_guests_home_hook(&send_guests_home);
}

unsigned region_threads(team_region& r, unsigned requested) {
    omp_site& site = *r.site;
    // A region that leaves its thread count to the runtime gets --threads (or libgomp's own
    // count), then whatever the policies registered for regions plan (policy_chain.hpp: the
    // node daemon's share, coord/node_share_policy.cpp; concurrency throttling next).
    if (requested != 0) {
        site.non_malleable.store("num_threads clause", std::memory_order_relaxed);
        return requested;
    }
    if (const char* why = program_sets_threads.load(std::memory_order_relaxed)) {
        site.non_malleable.store(why, std::memory_order_relaxed);
        // Its count is the program's; the daemon still counts it, and confines it to its
        // share of CPUs instead (coord/affinity_plan.hpp).
        coord::daemon_client& daemon = coord::daemon_client::process(coord::client_interposed);
        daemon.mark_not_malleable();
        (void)daemon.threads(static_cast<unsigned>(std::max(real().get_max_threads(), 1)));
        // Borrowed cores still join: the program's count is its own cores' (as DLB LeWI).
        return with_borrowed_cores(r, 0, real().get_max_threads());
    }
    if (this_thread_view.region != nullptr) return 0;  // nested: libgomp's nesting rules
    const int proposed = settings().threads;
    const int available = proposed > 0 ? proposed : real().get_max_threads();
    // A clock read while no daemon is joined; joined, its kind is in the region chains.
    coord::watch_daemon_for_regions(static_cast<unsigned>(std::max(available, 1)));
    if (!loop::chain_applies(loop::policy_scope::region, nullptr)) [[likely]]
        return with_borrowed_cores(r, static_cast<unsigned>(proposed), available);
    std::lock_guard lock(site.chain_mutex);
    const loop::loop_plan plan = site.region_chain.plan({loop::policy_scope::region, nullptr, site.name, {}}, 0, available);
    r.chain_planned = true;
    return with_borrowed_cores(r, static_cast<unsigned>(plan.threads), available);
}

}  // namespace aloe::omp

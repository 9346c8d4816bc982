// aloe::loop_handle: an aloe schedule driven from threads aloe did not start (an OpenMP
// parallel region, pthreads). The first thread to call next() builds the schedule for the
// thread count it passes; the others wait for it (a short spin, then yield). Each thread
// then steps through its static part and the dynamic part chunk by chunk; the last thread
// to run out commits history and statistics to the site.
#include "loop/any_schedule.hpp"
#include "loop/loop_stats.hpp"
#include "loop/site_registry.hpp"

#include <aloe/error.hpp>
#include <aloe/loop_handle.hpp>

#define ALOE_DETAIL_ALLOWED
#include <aloe/detail/iteration_space.hpp>
#undef ALOE_DETAIL_ALLOWED

#include <sched.h>

#include <atomic>
#include <mutex>
#include <string>

namespace aloe::loop {

enum class handle_phase : int { unbuilt, building, ready };
// The largest thread count a handle accepts (the same bound as aloe::team).
constexpr int max_handle_threads = 4096;

enum class stage : std::uint8_t { not_started, static_part, dynamic_part, done };

struct alignas(runtime::cache_line) handle_worker {
    worker_cursor cursor;
    stage at = stage::not_started;
};

struct handle_state {
    detail::iteration_space space;
    schedule spec;
    site_state* site = nullptr;

    std::atomic<handle_phase> phase{handle_phase::unbuilt};
    int threads = 0;
    runtime::arena scratch;
    any_schedule sched;
    std::span<worker_record> records;
    std::span<handle_worker> workers;
    bool (*step)(handle_state&, int, chunk&) noexcept = nullptr;
    runtime::ticks t0 = 0;
    std::atomic<int> finished{0};

    void build(int nt);
    void finish_thread();
};

namespace {

template <class S>
bool step_schedule(handle_state& h, int tid, chunk& c) noexcept {
    S& s = std::get<S>(h.sched);
    handle_worker& w = h.workers[static_cast<std::size_t>(tid)];
    worker_record& rec = h.records[static_cast<std::size_t>(tid)];
    switch (w.at) {
        case stage::not_started:
            rec.start = runtime::now_ticks();
            w.at = stage::static_part;
            [[fallthrough]];
        case stage::static_part:
            if (s.next_static(w.cursor, c)) {
                rec.static_iterations += c.end - c.begin;
                return true;
            }
            rec.static_end = runtime::now_ticks();
            w.at = stage::dynamic_part;
            [[fallthrough]];
        case stage::dynamic_part:
            if (const take t = s.next_dynamic(w.cursor, c); t != take::none) {
                rec.dynamic_iterations += c.end - c.begin;
                ++rec.chunks;
                rec.steals += t == take::stolen ? 1 : 0;
                return true;
            }
            rec.end = runtime::now_ticks();
            w.at = stage::done;
            h.finish_thread();
            return false;
        case stage::done: return false;
    }
    return false;
}

bool step_empty(handle_state&, int, chunk&) noexcept { return false; }

}  // namespace

void handle_state::build(int nt) {
    handle_phase expected = handle_phase::unbuilt;
    if (!phase.compare_exchange_strong(expected, handle_phase::building, std::memory_order_acq_rel)) {
        while (phase.load(std::memory_order_acquire) != handle_phase::ready) sched_yield();
        return;
    }
    threads = nt;
    records = scratch.make<worker_record>(static_cast<std::size_t>(nt));
    workers = scratch.make<handle_worker>(static_cast<std::size_t>(nt));
    for (int t = 0; t < nt; ++t) workers[static_cast<std::size_t>(t)].cursor.id = t;
    if (space.count == 0) {
        step = &step_empty;
    } else {
        {
            std::lock_guard lock(site->mutex);
            make_site_schedule(sched, *site, spec, space.count, nt, scratch);
        }
        step = std::visit(
            [](auto& s) -> bool (*)(handle_state&, int, chunk&) noexcept {
                using S = std::decay_t<decltype(s)>;
                if constexpr (std::is_same_v<S, std::monostate>) return &step_empty;
                else return &step_schedule<S>;
            },
            sched);
    }
    t0 = runtime::now_ticks();
    phase.store(handle_phase::ready, std::memory_order_release);
}

void handle_state::finish_thread() {
    // acq_rel: the last thread sees every other thread's record.
    if (finished.fetch_add(1, std::memory_order_acq_rel) + 1 != threads) return;
    const runtime::ticks t1 = runtime::now_ticks();
    {
        std::lock_guard lock(site->mutex);
        commit_site_run(sched, *site, spec, records, t0, t1);
    }
    count_loop(records, t0, t1);
}

}  // namespace aloe::loop

namespace aloe {

loop_handle::loop_handle(std::int64_t first, std::int64_t last, std::int64_t step, const schedule& s, loop_site site)
    : state_(std::make_unique<loop::handle_state>()) {
    if (step == 0) throw error("aloe::loop_handle: step must not be 0");
    state_->space = detail::iteration_space::make(first, last, step);
    state_->spec = s;
    state_->site = &loop::site_registry::instance().find(site);
}

loop_handle::loop_handle(std::int64_t first, std::int64_t last, const schedule& s, loop_site site)
    : loop_handle(first, last, 1, s, site) {}

loop_handle::~loop_handle() = default;

bool loop_handle::next(int thread, int num_threads, subrange& out) {
    loop::handle_state& h = *state_;
    if (h.phase.load(std::memory_order_acquire) != loop::handle_phase::ready) [[unlikely]] {
        if (num_threads < 1 || num_threads > loop::max_handle_threads)
            throw error("aloe::loop_handle: num_threads " + std::to_string(num_threads) + " is outside [1, " +
                        std::to_string(loop::max_handle_threads) + "]");
        h.build(num_threads);
    }
    if (num_threads != h.threads)
        throw error("aloe::loop_handle: num_threads " + std::to_string(num_threads) +
                    " differs from the first call's " + std::to_string(h.threads));
    if (thread < 0 || thread >= h.threads)
        throw error("aloe::loop_handle: thread " + std::to_string(thread) + " is outside [0, " +
                    std::to_string(h.threads) + ")");
    loop::chunk c;
    if (!h.step(h, thread, c)) return false;
    out = subrange(h.space.index(c.begin), h.space.bound(c.end), h.space.step, c.end - c.begin);
    return true;
}

}  // namespace aloe

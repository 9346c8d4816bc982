#include "omp/loop_takeover.hpp"

#include "omp/interposer_settings.hpp"
#include "omp/trace_log.hpp"

#include <algorithm>

namespace aloe::omp {

namespace {

long base_kind(long kind) noexcept { return static_cast<long>(static_cast<unsigned long>(kind) & ~gfs_monotonic); }

// The kind and chunk the program asked for (`program`), runtime forms resolved.
void resolve_program_schedule(const loop_request& r, long& kind, long& chunk) {
    chunk = r.chunk;
    switch (r.form) {
        case loop_form::static_: kind = gfs_static; break;
        case loop_form::guided:
        case loop_form::nonmonotonic_guided: kind = gfs_guided; break;
        case loop_form::generic: kind = base_kind(r.sched); break;
        default: kind = is_runtime_form(r.form) ? gfs_runtime : gfs_dynamic; break;
    }
    if (kind == gfs_runtime) {
        int k = 0, c = 0;
        real().get_schedule(&k, &c);
        kind = base_kind(k);
        chunk = c;
    }
}

aloe::schedule translate(long kind, long chunk) {
    switch (kind) {
        case gfs_static: return chunk > 0 ? aloe::schedule::static_cyclic(chunk) : aloe::schedule::static_blocks();
        case gfs_dynamic: return aloe::schedule::dynamic(std::max(chunk, 1L));
        case gfs_guided: return aloe::schedule::guided(std::max(chunk, 1L));
        default: return aloe::schedule::static_blocks();  // auto: libgomp runs it as static
    }
}

// Loops whose clause (or entry point) promises each thread its chunks in increasing order.
bool requires_monotonic(const loop_request& r) {
    switch (r.form) {
        case loop_form::static_:
        case loop_form::dynamic:
        case loop_form::guided:
        case loop_form::runtime: return true;
        case loop_form::generic:
            return (static_cast<unsigned long>(r.sched) & gfs_monotonic) != 0 || base_kind(r.sched) == gfs_static;
        default: return false;
    }
}

// aloe schedules that hand each thread increasing chunks: a block, then chunks from one
// shared counter beyond every block. staggered, weighted and tasklets steal or reorder.
bool monotonic_safe(schedule_kind k) {
    return k == schedule_kind::static_block || k == schedule_kind::dynamic || k == schedule_kind::guided ||
           k == schedule_kind::hybrid;
}

}  // namespace

std::atomic<const char*> program_sets_schedule{nullptr};

loop_decision decide(omp_site& site, const loop_request& r, bool starting_region) {
    site.form.store(r.form, std::memory_order_relaxed);
    site.program_chunk.store(r.chunk, std::memory_order_relaxed);
    loop_decision d;
    if (r.must_forward != nullptr) {
        d.forward_reason = r.must_forward;
        return d;
    }
    if (!starting_region) {
        const thread_view& v = view();
        if (v.region == nullptr) {
            d.forward_reason = "outside a parallel region aloe started (serial or orphaned)";
            return d;
        }
        if (real().get_level() != v.level) {
            d.forward_reason = "in a region aloe did not start (task reductions, teams)";
            return d;
        }
    }
    const loop_choice& choice = site.rule != nullptr ? site.rule->choice : settings().default_choice;
    switch (choice.kind) {
        case loop_choice::kind_t::forward:
            d.forward_reason = site.rule != nullptr ? "rules file says forward" : "--schedule forward";
            return d;
        case loop_choice::kind_t::schedule: {
            const char* own = nullptr;
            if (is_runtime_form(r.form) || r.form == loop_form::generic)
                own = program_sets_schedule.load(std::memory_order_relaxed);
            if (own == nullptr && requires_monotonic(r) && !monotonic_safe(choice.spec.kind()))
                own = "monotonic loop: the chosen schedule steals, so the loop's own schedule ran";
            if (own == nullptr) {
                d.choice = &choice;
                return d;
            }
            site.note.store(own, std::memory_order_relaxed);
            static const loop_choice program{};
            d.choice = &program;
            resolve_program_schedule(r, d.kind, d.chunk);
            site.program_kind.store(d.kind, std::memory_order_relaxed);
            return d;
        }
        case loop_choice::kind_t::program:
            d.choice = &choice;
            resolve_program_schedule(r, d.kind, d.chunk);
            site.program_kind.store(d.kind, std::memory_order_relaxed);
            return d;
    }
    return d;
}

aloe::schedule schedule_for(omp_site& site, const loop_decision& d) {
    if (d.choice->kind == loop_choice::kind_t::schedule) return d.choice->spec;
    std::lock_guard lock(site.spec_mutex);
    if (site.spec_kind != d.kind || site.spec_chunk != d.chunk) {
        site.spec = translate(d.kind, d.chunk);
        site.spec_kind = d.kind;
        site.spec_chunk = d.chunk;
    }
    return site.spec;
}

void fill_slot(loop_slot& s, omp_site& site, const iteration_map& map, const loop_decision& d) {
    s.site = &site;
    s.map = map;
    s.engine.reset(map.count, schedule_for(site, d), *site.aloe_site);
    site.taken.fetch_add(1, std::memory_order_relaxed);
}

bool start_taken(omp_site& site, const iteration_map& map, const loop_decision& d, std::uint64_t& first,
                 std::uint64_t& last) {
    thread_view& v = view();
    loop_slot& s = join_loop(v, [&](loop_slot& slot) { fill_slot(slot, site, map, d); });
    v.loop = &s;
    v.loop_t0 = runtime::now_ticks();
    v.loop_iterations = 0;
    v.holding = false;
    v.loop_done = false;
    return next_taken(v, first, last);
}

void begin_forwarded(omp_site& site, const char* reason, std::uint64_t iterations) {
    thread_view& v = view();
    site.forward_reason.store(reason, std::memory_order_relaxed);
    if (v.thread == 0) {
        site.forwarded.fetch_add(1, std::memory_order_relaxed);
        site.forwarded_iterations.fetch_add(iterations, std::memory_order_relaxed);
    }
    v.forwarded = &site;
    v.forwarded_t0 = runtime::now_ticks();
    v.forwarded_iterations = iterations;
}

namespace {

// Leaves whichever loop the thread is in; true when it was a taken one.
bool leave_current_loop(thread_view& v) {
    if (loop_slot* s = v.loop) {
        if (tracing()) trace_event(trace_kind::loop_taken, *s->site, v.loop_t0, runtime::now_ticks(), v.thread,
                                   v.loop_iterations);
        v.loop = nullptr;
        leave_loop(*s, v.threads);
        return true;
    }
    if (omp_site* f = v.forwarded) {
        const runtime::ticks t1 = runtime::now_ticks();
        if (v.thread == 0) f->forwarded_ticks.fetch_add(t1 - v.forwarded_t0, std::memory_order_relaxed);
        if (tracing()) trace_event(trace_kind::loop_forwarded, *f, v.forwarded_t0, t1, v.thread, v.forwarded_iterations);
        v.forwarded = nullptr;
    }
    return false;
}

}  // namespace

void end_loop(bool barrier) {
    thread_view& v = view();
    const bool taken = leave_current_loop(v);
    const real_gomp& g = real();
    if (taken) {
        // libgomp never saw this loop: its end is the team barrier and nothing else.
        if (barrier) g.barrier();
        return;
    }
    if (barrier) g.loop_end();
    else g.loop_end_nowait();
}

bool end_loop_cancel() {
    thread_view& v = view();
    if (leave_current_loop(v)) return real().barrier_cancel();
    return real().loop_end_cancel();
}

}  // namespace aloe::omp

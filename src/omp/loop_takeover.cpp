#include "omp/loop_takeover.hpp"

#include "omp/interposer_settings.hpp"
#include "omp/trace_log.hpp"

#include <algorithm>

namespace aloe::omp {

namespace {

// Notes on sites whose own schedule ran instead of the chosen one.
constexpr const char* static_kept = "static schedule: OpenMP's static mapping kept";
constexpr const char* runtime_static_kept = "runtime schedule is static: OpenMP's static mapping kept";
constexpr const char* monotonic_kept = "monotonic loop: the chosen schedule steals, so the loop's own schedule ran";

// libgomp's omp_set_schedule normalisation: static without a chunk is blocks, dynamic and
// guided take at least 1.
long normal_chunk(long kind, long chunk) noexcept {
    if (kind == gfs_static) return chunk > 0 ? chunk : 0;
    return chunk > 0 ? chunk : 1;
}

const char* kind_word(long base) noexcept {
    switch (base) {
        case gfs_static: return "static";
        case gfs_dynamic: return "dynamic";
        case gfs_guided: return "guided";
        case gfs_auto: return "auto";
        case gfs_runtime: return "runtime";
        default: return nullptr;
    }
}

// "[monotonic:]kind[,chunk]" as OMP_SCHEDULE spells it; the flag for dynamic and guided only.
std::string kind_text(std::uint32_t raw, long chunk) {
    const gomp_kind k = split_kind(raw);
    const char* word = kind_word(k.base);
    if (word == nullptr) return "kind " + std::to_string(k.base);
    std::string text = k.monotonic && (k.base == gfs_dynamic || k.base == gfs_guided) ? "monotonic:" : "";
    text += word;
    if (k.base != gfs_auto && k.base != gfs_runtime && chunk > 0) text += "," + std::to_string(chunk);
    return text;
}

}  // namespace

bool reads_runtime_schedule(const loop_request& r) noexcept {
    if (is_runtime_form(r.form)) return true;
    if (r.form != loop_form::generic) return false;
    const long base = split_kind(r.sched).base;
    return base == gfs_runtime || base == gfs_auto;
}

program_schedule resolve_program_schedule(const loop_request& r, int runtime_kind, int runtime_chunk) noexcept {
    program_schedule p;
    if (reads_runtime_schedule(r)) {
        const gomp_kind rk = split_kind(runtime_kind);
        p.from_runtime = true;
        if (!known_kind(rk.base) || rk.base == gfs_runtime) {
            p.unknown = "omp_get_schedule() gave a kind aloe does not know";
            return p;
        }
        p.kind = rk.base;
        p.chunk = rk.base == gfs_auto ? 0 : normal_chunk(rk.base, runtime_chunk);
        // runtime: monotonic (GCC calls it for monotonic:runtime and ordered); the others
        // as the kind says (maybe_nonmonotonic, and generic without a modifier) or never.
        bool monotonic = rk.monotonic || rk.base == gfs_static;
        if (r.form == loop_form::runtime) monotonic = true;
        else if (r.form == loop_form::nonmonotonic_runtime) monotonic = false;
        else if (r.form == loop_form::generic) {
            const gomp_kind g = split_kind(r.sched);
            if (g.base == gfs_auto) monotonic = g.monotonic;  // nonmonotonic:runtime
            else monotonic = monotonic || g.monotonic;
        }
        p.monotonic = monotonic;
        return p;
    }
    switch (r.form) {
        case loop_form::static_: p.kind = gfs_static; p.monotonic = true; break;
        case loop_form::dynamic: p.kind = gfs_dynamic; p.monotonic = true; break;
        case loop_form::guided: p.kind = gfs_guided; p.monotonic = true; break;
        case loop_form::nonmonotonic_dynamic: p.kind = gfs_dynamic; break;
        case loop_form::nonmonotonic_guided: p.kind = gfs_guided; break;
        case loop_form::generic: {
            const gomp_kind g = split_kind(r.sched);
            if (g.base != gfs_static && g.base != gfs_dynamic && g.base != gfs_guided) {
                p.unknown = "GOMP_loop_start with a schedule kind aloe does not know";
                return p;
            }
            p.kind = g.base;
            p.monotonic = g.monotonic || g.base == gfs_static;
            break;
        }
        default:
            p.unknown = "not a loop aloe runs";
            return p;
    }
    p.chunk = normal_chunk(p.kind, r.chunk);
    return p;
}

aloe::schedule translate(long kind, long chunk) {
    const long c = std::min(chunk, max_aloe_chunk);
    switch (kind) {
        case gfs_static: return c > 0 ? aloe::schedule::static_cyclic(c) : aloe::schedule::static_blocks();
        case gfs_dynamic: return aloe::schedule::dynamic(std::max(c, 1L));
        case gfs_guided: return aloe::schedule::guided(std::max(c, 1L));
        default: return aloe::schedule::static_blocks();  // auto: libgomp runs it as static
    }
}

bool monotonic_safe(schedule_kind k) noexcept {
    return k == schedule_kind::static_block || k == schedule_kind::dynamic || k == schedule_kind::guided ||
           k == schedule_kind::hybrid;
}

schedule_pick pick_schedule(const loop_choice& choice, const program_schedule& p, bool program_set_schedule) noexcept {
    if (choice.kind != loop_choice::kind_t::schedule) return {true, nullptr};
    if (p.kind == gfs_static) return {true, p.from_runtime ? runtime_static_kept : static_kept};
    if (p.from_runtime && program_set_schedule) return {true, "the program sets its own schedule (omp_set_schedule)"};
    if (p.monotonic && !monotonic_safe(choice.spec.kind())) return {true, monotonic_kept};
    return {false, nullptr};
}

std::string asked_schedule_text(const omp_site& s) {
    const loop_form f = s.form.load(std::memory_order_relaxed);
    const long chunk = s.program_chunk.load(std::memory_order_relaxed);
    const std::string runtime =
        kind_text(s.runtime_kind.load(std::memory_order_relaxed), s.runtime_chunk.load(std::memory_order_relaxed));
    switch (f) {
        case loop_form::ordered:
        case loop_form::doacross: return to_string(f);
        case loop_form::generic: {
            const std::uint32_t raw = s.generic_sched.load(std::memory_order_relaxed);
            const gomp_kind g = split_kind(raw);
            std::string inner;
            if (g.base == gfs_runtime) inner = std::string(g.monotonic ? "monotonic:" : "") + "runtime: " + runtime;
            else if (g.base == gfs_auto) inner = "nonmonotonic:runtime: " + runtime;
            else if (g.base == gfs_static) inner = kind_text(raw, chunk);
            else inner = kind_text(raw, normal_chunk(g.base, chunk));
            return "generic (" + inner + ")";
        }
        default: break;
    }
    if (is_runtime_form(f)) return std::string(to_string(f)) + " (" + runtime + ")";
    std::string text = to_string(f);
    if (chunk > 0) text += "," + std::to_string(chunk);
    return text;
}

std::atomic<const char*> program_sets_schedule{nullptr};

// Stores `value` unless `field` holds it already (see omp_site: read, not written, when steady).
template <class T, class V>
void note(std::atomic<T>& field, V value) noexcept {
    const T v = static_cast<T>(value);
    if (field.load(std::memory_order_relaxed) != v) field.store(v, std::memory_order_relaxed);
}

namespace {

// The request as decision_cache keys it: everything decide() reads but the thread's region
// (checked on every call) and the iteration count (only a chunk beyond aloe's largest reads
// it, and such decisions are not kept).
struct cache_key {
    std::uint64_t form_and_flags;
    long chunk;
    std::uint64_t runtime;
};

cache_key key_of(const loop_request& r, int runtime_kind, int runtime_chunk, bool program_sets) noexcept {
    return {static_cast<std::uint64_t>(r.form) | (program_sets ? 0x100u : 0u) |
                (static_cast<std::uint64_t>(static_cast<std::uint32_t>(r.sched)) << 32),
            r.chunk,
            (static_cast<std::uint64_t>(static_cast<std::uint32_t>(runtime_kind)) << 32) |
                static_cast<std::uint32_t>(runtime_chunk)};
}

// Whether the cache's key is `k` (relaxed loads: a reader checks the seqlock around them).
[[gnu::always_inline]] inline bool holds_key(const omp_site::decision_cache& c, const cache_key& k) noexcept {
    return c.form_and_flags.load(std::memory_order_relaxed) == k.form_and_flags &&
           c.chunk.load(std::memory_order_relaxed) == k.chunk && c.runtime.load(std::memory_order_relaxed) == k.runtime;
}

// The cached decision for `k`, if the cache holds one (seqlock read: retried never, a
// writer in progress just means the slow way this once).
bool cached_decision(const omp_site::decision_cache& c, const cache_key& k, loop_decision& d) noexcept {
    const std::uint32_t seq = c.seq.load(std::memory_order_acquire);
    if ((seq & 1u) != 0) return false;
    const bool same = holds_key(c, k);
    d.choice = c.choice.load(std::memory_order_relaxed);
    d.kind = c.kind.load(std::memory_order_relaxed);
    d.chunk = c.run_chunk.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    return same && c.seq.load(std::memory_order_relaxed) == seq;
}

// The seqlock's write side: one writer at a time; one that finds another writing leaves it be.
template <class Write>
void write_cache(omp_site::decision_cache& c, Write&& write) noexcept {
    std::uint32_t seq = c.seq.load(std::memory_order_relaxed);
    if ((seq & 1u) != 0 || !c.seq.compare_exchange_strong(seq, seq + 1, std::memory_order_acquire)) return;
    std::atomic_thread_fence(std::memory_order_release);
    write();
    c.seq.store(seq + 2, std::memory_order_release);
}

void keep_decision(omp_site::decision_cache& c, const cache_key& k, const loop_decision& d) noexcept {
    write_cache(c, [&] {
        c.form_and_flags.store(k.form_and_flags, std::memory_order_relaxed);
        c.chunk.store(k.chunk, std::memory_order_relaxed);
        c.runtime.store(k.runtime, std::memory_order_relaxed);
        c.choice.store(d.choice, std::memory_order_relaxed);
        c.kind.store(d.kind, std::memory_order_relaxed);
        c.run_chunk.store(d.chunk, std::memory_order_relaxed);
    });
}

// The cache no longer answers a request other than `k` (whose notes decide() just wrote).
void forget_other_decision(omp_site::decision_cache& c, const cache_key& k) noexcept {
    if (c.form_and_flags.load(std::memory_order_relaxed) == ~std::uint64_t{0} || holds_key(c, k)) return;
    write_cache(c, [&] { c.form_and_flags.store(~std::uint64_t{0}, std::memory_order_relaxed); });
}

// Outside any region aloe started on this thread: the reason, or null.
const char* outside_aloe_region() {
    // The view is the innermost region aloe started on this thread; a region inside it
    // that aloe did not start, or one with no aloe region around it, has another level.
    const thread_view& v = view();
    const int level = real().get_level();
    if (v.region != nullptr && level == v.level) return nullptr;
    return level == 0 ? "outside any parallel region (serial code)"
                      : "in a region aloe did not start (task reductions, teams)";
}

// decide() without the cache; `keep`: the answer may be kept for the same request.
[[gnu::noinline]] loop_decision decide_anew(omp_site& site, const loop_request& r, bool starting_region, int runtime_kind,
                          int runtime_chunk, bool program_sets, bool& keep) {
    // What the program asked for, recorded whatever happens to the loop (the summary shows it).
    const program_schedule p = resolve_program_schedule(r, runtime_kind, runtime_chunk);
    note(site.form, r.form);
    note(site.program_chunk, r.chunk);
    if (r.form == loop_form::generic) note(site.generic_sched, static_cast<unsigned long>(r.sched));
    if (p.from_runtime) {
        note(site.runtime_kind, static_cast<std::uint32_t>(runtime_kind));
        note(site.runtime_chunk, runtime_chunk);
    }

    loop_decision d;
    if (r.must_forward != nullptr) {
        d.forward_reason = r.must_forward;
        return d;
    }
    if (!starting_region) {
        if ((d.forward_reason = outside_aloe_region()) != nullptr) return d;
    }
    const loop_choice& choice = site.rule != nullptr ? site.rule->choice : settings().default_choice;
    if (choice.kind == loop_choice::kind_t::forward) {
        d.forward_reason = site.rule != nullptr ? "rules file says forward" : "--schedule forward";
        return d;
    }
    const schedule_pick pick = pick_schedule(choice, p, program_sets);
    if (!pick.program) {
        d.choice = &choice;
        keep = true;
        return d;
    }
    // The loop's own schedule runs: it must be one aloe can run exactly.
    if (p.unknown != nullptr) {
        d.forward_reason = p.unknown;
        return d;
    }
    if (p.chunk > max_aloe_chunk && r.count > static_cast<std::uint64_t>(max_aloe_chunk)) {
        d.forward_reason = "a chunk beyond aloe's largest (2^40) on a loop of more iterations";
        return d;
    }
    if (pick.note != nullptr) site.note.store(pick.note, std::memory_order_relaxed);
    static const loop_choice program{};
    d.choice = choice.kind == loop_choice::kind_t::program ? &choice : &program;
    d.kind = p.kind;
    d.chunk = std::min(p.chunk, max_aloe_chunk);
    keep = p.chunk <= max_aloe_chunk;  // beyond it, the answer depends on the count
    return d;
}

}  // namespace

loop_decision decide(omp_site& site, const loop_request& r, bool starting_region) {
    int runtime_kind = 0, runtime_chunk = 0;
    if (reads_runtime_schedule(r)) real().get_schedule(&runtime_kind, &runtime_chunk);
    const bool program_sets = program_sets_schedule.load(std::memory_order_relaxed) != nullptr;
    const cache_key key = key_of(r, runtime_kind, runtime_chunk, program_sets);
    loop_decision d;
    if (r.must_forward == nullptr && cached_decision(site.decided, key, d)) [[likely]] {
        // The same request as the last taken loop here: the same answer (the site's notes
        // hold this request: a decision for another one forgets the cache).
        if (!starting_region) {
            if (const char* why = outside_aloe_region()) return {why, nullptr, gfs_dynamic, 1};
        }
        return d;
    }
    bool keep = false;
    d = decide_anew(site, r, starting_region, runtime_kind, runtime_chunk, program_sets, keep);
    if (keep) keep_decision(site.decided, key, d);
    else forget_other_decision(site.decided, key);
    return d;
}

aloe::schedule schedule_for(const loop_decision& d) {
    if (d.choice->kind == loop_choice::kind_t::schedule) return d.choice->spec;
    return translate(d.kind, d.chunk);
}

void fill_slot(loop_slot& s, omp_site& site, const iteration_map& map, const loop_decision& d) {
    s.site = &site;
    s.map = map;
    // The decision the engine was made for: the same schedule, no need to build its value.
    const bool same = s.made_for == d.choice && s.made_kind == d.kind && s.made_chunk == d.chunk;
    if (!same || !s.engine.rerun(map.count, *site.aloe_site)) {
        s.engine.reset(map.count, schedule_for(d), *site.aloe_site);
        s.made_for = d.choice;
        s.made_kind = d.kind;
        s.made_chunk = d.chunk;
    }
    site.taken.add(1);
}

taken_start start_taken(omp_site& site, const iteration_map& map, const loop_decision& d, std::uint64_t& first,
                        std::uint64_t& last) {
    thread_view& v = view();
    loop_slot* s = join_loop(v, [&](loop_slot& slot) {
        fill_slot(slot, site, map, d);
        v.region->loop_iterations.fetch_add(map.count, std::memory_order_relaxed);
    });
    if (s == nullptr) return taken_start::forward;
    enter_taken(v, *s);
    return next_taken(v, &first, &last) ? taken_start::chunk : taken_start::no_chunk;
}

void enter_taken(thread_view& v, loop_slot& s) {
    v.loop = &s;
    v.loop_t0 = runtime::now_ticks();
    v.map = s.map;
    v.step = s.engine.stepper_for(v.thread, v.threads);
    v.holding = false;
    v.loop_done = false;
}

bool next_taken_slow(thread_view& v, bool direct_ran_out, std::uint64_t& first, std::uint64_t& last) {
    const loop::shared_loop::stepper& st = v.step;
    const auto step = [&](loop::chunk& c) {
        if (v.loop_done) return false;  // its account is closed: claim nothing more
        return st.direct.next != nullptr ? loop::step_direct(st.direct, *st.part, c) : st.fn(st.sched, *st.part, c);
    };
    loop::chunk c;
    bool got = !direct_ran_out && step(c);
    for (;;) {
        if (got) {
            if (st.ends_in_order || c.end != v.map.count) break;
            v.held = c;  // the final chunk: kept until this thread has no other
            v.holding = true;
            got = step(c);
            continue;
        }
        if (v.holding) {
            c = v.held;
            v.holding = false;
            break;
        }
        if (!v.loop_done) {
            v.loop->engine.finish(v.thread);
            v.loop_done = true;
        }
        return false;
    }
    v.map.bounds(c, first, last);
    return true;
}

void begin_forwarded(omp_site& site, const char* reason, std::uint64_t iterations) {
    thread_view& v = view();
    site.forward_reason.store(reason, std::memory_order_relaxed);
    // libgomp's thread number, not the view's: in a region aloe did not start, every thread
    // has the view of the region around it (or none, thread 0), so each would count.
    v.forwarded_thread = real().get_thread_num();
    if (v.forwarded_thread == 0) {
        site.forwarded.add(1);
        site.forwarded_iterations.add(iterations);
        if (v.region != nullptr) v.region->loop_iterations.fetch_add(iterations, std::memory_order_relaxed);
    }
    v.forwarded = &site;
    v.forwarded_t0 = runtime::now_ticks();
    v.forwarded_iterations = iterations;
}

namespace {

// Leaves whichever loop the thread is in; true when it was a taken one.
bool leave_current_loop(thread_view& v) {
    if (loop_slot* s = v.loop) {
        if (tracing())
            trace_event(trace_kind::loop_taken, *s->site, v.loop_t0, runtime::now_ticks(), v.thread,
                        v.step.part->iterations());
        v.clear_loop();
        leave_loop(*v.region, *s, v.threads);
        return true;
    }
    if (omp_site* f = v.forwarded) {
        const runtime::ticks t1 = runtime::now_ticks();
        if (v.forwarded_thread == 0) f->forwarded_time.add(runtime::ticks_to_ns(t1 - v.forwarded_t0));
        if (tracing())
            trace_event(trace_kind::loop_forwarded, *f, v.forwarded_t0, t1, v.forwarded_thread, v.forwarded_iterations);
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

// The decision and the protocol for one worksharing loop at its start call: take it over
// (aloe's schedule hands out its chunks) or forward it to libgomp (timed, counted, unchanged).
//
// Every thread of the team decides alone, from inputs that are the same on every thread
// (the site's rule, the schedule setting, the entry point and its arguments), so all agree
// without talking; which aloe schedule runs is what the thread that fills the slot chose.
#pragma once

#include "omp/omp_site.hpp"
#include "omp/team_region.hpp"

#include <aloe/schedule.hpp>

#include <string>

namespace aloe::omp {

struct loop_request {
    loop_form form = loop_form::dynamic;
    long chunk = 0;             ///< chunked forms and generic (an ull chunk saturated: chunk_from_ull)
    long sched = gfs_runtime;   ///< generic: GOMP_loop_start's schedule argument, flag included
    const char* must_forward = nullptr;  ///< a reason the entry point already knows
    std::uint64_t count = 0;    ///< the loop's iterations
};

struct loop_decision {
    const char* forward_reason = nullptr;  ///< null: aloe takes it
    const loop_choice* choice = nullptr;   ///< what runs it: an aloe schedule, or `program`
    long kind = gfs_dynamic;               ///< `program`: the loop's own kind and chunk, resolved
    long chunk = 1;
};

/// The schedule a loop asked for, resolved: from its entry point, GOMP_loop_start's `sched`,
/// or run-sched-var (omp_get_schedule) for runtime loops.
struct program_schedule {
    long kind = gfs_dynamic;  ///< gfs_static, gfs_dynamic, gfs_guided or gfs_auto
    long chunk = 1;           ///< static: 0 = one block per thread; dynamic, guided: >= 1
    /// The loop promises each thread its chunks in increasing order (OpenMP's monotonic).
    bool monotonic = false;
    bool from_runtime = false;      ///< the kind came from run-sched-var
    const char* unknown = nullptr;  ///< a kind aloe does not know: forward, with this reason
};

/// Whether the loop reads run-sched-var: the runtime forms, and GOMP_loop_start with
/// gfs_runtime or gfs_auto (nonmonotonic:runtime).
bool reads_runtime_schedule(const loop_request& r) noexcept;

/// The loop's own schedule; `runtime_kind` and `runtime_chunk` are omp_get_schedule()'s
/// values (used only when reads_runtime_schedule). Chunks at or below 0 become 1 for dynamic
/// and guided and "no chunk" for static, as libgomp's omp_set_schedule normalises them.
program_schedule resolve_program_schedule(const loop_request& r, int runtime_kind, int runtime_chunk) noexcept;

/// The aloe schedule that runs a loop's own schedule: static keeps OpenMP's exact mapping
/// (blocks as libgomp cuts them, or chunk k to thread k mod p), dynamic and guided their
/// chunk, auto runs as libgomp runs it (static blocks).
aloe::schedule translate(long kind, long chunk);

/// The largest chunk aloe's schedules accept (aloe::max_schedule_chunk). A larger chunk
/// covers any loop of at most this many iterations, so it is lowered to this bound there; on
/// a longer loop it would change the mapping, and the loop is forwarded.
inline constexpr long max_aloe_chunk = aloe::max_schedule_chunk;

/// aloe schedules that hand each thread increasing chunks: a block, then chunks from one
/// shared counter beyond every block. staggered, weighted and tasklets steal or reorder,
/// and adaptive runs them.
bool monotonic_safe(schedule_kind k) noexcept;

/// Between the rule's aloe schedule (`choice`, kind_t::schedule) and the loop's own.
struct schedule_pick {
    bool program = false;         ///< the loop's own schedule runs
    const char* note = nullptr;   ///< why, for the site's note
};
/// The loop's own schedule runs when the program chose static (OpenMP fixes its mapping:
/// two static loops of the same count and chunk in a region give each thread the same
/// iterations, and GCC inlines schedule(static) loops with that mapping), when the program
/// set its runtime schedule with omp_set_schedule, and when the loop is monotonic and the
/// chosen schedule steals.
schedule_pick pick_schedule(const loop_choice& choice, const program_schedule& p, bool program_set_schedule) noexcept;

/// What the program asked for at `site`, for the summary: `dynamic,4`, `static`,
/// `runtime (monotonic:dynamic,4)`, `maybe_nonmonotonic_runtime (static,1)`,
/// `generic (guided,8)`, `ordered`. The flag is shown for dynamic and guided only (static
/// is monotonic anyway, and libgomp sets the flag on it).
std::string asked_schedule_text(const omp_site& site);

/// The aloe schedule a taken loop runs with: the choice's, or the program's own translated.
aloe::schedule schedule_for(const loop_decision& d);

/// Set when the program calls omp_set_schedule: its runtime loops then keep the schedule
/// it chose (the value says so in the statistics).
extern std::atomic<const char*> program_sets_schedule;

/// What to do with a loop starting at `site`. `starting_region`: the caller is about to
/// start the region (combined parallel loops), so no region view is needed.
loop_decision decide(omp_site& site, const loop_request& request, bool starting_region);

/// Fills slot `s` for a taken loop (the first thread to arrive, or the master of a
/// combined parallel loop).
void fill_slot(loop_slot& s, omp_site& site, const iteration_map& map, const loop_decision& d);

/// What start_taken() found: the thread's first chunk, no chunk for it, or a loop that must
/// go to libgomp after all (the region was cancelled: team_region.hpp, join_loop).
enum class taken_start { chunk, no_chunk, forward };

/// Why such a loop was forwarded (the statistics' reason).
inline constexpr const char* cancelled_region_reason =
    "the region was cancelled (cancel parallel) and a skipped loop holds its slot";

/// The calling thread enters the taken loop in slot `s` (its stepper and the loop's map).
void enter_taken(thread_view& v, loop_slot& s);

/// Taken loop: join the thread's next slot and take its first chunk.
taken_start start_taken(omp_site& site, const iteration_map& map, const loop_decision& d, std::uint64_t& first,
                        std::uint64_t& last);

/// Taken loop: the thread's next chunk; false when it has no more.
///
/// The chunk holding the loop's final iteration is handed out last by whichever thread gets
/// it: GCC's lastprivate code lets the thread whose last chunk ended at the loop's end copy
/// its values out, and a schedule that steals (staggered, weighted, tasklets) could
/// otherwise give that thread another chunk after the final one. libgomp's own schedules,
/// and aloe's that hand chunks out in order, never do (stepper::ends_in_order).
///
/// Per chunk of a `dynamic` loop: one fetch_add on the loop's counter (the driver's direct
/// claim), one increment on the participant's own line, the bounds written straight to the
/// caller's variables (`T`: the entry point's long or unsigned long long) with no stack
/// frame; every other schedule, the final chunk held back and the end are a tail call to
/// the out-of-line slow path. `direct_ran_out`: the direct claim found the counter exhausted
/// (claim no more).
bool next_taken_slow(thread_view& v, bool direct_ran_out, std::uint64_t& first, std::uint64_t& last);

// The caller's two pointers stay in the registers they came in (first, second argument):
// the fast path below then needs no moves.
template <class T>
[[gnu::noinline]] bool next_taken_slow_into(T* first, T* last, bool direct_ran_out, thread_view& v) {
    std::uint64_t f = 0, l = 0;
    if (!next_taken_slow(v, direct_ran_out, f, l)) return false;
    *first = static_cast<T>(f);
    *last = static_cast<T>(l);
    return true;
}

// next_taken once the caller knows the loop claims directly (v.step.direct.next is set).
template <class T>
[[gnu::always_inline]] inline bool next_taken_direct(thread_view& v, T* first, T* last) {
    const loop::shared_loop::stepper& st = v.step;
    std::uint64_t b, e;
    if (!loop::claim_direct(st.direct, *st.part, b, e)) [[unlikely]]
        return next_taken_slow_into(first, last, true, v);
    *first = static_cast<T>(v.map.start + b * v.map.incr);
    *last = static_cast<T>(e == v.map.count ? v.map.end : v.map.start + e * v.map.incr);
    return true;
}

template <class T>
[[gnu::always_inline]] inline bool next_taken(thread_view& v, T* first, T* last) {
    if (v.step.direct.next == nullptr) [[unlikely]]
        return next_taken_slow_into(first, last, false, v);
    return next_taken_direct(v, first, last);
}

/// Forwarded loop: counted (by OpenMP thread 0 of the team that runs it) and timed from
/// here to its end call.
void begin_forwarded(omp_site& site, const char* reason, std::uint64_t iterations);

/// GOMP_loop_end (barrier), _nowait and _cancel, for either kind of loop.
void end_loop(bool barrier);
bool end_loop_cancel();

}  // namespace aloe::omp

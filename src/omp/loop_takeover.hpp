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

namespace aloe::omp {

struct loop_request {
    loop_form form = loop_form::dynamic;
    long chunk = 0;             ///< chunked forms and generic
    long sched = gfs_runtime;   ///< generic: GOMP_loop_start's schedule argument
    const char* must_forward = nullptr;  ///< a reason the entry point already knows
};

struct loop_decision {
    const char* forward_reason = nullptr;  ///< null: aloe takes it
    const loop_choice* choice = nullptr;   ///< what runs it: an aloe schedule, or `program`
    long kind = gfs_dynamic;               ///< `program`: the loop's own kind and chunk, resolved
    long chunk = 1;
};

/// The aloe schedule a taken loop runs with: the choice's, or the program's own translated
/// (cached per site: building a schedule value parses its string).
aloe::schedule schedule_for(omp_site& site, const loop_decision& d);

/// Set when the program calls omp_set_schedule: its runtime loops then keep the schedule
/// it chose (the value says so in the statistics).
extern std::atomic<const char*> program_sets_schedule;

/// What to do with a loop starting at `site`. `starting_region`: the caller is about to
/// start the region (combined parallel loops), so no region view is needed.
loop_decision decide(omp_site& site, const loop_request& request, bool starting_region);

/// Fills slot `s` for a taken loop (the first thread to arrive, or the master of a
/// combined parallel loop).
void fill_slot(loop_slot& s, omp_site& site, const iteration_map& map, const loop_decision& d);

/// Taken loop: join the thread's next slot and take its first chunk.
bool start_taken(omp_site& site, const iteration_map& map, const loop_decision& d, std::uint64_t& first,
                 std::uint64_t& last);

/// Taken loop: the thread's next chunk; false when it has no more.
///
/// The chunk holding the loop's final iteration is handed out last by whichever thread gets
/// it: GCC's lastprivate code lets the thread whose last chunk ended at the loop's end copy
/// its values out, and a schedule that steals (staggered, hybrid, tasklets) could otherwise
/// give that thread another chunk after the final one. libgomp's own schedules never do.
inline bool next_taken(thread_view& v, std::uint64_t& first, std::uint64_t& last) {
    if (v.loop_done) return false;
    loop_slot& s = *v.loop;
    loop::chunk c;
    for (;;) {
        if (s.engine.claim(v.thread, v.threads, c)) {
            if (c.end != s.map.count) break;
            v.held = c;
            v.holding = true;
            continue;
        }
        if (v.holding) {
            c = v.held;
            v.holding = false;
            break;
        }
        s.engine.finish(v.thread);
        v.loop_done = true;
        return false;
    }
    v.loop_iterations += c.end - c.begin;
    s.map.bounds(c, first, last);
    return true;
}

/// Forwarded loop: counted (thread 0) and timed from here to its end call.
void begin_forwarded(omp_site& site, const char* reason, std::uint64_t iterations);

/// GOMP_loop_end (barrier), _nowait and _cancel, for either kind of loop.
void end_loop(bool barrier);
bool end_loop_cancel();

}  // namespace aloe::omp

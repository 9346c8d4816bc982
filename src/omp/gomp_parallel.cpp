// The GOMP entry points that start parallel regions, and omp_set_num_threads.
//
// Each region runs through region_entry (team_region.hpp) so that its threads know their
// region, with the team size region_threads() chooses. A combined parallel loop
// (GOMP_parallel_loop_<form>) that aloe takes over becomes a plain GOMP_parallel whose
// loop slot 0 is filled before the team starts: the threads' first call is the _next entry
// point, which finds it there. GOMP_parallel_reductions is not wrapped: libgomp reads the
// reduction descriptors through the body's data pointer; its loops are forwarded (the level
// check in decide()).
#include "omp/loop_takeover.hpp"

#include <aloe/export.h>


namespace aloe::omp {
namespace {

// GOMP_parallel and friends: `start` starts the team on region_entry with the given count.
template <class Start>
void run_region(const void* ra, region_body body, void* data, unsigned requested, Start&& start) {
    omp_site& site = site_at(ra, site_kind::region);
    team_region& r = acquire_region(site, body, data);
    const unsigned threads = region_threads(r, requested);
    const runtime::ticks t0 = runtime::now_ticks();
    start(r, threads);
    record_region(r, t0, runtime::now_ticks());
    release_region(r);
}

// A combined parallel loop, before its team starts: taken over → slot 0 holds it (true), the
// team starts as a plain region; forwarded → counted here (false), libgomp's combined entry
// starts the team.
bool preset_loop(team_region& r, omp_site& loop_site, const loop_request& req, const iteration_map& map) {
    loop_request counted = req;
    counted.count = map.count;
    const loop_decision d = decide(loop_site, counted, true);
    if (d.forward_reason == nullptr) {
        r.preset_loop = true;
        fill_slot(r.slots[0], loop_site, map, d);
        r.loop_iterations.fetch_add(map.count, std::memory_order_relaxed);
        r.slots[0].holds.store(1, std::memory_order_release);
        return true;
    }
    loop_site.forward_reason.store(d.forward_reason, std::memory_order_relaxed);
    loop_site.forwarded.add(1);
    loop_site.forwarded_iterations.add(map.count);
    return false;
}

template <class Forward>
void run_parallel_loop(const void* ra, region_body body, void* data, unsigned requested, unsigned flags,
                       const loop_request& req, const iteration_map& map, Forward&& forward) {
    omp_site& loop_site = site_at(ra, site_kind::loop);
    run_region(ra, body, data, requested, [&](team_region& r, unsigned threads) {
        if (preset_loop(r, loop_site, req, map)) {
            real().parallel(&region_entry, &r, threads, flags);
            return;
        }
        const runtime::ticks t0 = runtime::now_ticks();
        forward(r, threads);
        loop_site.forwarded_time.add(runtime::ticks_to_ns(runtime::now_ticks() - t0));
    });
}

// The old protocol: GOMP_parallel_start, the master runs the body, GOMP_parallel_end.
// The master's region and view wait on a per-thread stack between the two calls.
struct started_region {
    team_region* region;
    thread_view saved;
    runtime::ticks t0;
    runtime::ticks body_t0;
};
thread_local std::vector<started_region> started_regions;

// As run_region, up to the point where the master runs the body: `start` starts the team.
template <class Start>
void start_old_region(const void* ra, region_body body, void* data, unsigned requested, Start&& start) {
    omp_site& site = site_at(ra, site_kind::region);
    team_region& r = acquire_region(site, body, data);
    const unsigned threads = region_threads(r, requested);
    const runtime::ticks t0 = runtime::now_ticks();
    start(r, threads);
    const thread_view saved = enter_region_as_master(r);
    started_regions.push_back({&r, saved, t0, runtime::now_ticks()});
}

// The old combined starts: slot 0 preset and a plain start, or libgomp's own combined start.
template <class Forward>
void start_old_parallel_loop(const void* ra, region_body body, void* data, unsigned requested,
                             const loop_request& req, const iteration_map& map, Forward&& forward) {
    omp_site& loop_site = site_at(ra, site_kind::loop);
    start_old_region(ra, body, data, requested, [&](team_region& r, unsigned threads) {
        if (preset_loop(r, loop_site, req, map)) real().parallel_start(&region_entry, &r, threads);
        else forward(r, threads);
    });
}

}  // namespace
}  // namespace aloe::omp

using namespace aloe::omp;

extern "C" {

ALOE_API void GOMP_parallel(region_body body, void* data, unsigned num_threads, unsigned flags) {
    run_region(ALOE_RETURN_ADDRESS(), body, data, num_threads,
               [&](team_region& r, unsigned threads) { real().parallel(&region_entry, &r, threads, flags); });
}

ALOE_API void GOMP_parallel_sections(region_body body, void* data, unsigned num_threads, unsigned count,
                                     unsigned flags) {
    run_region(ALOE_RETURN_ADDRESS(), body, data, num_threads, [&](team_region& r, unsigned threads) {
        must<decltype(real().parallel_sections)>(reinterpret_cast<void*>(real().parallel_sections),
                                                 "GOMP_parallel_sections")(&region_entry, &r, threads, count, flags);
    });
}

ALOE_API void GOMP_parallel_start(region_body body, void* data, unsigned num_threads) {
    start_old_region(ALOE_RETURN_ADDRESS(), body, data, num_threads,
                     [](team_region& r, unsigned threads) { real().parallel_start(&region_entry, &r, threads); });
}

ALOE_API void GOMP_parallel_sections_start(region_body body, void* data, unsigned num_threads, unsigned count) {
    start_old_region(ALOE_RETURN_ADDRESS(), body, data, num_threads, [&](team_region& r, unsigned threads) {
        must<decltype(real().parallel_sections_start)>(reinterpret_cast<void*>(real().parallel_sections_start),
                                                       "GOMP_parallel_sections_start")(&region_entry, &r, threads,
                                                                                       count);
    });
}

ALOE_API void GOMP_parallel_end() {
    started_region s = started_regions.back();
    started_regions.pop_back();
    leave_region_as_master(*s.region, s.saved, s.body_t0);
    must<void (*)()>(reinterpret_cast<void*>(real().parallel_end), "GOMP_parallel_end")();
    record_region(*s.region, s.t0, aloe::runtime::now_ticks());
    release_region(*s.region);
}

// --- combined parallel loops ---------------------------------------------------------------

#define ALOE_COMBINED_CHUNKED(id, name)                                                                     \
    ALOE_API void GOMP_parallel_loop_##name(region_body body, void* data, unsigned num_threads, long start,   \
                                            long end, long incr, long chunk, unsigned flags) {              \
        run_parallel_loop(ALOE_RETURN_ADDRESS(), body, data, num_threads, flags,                            \
                          {loop_form::id, chunk, gfs_runtime, nullptr}, iteration_map::for_long(start, end, incr), \
                          [&](team_region& r, unsigned threads) {                                          \
                              must<combined_chunked>(real().combined[static_cast<std::size_t>(loop_form::id)], \
                                                     "GOMP_parallel_loop_" #name)(&region_entry, &r, threads, \
                                                                                  start, end, incr, chunk, flags); \
                          });                                                                              \
    }
ALOE_GOMP_CHUNKED_FORMS(ALOE_COMBINED_CHUNKED)
#undef ALOE_COMBINED_CHUNKED

#define ALOE_COMBINED_RUNTIME(id, name)                                                                     \
    ALOE_API void GOMP_parallel_loop_##name(region_body body, void* data, unsigned num_threads, long start,   \
                                            long end, long incr, unsigned flags) {                          \
        run_parallel_loop(ALOE_RETURN_ADDRESS(), body, data, num_threads, flags,                            \
                          {loop_form::id, 0, gfs_runtime, nullptr}, iteration_map::for_long(start, end, incr), \
                          [&](team_region& r, unsigned threads) {                                          \
                              must<combined_runtime>(real().combined[static_cast<std::size_t>(loop_form::id)], \
                                                     "GOMP_parallel_loop_" #name)(&region_entry, &r, threads, \
                                                                                  start, end, incr, flags); \
                          });                                                                              \
    }
ALOE_GOMP_RUNTIME_FORMS(ALOE_COMBINED_RUNTIME)
#undef ALOE_COMBINED_RUNTIME

// The pre-4.9 combined starts: the master runs the body, then GOMP_parallel_end.
#define ALOE_OLD_COMBINED_CHUNKED(id, name)                                                                 \
    ALOE_API void GOMP_parallel_loop_##name##_start(region_body body, void* data, unsigned num_threads,      \
                                                    long start, long end, long incr, long chunk) {          \
        start_old_parallel_loop(ALOE_RETURN_ADDRESS(), body, data, num_threads,                            \
                         {loop_form::id, chunk, gfs_runtime, nullptr}, iteration_map::for_long(start, end, incr), \
                         [&](team_region& r, unsigned threads) {                                           \
                             must<old_combined_chunked>(real().old_combined[static_cast<std::size_t>(loop_form::id)], \
                                                        "GOMP_parallel_loop_" #name "_start")(              \
                                 &region_entry, &r, threads, start, end, incr, chunk);                      \
                         });                                                                               \
    }
ALOE_GOMP_CLASSIC_CHUNKED_FORMS(ALOE_OLD_COMBINED_CHUNKED)
#undef ALOE_OLD_COMBINED_CHUNKED

ALOE_API void GOMP_parallel_loop_runtime_start(region_body body, void* data, unsigned num_threads, long start,
                                               long end, long incr) {
    start_old_parallel_loop(ALOE_RETURN_ADDRESS(), body, data, num_threads, {loop_form::runtime, 0, gfs_runtime, nullptr},
                            iteration_map::for_long(start, end, incr), [&](team_region& r, unsigned threads) {
        must<old_combined_runtime>(real().old_combined[static_cast<std::size_t>(loop_form::runtime)],
                                   "GOMP_parallel_loop_runtime_start")(&region_entry, &r, threads, start, end, incr);
    });
}

// --- the program choosing its own thread count -------------------------------------------------

ALOE_API void omp_set_num_threads(int n) {
    program_sets_threads.store("omp_set_num_threads", std::memory_order_relaxed);
    must<void (*)(int)>(reinterpret_cast<void*>(real().set_num_threads), "omp_set_num_threads")(n);
}

ALOE_API void omp_set_num_threads_(const int* n) {
    program_sets_threads.store("omp_set_num_threads (Fortran)", std::memory_order_relaxed);
    must<void (*)(const int*)>(reinterpret_cast<void*>(real().set_num_threads_f), "omp_set_num_threads_")(n);
}

// A program that reads a thread count outside its regions may size per-thread storage by
// it, or split its work by it: its regions take no borrowed cores from then on
// (team_region.cpp). The counts themselves are libgomp's. omp_get_num_threads() is not
// watched: read inside a region it is that region's count, the common case; a program that
// keeps it for a later region borrows only when asked to (team_region.cpp, auto).
ALOE_API int omp_get_max_threads() {
    note_program_reads_team_size("omp_get_max_threads");
    return real().get_max_threads();
}

ALOE_API int omp_get_max_threads_() { return omp_get_max_threads(); }

ALOE_API int omp_get_num_procs() {
    note_program_reads_team_size("omp_get_num_procs");
    static void* const fn = real_symbol("omp_get_num_procs");
    return must<int (*)()>(fn, "omp_get_num_procs")();
}

ALOE_API int omp_get_num_procs_() { return omp_get_num_procs(); }

ALOE_API int omp_get_thread_limit() {
    note_program_reads_team_size("omp_get_thread_limit");
    static void* const fn = real_symbol("omp_get_thread_limit");
    return must<int (*)()>(fn, "omp_get_thread_limit")();
}

ALOE_API int omp_get_thread_limit_() { return omp_get_thread_limit(); }

ALOE_API void omp_set_schedule(int kind, int chunk) {
    program_sets_schedule.store("the program sets its own schedule (omp_set_schedule)", std::memory_order_relaxed);
    static void* const fn = real_symbol("omp_set_schedule");
    must<void (*)(int, int)>(fn, "omp_set_schedule")(kind, chunk);
}

ALOE_API void omp_set_schedule_(const int* kind, const int* chunk) {
    program_sets_schedule.store("the program sets its own schedule (omp_set_schedule)", std::memory_order_relaxed);
    static void* const fn = real_symbol("omp_set_schedule_");
    must<void (*)(const int*, const int*)>(fn, "omp_set_schedule_")(kind, chunk);
}

ALOE_API void omp_set_schedule_8_(const int* kind, const long* chunk) {
    program_sets_schedule.store("the program sets its own schedule (omp_set_schedule)", std::memory_order_relaxed);
    static void* const fn = real_symbol("omp_set_schedule_8_");
    must<void (*)(const int*, const long*)>(fn, "omp_set_schedule_8_")(kind, chunk);
}

ALOE_API void omp_set_num_threads_8_(const long* n) {
    program_sets_threads.store("omp_set_num_threads (Fortran)", std::memory_order_relaxed);
    must<void (*)(const long*)>(reinterpret_cast<void*>(real().set_num_threads_f8), "omp_set_num_threads_8_")(n);
}

}  // extern "C"

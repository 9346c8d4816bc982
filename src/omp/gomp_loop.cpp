// The GOMP_loop_* entry points: each finds its site from its return address, decides
// (loop_takeover.hpp) and either runs aloe's schedule or calls libgomp's own function.
// `ull` twins map unsigned long long loops the same way (a chunk above LONG_MAX saturates).
// Ordered and doacross loops are always forwarded (their chunks are tied to libgomp's
// ordering and dependence machinery); their start calls are wrapped only to count and time
// them.
#include "omp/loop_takeover.hpp"

#include <aloe/export.h>


namespace aloe::omp {
namespace {

template <class Start, class... Args>
bool forwarded_start(omp_site& site, const char* reason, std::uint64_t iterations, void* fn, const char* name,
                     Args... args) {
    begin_forwarded(site, reason, iterations);
    return must<Start>(fn, name)(args...);
}

// A start entry point: take the loop over (its first chunk into istart/iend) or call libgomp's
// `real_fn` with the entry point's own arguments.
template <class T>
bool take_or_forward(const void* ra, const loop_request& req, const iteration_map& map, void* real_fn,
                     const char* name, T* istart, T* iend, auto... forward_args) {
    omp_site& site = site_at(ra, site_kind::loop);
    loop_request counted = req;
    counted.count = map.count;
    const loop_decision d = decide(site, counted, false);
    const auto forward = [&](const char* reason) {
        begin_forwarded(site, reason, map.count);
        using fn_t = bool (*)(decltype(forward_args)...);
        return must<fn_t>(real_fn, name)(forward_args...);
    };
    if (d.forward_reason != nullptr) return forward(d.forward_reason);
    std::uint64_t first = 0, last = 0;
    switch (start_taken(site, map, d, first, last)) {
        case taken_start::forward: return forward(cancelled_region_reason);
        case taken_start::no_chunk: return false;
        case taken_start::chunk: break;
    }
    *istart = static_cast<T>(first);
    *iend = static_cast<T>(last);
    return true;
}

// A next call: the taken loop's chunk, else libgomp's `Real` entry point (its table is read
// only on that path).
template <class T, class Real>
[[gnu::noinline]] bool forward_next(T* istart, T* iend, Real real_fn, const char* name) {
    return must<bool (*)(T*, T*)>(real_fn(), name)(istart, iend);
}

// Both paths end in a tail call or a return with no stack frame: a load of the view's loop,
// a test, then the direct claim inline, or a jump.
template <class T, class Real>
bool next_or_forward(T* istart, T* iend, Real real_fn, const char* name) {
    thread_view& v = view();
    // A taken dynamic loop: its direct counter is set (null outside any taken loop).
    if (v.step.direct.next != nullptr) [[likely]]
        return next_taken_direct(v, istart, iend);  // inline: loop_takeover.hpp
    if (v.loop != nullptr) return next_taken_slow_into(istart, iend, false, v);
    return forward_next(istart, iend, real_fn, name);
}

constexpr std::size_t at(loop_form f) { return static_cast<std::size_t>(f); }

const char* generic_reason(const std::uintptr_t* reductions, void* const* mem, const void* istart) {
    if (reductions != nullptr) return "task reduction (libgomp owns the reduction's storage)";
    if (mem != nullptr) return "conditional lastprivate or scan (libgomp owns the loop's memory)";
    if (istart == nullptr) return "setup-only start";
    return nullptr;
}

std::uint64_t doacross_iterations(unsigned n, const auto* counts) {
    std::uint64_t total = n == 0 ? 0 : 1;
    for (unsigned i = 0; i < n; ++i) total *= static_cast<std::uint64_t>(counts[i]);
    return total;
}

constexpr const char* ordered_reason = "ordered (libgomp sequences the ordered regions)";
constexpr const char* doacross_reason = "doacross (libgomp tracks the dependences)";

}  // namespace
}  // namespace aloe::omp

using namespace aloe::omp;

extern "C" {

// --- long loops that can be taken over ---------------------------------------------------

#define ALOE_CHUNKED_LONG(id, name)                                                                  \
    ALOE_API bool GOMP_loop_##name##_start(long start, long end, long incr, long chunk, long* istart, \
                                           long* iend) {                                            \
        return take_or_forward(ALOE_RETURN_ADDRESS(), {loop_form::id, chunk, gfs_runtime, nullptr}, iteration_map::for_long(start, end, incr), \
                          real().start[at(loop_form::id)], "GOMP_loop_" #name "_start", istart, iend, start, end, \
                          incr, chunk, istart, iend);                                                 \
    }                                                                                                \
    ALOE_API bool GOMP_loop_##name##_next(long* istart, long* iend) {                                \
        return next_or_forward(istart, iend, [] { return real().next[at(loop_form::id)]; }, "GOMP_loop_" #name "_next"); \
    }
ALOE_GOMP_CHUNKED_FORMS(ALOE_CHUNKED_LONG)
#undef ALOE_CHUNKED_LONG

#define ALOE_RUNTIME_LONG(id, name)                                                                   \
    ALOE_API bool GOMP_loop_##name##_start(long start, long end, long incr, long* istart, long* iend) { \
        return take_or_forward(ALOE_RETURN_ADDRESS(), {loop_form::id, 0, gfs_runtime, nullptr}, iteration_map::for_long(start, end, incr),  \
                          real().start[at(loop_form::id)], "GOMP_loop_" #name "_start", istart, iend, start, end, \
                          incr, istart, iend);                                                        \
    }                                                                                                 \
    ALOE_API bool GOMP_loop_##name##_next(long* istart, long* iend) {                                 \
        return next_or_forward(istart, iend, [] { return real().next[at(loop_form::id)]; }, "GOMP_loop_" #name "_next"); \
    }
ALOE_GOMP_RUNTIME_FORMS(ALOE_RUNTIME_LONG)
#undef ALOE_RUNTIME_LONG

ALOE_API bool GOMP_loop_start(long start, long end, long incr, long sched, long chunk, long* istart, long* iend,
                              std::uintptr_t* reductions, void** mem) {
    return take_or_forward(ALOE_RETURN_ADDRESS(), {loop_form::generic, chunk, sched, generic_reason(reductions, mem, istart)}, iteration_map::for_long(start, end, incr), real().start[at(loop_form::generic)], "GOMP_loop_start", istart, iend, start,
                      end, incr, sched, chunk, istart, iend, reductions, mem);
}

// --- unsigned long long loops --------------------------------------------------------------

#define ALOE_CHUNKED_ULL(id, name)                                                                         \
    ALOE_API bool GOMP_loop_ull_##name##_start(bool up, ull start, ull end, ull incr, ull chunk, ull* istart, \
                                               ull* iend) {                                                \
        return take_or_forward(ALOE_RETURN_ADDRESS(), {loop_form::id, chunk_from_ull(chunk), gfs_runtime, nullptr}, \
                               iteration_map::for_ull(up, start, end, incr), real().ull_start[at(loop_form::id)], \
                               "GOMP_loop_ull_" #name "_start", istart, iend, up, start, end, incr, chunk, istart, iend); \
    }                                                                                                       \
    ALOE_API bool GOMP_loop_ull_##name##_next(ull* istart, ull* iend) {                                     \
        return next_or_forward(istart, iend, [] { return real().ull_next[at(loop_form::id)]; }, "GOMP_loop_ull_" #name "_next"); \
    }
ALOE_GOMP_CHUNKED_FORMS(ALOE_CHUNKED_ULL)
#undef ALOE_CHUNKED_ULL

#define ALOE_RUNTIME_ULL(id, name)                                                                          \
    ALOE_API bool GOMP_loop_ull_##name##_start(bool up, ull start, ull end, ull incr, ull* istart, ull* iend) { \
        return take_or_forward(ALOE_RETURN_ADDRESS(), {loop_form::id, 0, gfs_runtime, nullptr}, iteration_map::for_ull(up, start, end, incr),  \
                         real().ull_start[at(loop_form::id)], "GOMP_loop_ull_" #name "_start", istart, iend, up, \
                         start, end, incr, istart, iend);                                                    \
    }                                                                                                        \
    ALOE_API bool GOMP_loop_ull_##name##_next(ull* istart, ull* iend) {                                      \
        return next_or_forward(istart, iend, [] { return real().ull_next[at(loop_form::id)]; }, "GOMP_loop_ull_" #name "_next"); \
    }
ALOE_GOMP_RUNTIME_FORMS(ALOE_RUNTIME_ULL)
#undef ALOE_RUNTIME_ULL

ALOE_API bool GOMP_loop_ull_start(bool up, ull start, ull end, ull incr, long sched, ull chunk, ull* istart, ull* iend,
                                  std::uintptr_t* reductions, void** mem) {
    return take_or_forward(ALOE_RETURN_ADDRESS(), {loop_form::generic, chunk_from_ull(chunk), sched, generic_reason(reductions, mem, istart)}, iteration_map::for_ull(up, start, end, incr), real().ull_start[at(loop_form::generic)], "GOMP_loop_ull_start", istart, iend,
                     up, start, end, incr, sched, chunk, istart, iend, reductions, mem);
}

// --- ends ------------------------------------------------------------------------------------

ALOE_API void GOMP_loop_end() { end_loop(true); }
ALOE_API void GOMP_loop_end_nowait() { end_loop(false); }
ALOE_API bool GOMP_loop_end_cancel() { return end_loop_cancel(); }

// --- ordered and doacross: forwarded, counted -------------------------------------------------

#define ALOE_FORWARD_COUNTED(symbol, form_value, reason, iterations, signature, ...)                         \
    ALOE_API bool symbol signature {                                                                   \
        static void* const fn = real_symbol(#symbol);                                                   \
        omp_site& site = site_at(ALOE_RETURN_ADDRESS(), site_kind::loop);                               \
        site.form.store(form_value, std::memory_order_relaxed);                                              \
        begin_forwarded(site, reason, iterations);                                                     \
        return must<decltype(&symbol)>(fn, #symbol)(__VA_ARGS__);                                      \
    }

#define ALOE_ORDERED_CHUNKED(id, name)                                                                       \
    ALOE_FORWARD_COUNTED(GOMP_loop_ordered_##name##_start, loop_form::ordered, ordered_reason,               \
                         iteration_map::for_long(start, end, incr).count,                                    \
                         (long start, long end, long incr, long chunk, long* istart, long* iend), start, end, \
                         incr, chunk, istart, iend)                                                          \
    ALOE_FORWARD_COUNTED(GOMP_loop_ull_ordered_##name##_start, loop_form::ordered, ordered_reason,           \
                         iteration_map::for_ull(up, start, end, incr).count,                                 \
                         (bool up, ull start, ull end, ull incr, ull chunk, ull* istart, ull* iend), up, start, \
                         end, incr, chunk, istart, iend)                                                     \
    ALOE_FORWARD_COUNTED(GOMP_loop_doacross_##name##_start, loop_form::doacross, doacross_reason,            \
                         doacross_iterations(ncounts, counts),                                               \
                         (unsigned ncounts, long* counts, long chunk, long* istart, long* iend), ncounts,     \
                         counts, chunk, istart, iend)                                                        \
    ALOE_FORWARD_COUNTED(GOMP_loop_ull_doacross_##name##_start, loop_form::doacross, doacross_reason,        \
                         doacross_iterations(ncounts, counts),                                               \
                         (unsigned ncounts, ull* counts, ull chunk, ull* istart, ull* iend), ncounts, counts, \
                         chunk, istart, iend)
ALOE_GOMP_CLASSIC_CHUNKED_FORMS(ALOE_ORDERED_CHUNKED)
#undef ALOE_ORDERED_CHUNKED

ALOE_FORWARD_COUNTED(GOMP_loop_ordered_runtime_start, loop_form::ordered, ordered_reason,
                     iteration_map::for_long(start, end, incr).count,
                     (long start, long end, long incr, long* istart, long* iend), start, end, incr, istart, iend)
ALOE_FORWARD_COUNTED(GOMP_loop_ull_ordered_runtime_start, loop_form::ordered, ordered_reason,
                     iteration_map::for_ull(up, start, end, incr).count,
                     (bool up, ull start, ull end, ull incr, ull* istart, ull* iend), up, start, end, incr, istart,
                     iend)
ALOE_FORWARD_COUNTED(GOMP_loop_ordered_start, loop_form::ordered, ordered_reason,
                     iteration_map::for_long(start, end, incr).count,
                     (long start, long end, long incr, long sched, long chunk, long* istart, long* iend,
                      std::uintptr_t* reductions, void** mem),
                     start, end, incr, sched, chunk, istart, iend, reductions, mem)
ALOE_FORWARD_COUNTED(GOMP_loop_ull_ordered_start, loop_form::ordered, ordered_reason,
                     iteration_map::for_ull(up, start, end, incr).count,
                     (bool up, ull start, ull end, ull incr, long sched, ull chunk, ull* istart, ull* iend,
                      std::uintptr_t* reductions, void** mem),
                     up, start, end, incr, sched, chunk, istart, iend, reductions, mem)
ALOE_FORWARD_COUNTED(GOMP_loop_doacross_runtime_start, loop_form::doacross, doacross_reason,
                     doacross_iterations(ncounts, counts), (unsigned ncounts, long* counts, long* istart, long* iend),
                     ncounts, counts, istart, iend)
ALOE_FORWARD_COUNTED(GOMP_loop_ull_doacross_runtime_start, loop_form::doacross, doacross_reason,
                     doacross_iterations(ncounts, counts), (unsigned ncounts, ull* counts, ull* istart, ull* iend),
                     ncounts, counts, istart, iend)
ALOE_FORWARD_COUNTED(GOMP_loop_doacross_start, loop_form::doacross, doacross_reason,
                     doacross_iterations(ncounts, counts),
                     (unsigned ncounts, long* counts, long sched, long chunk, long* istart, long* iend,
                      std::uintptr_t* reductions, void** mem),
                     ncounts, counts, sched, chunk, istart, iend, reductions, mem)
ALOE_FORWARD_COUNTED(GOMP_loop_ull_doacross_start, loop_form::doacross, doacross_reason,
                     doacross_iterations(ncounts, counts),
                     (unsigned ncounts, ull* counts, long sched, ull chunk, ull* istart, ull* iend,
                      std::uintptr_t* reductions, void** mem),
                     ncounts, counts, sched, chunk, istart, iend, reductions, mem)
#undef ALOE_FORWARD_COUNTED

}  // extern "C"

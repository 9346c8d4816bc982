// The part of GNU libgomp's ABI (libgomp_g.h, GCC 4.9 to 14) the interposer touches, and the
// real entry points it forwards to, found once with dlsym(RTLD_NEXT).
//
// Loop entry points come in families ("forms"): GOMP_loop_<form>_start/_next, their
// unsigned long long twins GOMP_loop_ull_<form>_start/_next, and the combined
// GOMP_parallel_loop_<form>. Forms with a chunk argument and the runtime forms (no chunk)
// have different signatures, hence two lists.
#pragma once

#include <atomic>
#include <climits>
#include <cstdint>

// The address a GOMP_* entry point returns to: it names the call site (omp_site.hpp).
#define ALOE_RETURN_ADDRESS() __builtin_extract_return_addr(__builtin_return_address(0))

namespace aloe::omp {

using region_body = void (*)(void*);
using ull = unsigned long long;

// X(enumerator, name in the symbol): `static` is a keyword, hence two columns.
#define ALOE_GOMP_CHUNKED_FORMS(X)                                                              \
    X(static_, static) X(dynamic, dynamic) X(guided, guided) X(nonmonotonic_dynamic, nonmonotonic_dynamic) \
    X(nonmonotonic_guided, nonmonotonic_guided)
#define ALOE_GOMP_RUNTIME_FORMS(X) \
    X(runtime, runtime) X(nonmonotonic_runtime, nonmonotonic_runtime) X(maybe_nonmonotonic_runtime, maybe_nonmonotonic_runtime)
// The three classic forms: the only ones with ordered, doacross and the old (pre-4.9)
// GOMP_parallel_loop_<form>_start entry points.
#define ALOE_GOMP_CLASSIC_CHUNKED_FORMS(X) X(static_, static) X(dynamic, dynamic) X(guided, guided)

/// The schedule a loop asked for, as the entry point it called says.
enum class loop_form : std::uint8_t {
#define ALOE_FORM_ENUM(id, name) id,
    ALOE_GOMP_CHUNKED_FORMS(ALOE_FORM_ENUM) ALOE_GOMP_RUNTIME_FORMS(ALOE_FORM_ENUM)
#undef ALOE_FORM_ENUM
    generic,   ///< GOMP_loop_start / GOMP_loop_ull_start (GCC 9+): the schedule is an argument
    ordered,   ///< GOMP_loop_ordered_*: always forwarded
    doacross,  ///< GOMP_loop_doacross_*: always forwarded
};
inline constexpr int form_count = static_cast<int>(loop_form::doacross) + 1;

const char* to_string(loop_form f) noexcept;
inline bool is_runtime_form(loop_form f) noexcept {
    return f == loop_form::runtime || f == loop_form::nonmonotonic_runtime || f == loop_form::maybe_nonmonotonic_runtime;
}

/// libgomp's schedule numbers (GOMP_loop_start's `sched`, omp_get_schedule's kind).
/// In GOMP_loop_start, gfs_runtime is `schedule(runtime)` without a modifier and gfs_auto is
/// `schedule(nonmonotonic:runtime)` (libgomp's gomp_adjust_sched reads both from
/// run-sched-var); `schedule(auto)` never reaches libgomp (GCC runs it as static).
enum gomp_schedule : long { gfs_runtime = 0, gfs_static = 1, gfs_dynamic = 2, gfs_guided = 3, gfs_auto = 4 };
inline constexpr std::uint32_t gfs_monotonic = 0x80000000U;

/// A schedule kind split into its kind and libgomp's monotonic flag (bit 31). Kinds arrive
/// as int (omp_get_schedule: the flag makes the value negative) and as long (GOMP_loop_start's
/// `sched`, a 32-bit pattern); both are read as libgomp reads them, by their low 32 bits, so
/// no sign extension ever reaches the mask.
struct gomp_kind {
    long base = gfs_runtime;  ///< the kind without the flag; anything above gfs_auto is unknown
    bool monotonic = false;
};
constexpr gomp_kind split_kind(long kind) noexcept {
    const auto bits = static_cast<std::uint32_t>(static_cast<unsigned long>(kind));
    return {static_cast<long>(bits & ~gfs_monotonic), (bits & gfs_monotonic) != 0};
}
constexpr bool known_kind(long base) noexcept { return base >= gfs_runtime && base <= gfs_auto; }

/// An unsigned long long chunk (GOMP_loop_ull_*) as the long the decision works with:
/// saturated at LONG_MAX (a chunk that large already covers any loop aloe can run), never
/// wrapped to a negative value.
constexpr long chunk_from_ull(unsigned long long chunk) noexcept {
    constexpr auto most = static_cast<unsigned long long>(LONG_MAX);
    return static_cast<long>(chunk > most ? most : chunk);
}

using chunked_start = bool (*)(long, long, long, long, long*, long*);
using runtime_start = bool (*)(long, long, long, long*, long*);
using next_fn = bool (*)(long*, long*);
using ull_chunked_start = bool (*)(bool, ull, ull, ull, ull, ull*, ull*);
using ull_runtime_start = bool (*)(bool, ull, ull, ull, ull*, ull*);
using ull_next_fn = bool (*)(ull*, ull*);
using combined_chunked = void (*)(region_body, void*, unsigned, long, long, long, long, unsigned);
using combined_runtime = void (*)(region_body, void*, unsigned, long, long, long, unsigned);
using old_combined_chunked = void (*)(region_body, void*, unsigned, long, long, long, long);
using old_combined_runtime = void (*)(region_body, void*, unsigned, long, long, long);
using generic_start = bool (*)(long, long, long, long, long, long*, long*, std::uintptr_t*, void**);
using ull_generic_start = bool (*)(bool, ull, ull, ull, long, ull, ull*, ull*, std::uintptr_t*, void**);

struct real_gomp {
    void (*parallel)(region_body, void*, unsigned, unsigned) = nullptr;
    void (*parallel_start)(region_body, void*, unsigned) = nullptr;
    void (*parallel_end)() = nullptr;
    void (*parallel_sections)(region_body, void*, unsigned, unsigned, unsigned) = nullptr;
    void (*parallel_sections_start)(region_body, void*, unsigned, unsigned) = nullptr;
    void (*barrier)() = nullptr;
    bool (*barrier_cancel)() = nullptr;
    void (*loop_end)() = nullptr;
    void (*loop_end_nowait)() = nullptr;
    bool (*loop_end_cancel)() = nullptr;
    int (*get_thread_num)() = nullptr;
    int (*get_num_threads)() = nullptr;
    int (*get_max_threads)() = nullptr;
    int (*get_level)() = nullptr;
    void (*get_schedule)(int*, int*) = nullptr;
    bool (*cancellation_point)(int) = nullptr;  ///< GOMP_cancellation_point(which)
    void (*set_num_threads)(int) = nullptr;
    void (*set_num_threads_f)(const int*) = nullptr;
    void (*set_num_threads_f8)(const long*) = nullptr;

    // Indexed by loop_form (only the forms that have the entry point are filled).
    void* start[form_count] = {};
    void* next[form_count] = {};
    void* ull_start[form_count] = {};
    void* ull_next[form_count] = {};
    void* combined[form_count] = {};
    void* old_combined[form_count] = {};
};

namespace detail {
extern real_gomp real_table;
extern std::atomic<bool> real_loaded;
void load_real();
}  // namespace detail

/// The real libgomp, loaded on first use (inline: every forwarded call passes here). A
/// missing entry point the program calls is a fatal error naming it (it can only happen
/// with a libgomp older than the program).
inline const real_gomp& real() {
    if (!detail::real_loaded.load(std::memory_order_acquire)) [[unlikely]] detail::load_real();
    return detail::real_table;
}

/// Any other libgomp symbol (entry points only forwarded, looked up once by their wrapper).
void* real_symbol(const char* name);

/// Calls `fn` after checking it was found; `name` is for the message.
template <class F>
F must(void* fn, const char* name) {
    extern void missing_entry_point(const char* name);
    if (fn == nullptr) [[unlikely]] missing_entry_point(name);
    return reinterpret_cast<F>(fn);
}

}  // namespace aloe::omp

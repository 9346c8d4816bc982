/// @file parallel_for.hpp
/// Runs a loop on a team with a schedule.
///
/// The body takes either one index, `body(std::int64_t i)`, or a run of iterations plus the
/// thread running it, `body(aloe::subrange r, int thread)`.
///
/// Semantics:
/// - every iteration runs exactly once, whatever the schedule and thread count;
/// - an exception thrown by the body is captured (the first one wins), the other
///   iterations still run (with an index body, even the rest of the throwing chunk), and it
///   is rethrown to the caller after the loop; the team stays usable;
/// - a parallel_for started from inside a body, or on a team busy with another loop, runs
///   serially on the calling thread (it never deadlocks and never oversubscribes);
/// - `step` must not be 0 (aloe::error); ranges may touch INT64_MIN/INT64_MAX.
///
/// Example:
/// @code
///   aloe::parallel_for(0, n, "hybrid,fs=0.8", [&](std::int64_t i) { y[i] += a * x[i]; });
///   aloe::parallel_for(0, n, "staggered,fs=0.9,chunk=4", [&](aloe::subrange r, int) {
///       for (std::int64_t i : r) y[i] = f(i);
///   });
/// @endcode
#pragma once

#include <aloe/error.hpp>
#include <aloe/export.h>
#include <aloe/loop_site.hpp>
#include <aloe/schedule.hpp>
#include <aloe/subrange.hpp>
#include <aloe/team.hpp>

#define ALOE_DETAIL_ALLOWED
#include <aloe/detail/iteration_space.hpp>
#include <aloe/detail/site_schedule.hpp>
#undef ALOE_DETAIL_ALLOWED

#include <atomic>
#include <cstdint>
#include <exception>
#include <string_view>
#include <type_traits>
#include <utility>

namespace aloe {

namespace detail {

/// Runs logical iterations [lo, hi) for `thread`. Never throws: adapters catch.
using chunk_fn = void (*)(void* ctx, std::uint64_t lo, std::uint64_t hi, int thread) noexcept;

/// Compiled entry point: spreads space.count logical iterations over `t` with `s`.
ALOE_API void run_loop(team& t, const iteration_space& space, const schedule& s, const loop_site& site,
                       chunk_fn fn, void* ctx);

/// The schedule ALOE_SCHEDULE names, parsed once per process.
ALOE_API const schedule& environment_schedule();

/// Holds the first exception thrown by any iteration of one loop.
class exception_slot {
public:
    void capture() noexcept {
        if (!taken_.exchange(true, std::memory_order_acq_rel)) error_ = std::current_exception();
    }
    void rethrow_if_any() const {
        if (error_) std::rethrow_exception(error_);
    }

private:
    std::atomic<bool> taken_{false};
    std::exception_ptr error_;
};

template <class Body>
inline constexpr bool is_index_body = std::is_invocable_v<Body&, std::int64_t>;
template <class Body>
inline constexpr bool is_subrange_body = std::is_invocable_v<Body&, subrange, int>;

template <class Body>
struct body_adapter {
    const iteration_space& space;
    Body& body;
    exception_slot slot;

    static void run(void* ctx, std::uint64_t lo, std::uint64_t hi, int thread) noexcept {
        auto& self = *static_cast<body_adapter*>(ctx);
        if constexpr (is_index_body<Body>) {
            (void)thread;
            // Locals, not self.*: the body may write memory the compiler cannot prove apart
            // from the adapter, which would reload first and step every iteration.
            Body& body = self.body;
            const auto first = static_cast<std::uint64_t>(self.space.first);
            const auto step = static_cast<std::uint64_t>(self.space.step);
            std::uint64_t i = lo;
            while (i < hi) {
                // The try block costs nothing until something throws; after a throw the
                // rest of the chunk still runs, so every iteration runs exactly once.
                try {
                    for (; i < hi; ++i) body(static_cast<std::int64_t>(first + i * step));
                } catch (...) {
                    self.slot.capture();
                    ++i;
                }
            }
        } else {
            try {
                self.body(subrange(self.space.index(lo), self.space.bound(hi), self.space.step, hi - lo), thread);
            } catch (...) {
                self.slot.capture();
            }
        }
    }
};

}  // namespace detail

/// Runs body over first, first+step, … (excluding `last`) on team `t` with schedule `s`.
/// Cost: one fork and one join of the team plus the schedule's per-chunk cost.
template <class Body>
void parallel_for(team& t, std::int64_t first, std::int64_t last, std::int64_t step, const schedule& s,
                  Body&& body, loop_site site = {}) {
    static_assert(detail::is_index_body<Body> || detail::is_subrange_body<Body>,
                  "aloe::parallel_for: the body must be callable as body(std::int64_t) or "
                  "body(aloe::subrange, int)");
    if (step == 0) throw error("aloe::parallel_for: step must not be 0");
    const auto space = detail::iteration_space::make(first, last, step);
    detail::body_adapter<std::remove_reference_t<Body>> adapter{space, body, {}};
    detail::run_loop(t, space, s, site, &decltype(adapter)::run, &adapter);
    adapter.slot.rethrow_if_any();
}

/// As above, with step 1.
template <class Body>
void parallel_for(team& t, std::int64_t first, std::int64_t last, const schedule& s, Body&& body,
                  loop_site site = {}) {
    parallel_for(t, first, last, 1, s, std::forward<Body>(body), site);
}

/// On the process team (aloe::team::global()).
template <class Body>
void parallel_for(std::int64_t first, std::int64_t last, std::int64_t step, const schedule& s, Body&& body,
                  loop_site site = {}) {
    parallel_for(team::global(), first, last, step, s, std::forward<Body>(body), site);
}

/// On the process team, step 1.
template <class Body>
void parallel_for(std::int64_t first, std::int64_t last, const schedule& s, Body&& body, loop_site site = {}) {
    parallel_for(team::global(), first, last, 1, s, std::forward<Body>(body), site);
}

/// As above with the schedule as text, e.g. `parallel_for(t, 0, n, 1, "dynamic,chunk=4", body)`.
/// The text is parsed the first time this thread reaches the site with it, then reused: a
/// call costs a compare of the text instead of a parse. A bad text throws aloe::error at
/// every call, before anything runs.
template <detail::schedule_text Text, class Body>
void parallel_for(team& t, std::int64_t first, std::int64_t last, std::int64_t step, const Text& s, Body&& body,
                  loop_site site = {}) {
    parallel_for(t, first, last, step, detail::site_schedule(site, std::string_view(s)), std::forward<Body>(body),
                 site);
}

/// Text schedule, step 1.
template <detail::schedule_text Text, class Body>
void parallel_for(team& t, std::int64_t first, std::int64_t last, const Text& s, Body&& body, loop_site site = {}) {
    parallel_for(t, first, last, 1, detail::site_schedule(site, std::string_view(s)), std::forward<Body>(body), site);
}

/// Text schedule, on the process team.
template <detail::schedule_text Text, class Body>
void parallel_for(std::int64_t first, std::int64_t last, std::int64_t step, const Text& s, Body&& body,
                  loop_site site = {}) {
    parallel_for(team::global(), first, last, step, detail::site_schedule(site, std::string_view(s)),
                 std::forward<Body>(body), site);
}

/// Text schedule, on the process team, step 1: `parallel_for(0, n, "hybrid,fs=0.8", body)`.
template <detail::schedule_text Text, class Body>
void parallel_for(std::int64_t first, std::int64_t last, const Text& s, Body&& body, loop_site site = {}) {
    parallel_for(team::global(), first, last, 1, detail::site_schedule(site, std::string_view(s)),
                 std::forward<Body>(body), site);
}

/// On the process team, step 1, with the schedule ALOE_SCHEDULE names (static if unset).
template <class Body>
void parallel_for(std::int64_t first, std::int64_t last, Body&& body, loop_site site = {}) {
    parallel_for(team::global(), first, last, 1, detail::environment_schedule(), std::forward<Body>(body), site);
}

}  // namespace aloe

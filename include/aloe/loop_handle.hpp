/// @file loop_handle.hpp
/// Adopting an aloe schedule inside an existing `#pragma omp parallel` region (the FORALL
/// style of the Kale thesis): every OpenMP thread asks the handle for its next chunk.
///
/// @code
///   aloe::loop_handle loop(0, n, "staggered,fs=0.9");   // shared, made before the region
///   #pragma omp parallel
///   {
///       const int tid = omp_get_thread_num(), nt = omp_get_num_threads();
///       for (aloe::subrange r; loop.next(tid, nt, r);)
///           for (std::int64_t i : r) y[i] += a * x[i];
///   }
/// @endcode
///
/// Every thread of the region must call next() until it returns false (the handle learns
/// the thread count from the first call, and all calls must agree). The handle records the
/// site's statistics when the last thread is done. Make one handle per execution of the
/// loop (they are cheap); history carries over through the loop site.
#pragma once

#include <aloe/export.h>
#include <aloe/loop_site.hpp>
#include <aloe/schedule.hpp>
#include <aloe/subrange.hpp>

#define ALOE_DETAIL_ALLOWED
#include <aloe/detail/site_schedule.hpp>
#undef ALOE_DETAIL_ALLOWED

#include <cstdint>
#include <memory>
#include <string_view>

namespace aloe {

namespace loop { struct handle_state; }

class ALOE_API loop_handle {
public:
    /// Throws aloe::error when step is 0.
    loop_handle(std::int64_t first, std::int64_t last, std::int64_t step, const schedule& s, loop_site site = {});
    loop_handle(std::int64_t first, std::int64_t last, const schedule& s, loop_site site = {});
    /// The schedule as text ("dynamic,chunk=4"): parsed once per call site and thread, not
    /// at every construction. Throws aloe::error naming the bad part of a malformed text.
    template <detail::schedule_text Text>
    loop_handle(std::int64_t first, std::int64_t last, std::int64_t step, const Text& s, loop_site site = {})
        : loop_handle(first, last, step, detail::site_schedule(site, std::string_view(s)), site) {}
    template <detail::schedule_text Text>
    loop_handle(std::int64_t first, std::int64_t last, const Text& s, loop_site site = {})
        : loop_handle(first, last, 1, detail::site_schedule(site, std::string_view(s)), site) {}
    ~loop_handle();
    loop_handle(const loop_handle&) = delete;
    loop_handle& operator=(const loop_handle&) = delete;

    /// Fills `out` with thread `thread`'s next chunk; false when it has no more work.
    /// Throws aloe::error when `thread` or `num_threads` disagrees with earlier calls.
    bool next(int thread, int num_threads, subrange& out);

    /// Runs body(subrange) over this thread's chunks (a loop around next()).
    template <class Body>
    void for_each(int thread, int num_threads, Body&& body) {
        for (subrange r; next(thread, num_threads, r);) body(r);
    }

private:
    std::unique_ptr<loop::handle_state> state_;
};

}  // namespace aloe

// The interface every schedule implements, and the closed set of them.
//
// A schedule builds one loop's shared state from the iteration count, the team size, the
// knobs of its aloe::schedule value and the site's history (constructor, run by the thread
// that starts the loop, before the fork). Workers then call:
//   next_static(cursor, chunk)  → true with the worker's next static chunk, false when its
//                                 static part is done (reads only private data);
//   next_dynamic(cursor, chunk) → take::own / take::stolen with a chunk, take::none when no
//                                 work is left anywhere.
// After the join, commit(records, history) stores what the next run of the site should
// know. A schedule chosen at run time is resolved into the variant once per loop; workers
// then run a loop instantiated for the concrete type (no per-chunk dispatch).
#pragma once

#include "loop/chunk.hpp"
#include "loop/site_registry.hpp"
#include "runtime/arena.hpp"

#include <aloe/schedule.hpp>

#include <concepts>
#include <cstdint>
#include <span>

namespace aloe::loop {

struct loop_setup {
    std::uint64_t count = 0;  ///< iterations, > 0
    int threads = 1;          ///< team size, >= 1
    const schedule& spec;
    const site_history& history;
    runtime::arena& scratch;  ///< shared state lives here for the loop's duration
    std::span<const double> block_weights = {};  ///< staggered: per-thread block weights (adaptive)
};

template <class S>
concept loop_schedule = requires(S& s, const S& cs, worker_cursor& w, chunk& c,
                                 std::span<const worker_record> records, site_history& h) {
    { s.next_static(w, c) } noexcept -> std::same_as<bool>;
    { s.next_dynamic(w, c) } noexcept -> std::same_as<take>;
    { cs.commit(records, h) } -> std::same_as<void>;
};

}  // namespace aloe::loop

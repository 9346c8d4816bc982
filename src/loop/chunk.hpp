// What a schedule hands a worker, and the per-worker state a schedule keeps between calls.
#pragma once

#include "runtime/arena.hpp"
#include "runtime/clock.hpp"

#include <cstdint>

namespace aloe::loop {

/// Logical iterations [begin, end) of the loop (0 ≤ begin ≤ end ≤ count).
struct chunk {
    std::uint64_t begin = 0;
    std::uint64_t end = 0;
};

/// What a dynamic take found: nothing left anywhere, a chunk of the worker's own share, or
/// a chunk taken from another worker's share (a steal).
enum class take : std::uint8_t { none, own, stolen };

/// A worker's private position in one loop; only that worker reads or writes it.
/// Schedules give the fields their own meaning (documented in each schedule).
struct worker_cursor {
    int id = 0;
    bool static_done = false;
    bool own_done = false;
    std::uint64_t next = 0;   ///< e.g. the next cyclic chunk index, or a tasklet list position
    std::uint64_t limit = 0;  ///< e.g. the end of that list
    int steal_distance = 1;   ///< staggered: neighbours closer than this are known empty
};

/// One worker's account of one loop, written only by that worker, read after the join.
struct alignas(runtime::cache_line) worker_record {
    runtime::ticks start = 0;
    runtime::ticks static_end = 0;
    runtime::ticks end = 0;
    std::uint64_t static_iterations = 0;
    std::uint64_t dynamic_iterations = 0;
    std::uint64_t chunks = 0;
    std::uint64_t steals = 0;
};

}  // namespace aloe::loop

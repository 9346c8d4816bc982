// Per-thread event buffers for `aloe run --trace` (ALOE_TRACE): one complete event per
// thread per region and per loop, written at exit as Chrome trace-event JSON, which Perfetto
// and chrome://tracing open. Off unless asked for: then recording is one branch.
// Each thread appends to its own buffer (no lock); buffers are registered once per thread
// and never freed, so the exit report may read them after the threads are idle.
#pragma once

#include "runtime/clock.hpp"

#include <cstdint>
#include <string>

namespace aloe::omp {

struct omp_site;

enum class trace_kind : std::uint8_t { region, loop_taken, loop_forwarded };

/// Whether events are recorded (ALOE_TRACE is set).
bool tracing() noexcept;

/// Records one event on the calling thread. `detail` is the OpenMP thread number.
void trace_event(trace_kind kind, const omp_site& site, runtime::ticks begin, runtime::ticks end, int omp_thread,
                 std::uint64_t iterations);

/// Writes every thread's events to `path`; false and `error` when it cannot.
bool write_trace(const std::string& path, std::string& error);

}  // namespace aloe::omp

// Per-thread event buffers for `aloe run --trace` (ALOE_TRACE): one complete event per
// thread per region and per loop, written at exit as Chrome trace-event JSON, which Perfetto
// and chrome://tracing open. Off unless asked for: then recording is one branch.
//
// Events carry the process id as "pid" and CLOCK_MONOTONIC microseconds as "ts", so the
// traces of several processes of one node line up: `aloe run` joins the event lists its
// processes wrote (trace_document_begin/end around them) into one file.
// Each thread appends to its own buffer (no lock); buffers are registered once per thread
// and never freed, so the exit report may read them after the threads are idle.
#pragma once

#include "runtime/clock.hpp"
#include "runtime/output_file.hpp"

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

/// This process's events as trace-event objects separated by ",\n" (no comma before the
/// first or after the last): a process-name record, then every thread's events.
void write_trace_events(const runtime::output_sink& sink, const std::string& process_name);

/// Around fork() (fork_hooks.cpp): the buffer registry's mutex; in the child, the parent's
/// events are dropped (they are the parent's to write).
void lock_trace_for_fork() noexcept;
void unlock_trace_after_fork() noexcept;
void forget_trace_in_child() noexcept;

/// What goes before and after the joined event lists of one or more processes (inline:
/// `aloe run` writes them around its processes' lists).
inline std::string trace_document_begin() { return "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n"; }
inline std::string trace_document_end(std::size_t processes) {
    return "\n],\"otherData\":{\"tool\":\"aloe run\",\"processes\":" + std::to_string(processes) +
           ",\"clock\":\"CLOCK_MONOTONIC\"}}\n";
}

}  // namespace aloe::omp

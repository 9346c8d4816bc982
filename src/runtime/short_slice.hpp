// A short time slice for threads that run microseconds each time they are woken: the node
// daemon (aloed) and a rank's listener for the daemon's answers (issue 19).
//
// Those threads carry a lend or a take-back from one rank to another. On the 2-vCPU VM both
// CPUs run ranks, and a woken aloed waited for the running rank's slice: 2.3-2.4 ms in most
// steps of jacobi3d-mpi 1:3 with 20 loops a step (perf sched), so a lend reached the
// borrower milliseconds late. Linux 6.12 and later (EEVDF) let a thread ask for a slice
// shorter than the default (sched_attr.sched_runtime for SCHED_OTHER, 0.1-100 ms, no
// privilege needed), and a waking thread with a shorter slice may preempt one in the middle
// of its slice. Older kernels take and ignore the field.
//
// Only a SCHED_OTHER thread is changed, and its nice value and flags are kept (the call
// reads them first): a daemon started with `nice` or under SCHED_BATCH stays so.
#pragma once

#include <cstdint>

namespace aloe::runtime {

/// The slice asked for: the kernel's smallest.
inline constexpr std::uint64_t short_slice_ns = 100'000;

/// Asks the kernel for a short slice for the calling thread (threads it creates later
/// inherit it). Returns false where it was refused (the kernel's errno) or the thread's
/// policy is not SCHED_OTHER; the caller decides whether to say so.
bool request_short_slice(std::uint64_t slice_ns = short_slice_ns) noexcept;

/// The calling thread's slice as the kernel reports it (sched_attr.sched_runtime; 0: the
/// default, or a kernel that does not report one), or -1 where it cannot be read. For tests.
std::int64_t current_slice_ns() noexcept;

}  // namespace aloe::runtime

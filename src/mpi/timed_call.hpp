// One intercepted call, timed from the wrapper's entry to its return. Only the outermost
// intercepted call of a thread is timed: an MPI whose Fortran bindings call the C MPI_*
// functions (MPICH), or whose MPI_Finalize calls MPI_Barrier, is not counted twice.
// At entry: the path's row (call_table.hpp) and the call's ordinal on the slack board; at
// return: the time inside, its slack, the predictors' scores and the next prediction.
#pragma once

#include "mpi/call_path.hpp"
#include "runtime/clock.hpp"

#include <cstdint>

namespace aloe::mpi {

/// How deep this thread is in intercepted calls (initial-exec: no lookup per call, and
/// libaloe-mpi is linked or preloaded, never opened later with dlopen).
inline thread_local int call_depth [[gnu::tls_model("initial-exec")]] = 0;

class timed_call {
public:
    /// `bytes`: what the call moves for this rank, for its communication cost (0: latency only).
    timed_call(const call_path& path, std::uint64_t bytes = 0) noexcept : outer_(call_depth++ == 0) {
        if (outer_) begin(path, bytes);
    }
    ~timed_call() {
        --call_depth;
        if (outer_) end();
    }
    timed_call(const timed_call&) = delete;
    timed_call& operator=(const timed_call&) = delete;

    /// Whether this is the thread's outermost intercepted call (only that one is timed,
    /// and only that one may wait politely), and its path's row.
    bool outer() const noexcept { return outer_; }
    std::size_t row() const noexcept { return row_; }
    /// What the call moves for this rank (as given; 0 for a nested call).
    std::uint64_t bytes() const noexcept { return bytes_; }

private:
    void begin(const call_path& path, std::uint64_t bytes) noexcept;
    void end() noexcept;

    bool outer_;
    mpi_call call_{};
    std::size_t row_ = 0;
    std::uint64_t bytes_ = 0;
    runtime::ticks start_ = 0;
};

}  // namespace aloe::mpi

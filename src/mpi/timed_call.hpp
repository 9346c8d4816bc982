// The time one intercepted call spends inside MPI, recorded when the call returns. Only the
// outermost intercepted call of a thread is timed: an MPI whose Fortran bindings call the C
// MPI_* functions (MPICH), or whose MPI_Finalize calls MPI_Barrier, is not counted twice.
#pragma once

#include "mpi/call_table.hpp"
#include "runtime/clock.hpp"

namespace aloe::mpi {

/// How deep this thread is in intercepted calls (initial-exec: no lookup per call, and
/// libaloe-mpi is linked or preloaded, never opened later with dlopen).
inline thread_local int call_depth [[gnu::tls_model("initial-exec")]] = 0;

class timed_call {
public:
    timed_call(mpi_call call, const void* site) noexcept : call_(call), site_(site), outer_(call_depth++ == 0) {
        if (outer_) start_ = runtime::now_ticks();
    }
    ~timed_call() {
        --call_depth;
        if (outer_) process_calls().record(call_, site_, runtime::now_ticks() - start_);  // seconds at report time
    }
    timed_call(const timed_call&) = delete;
    timed_call& operator=(const timed_call&) = delete;

private:
    mpi_call call_;
    const void* site_;
    bool outer_;
    runtime::ticks start_ = 0;
};

}  // namespace aloe::mpi

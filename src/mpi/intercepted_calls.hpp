// The MPI calls libaloe-mpi intercepts: every call in which a rank can wait for others
// (the blocking collectives, the completions of nonblocking requests, the blocking receive,
// exchange and probe) and the two ends of MPI's life. One list, expanded wherever a call's
// name, kind or arity is needed, so the C wrappers, the Fortran wrappers and the statistics
// cannot disagree.
#pragma once

#include <cstdint>
#include <string_view>

namespace aloe::mpi {

enum class call_kind : std::uint8_t { collective, completion, receive, lifetime };

// X(Name, name, NAME, kind, fortran_arity): the C name after MPI_, in lower and upper case
// for the Fortran symbols; fortran_arity counts the arguments of the mpif.h binding,
// ierror included (every argument is passed by reference; none is a character string).
#define ALOE_MPI_CALLS(X)                                                              \
    X(Barrier, barrier, BARRIER, collective, 2)                                        \
    X(Bcast, bcast, BCAST, collective, 6)                                              \
    X(Reduce, reduce, REDUCE, collective, 8)                                           \
    X(Allreduce, allreduce, ALLREDUCE, collective, 7)                                  \
    X(Allgather, allgather, ALLGATHER, collective, 8)                                  \
    X(Allgatherv, allgatherv, ALLGATHERV, collective, 9)                               \
    X(Alltoall, alltoall, ALLTOALL, collective, 8)                                     \
    X(Alltoallv, alltoallv, ALLTOALLV, collective, 10)                                 \
    X(Reduce_scatter, reduce_scatter, REDUCE_SCATTER, collective, 7)                   \
    X(Reduce_scatter_block, reduce_scatter_block, REDUCE_SCATTER_BLOCK, collective, 7) \
    X(Scan, scan, SCAN, collective, 7)                                                 \
    X(Exscan, exscan, EXSCAN, collective, 7)                                           \
    X(Gather, gather, GATHER, collective, 9)                                           \
    X(Gatherv, gatherv, GATHERV, collective, 10)                                       \
    X(Scatter, scatter, SCATTER, collective, 9)                                        \
    X(Scatterv, scatterv, SCATTERV, collective, 10)                                    \
    X(Wait, wait, WAIT, completion, 3)                                                 \
    X(Waitall, waitall, WAITALL, completion, 4)                                        \
    X(Waitany, waitany, WAITANY, completion, 5)                                        \
    X(Waitsome, waitsome, WAITSOME, completion, 6)                                     \
    X(Recv, recv, RECV, receive, 8)                                                    \
    X(Sendrecv, sendrecv, SENDRECV, receive, 13)                                       \
    X(Probe, probe, PROBE, receive, 5)                                                 \
    X(Init, init, INIT, lifetime, 1)                                                   \
    X(Init_thread, init_thread, INIT_THREAD, lifetime, 3)                              \
    X(Finalize, finalize, FINALIZE, lifetime, 1)

enum class mpi_call : std::uint8_t {
#define ALOE_MPI_ENUM(name, lower, upper, kind, arity) name,
    ALOE_MPI_CALLS(ALOE_MPI_ENUM)
#undef ALOE_MPI_ENUM
};

#define ALOE_MPI_COUNT(name, lower, upper, kind, arity) +1
inline constexpr int mpi_call_count = 0 ALOE_MPI_CALLS(ALOE_MPI_COUNT);
#undef ALOE_MPI_COUNT

/// "MPI_Allreduce", as the standard names it.
constexpr std::string_view call_name(mpi_call c) noexcept {
    constexpr std::string_view names[] = {
#define ALOE_MPI_NAME(name, lower, upper, kind, arity) "MPI_" #name,
        ALOE_MPI_CALLS(ALOE_MPI_NAME)
#undef ALOE_MPI_NAME
    };
    return names[static_cast<int>(c)];
}

constexpr call_kind kind_of(mpi_call c) noexcept {
    constexpr call_kind kinds[] = {
#define ALOE_MPI_KIND(name, lower, upper, kind, arity) call_kind::kind,
        ALOE_MPI_CALLS(ALOE_MPI_KIND)
#undef ALOE_MPI_KIND
    };
    return kinds[static_cast<int>(c)];
}

constexpr std::string_view kind_name(call_kind k) noexcept {
    switch (k) {
    case call_kind::collective: return "collective";
    case call_kind::completion: return "completion";
    case call_kind::receive: return "receive";
    case call_kind::lifetime: return "lifetime";
    }
    return "?";
}

}  // namespace aloe::mpi

// A Fortran program's blocking MPI calls wait politely too (rank_lending.hpp): the wrapper
// of mpi_waitall_ (and the others of the C wrappers' polite list) starts the call's
// nonblocking form and tests it through the MPI library's own Fortran functions (pmpi_irecv_,
// pmpi_testall_, in the mangling of the entry the program called), lending the rank's cores
// meanwhile. Going through the Fortran functions, not the C ones, every argument is passed
// on as the reference the program gave: no handle conversion, and MPI_STATUS_IGNORE,
// MPI_STATUSES_IGNORE, MPI_IN_PLACE and the f08 derived types reach the library as they came.
#pragma once

#include "mpi/intercepted_calls.hpp"
#include "mpi/timed_call.hpp"

#include <cstdint>

namespace aloe::mpi {

/// How a Fortran compiler names mpi_barrier: mpi_barrier, mpi_barrier_, mpi_barrier__,
/// MPI_BARRIER (mpif.h and `use mpi`), mpi_barrier_f08_ (`use mpi_f08`, OpenMPI's).
enum class fortran_mangling : std::uint8_t { bare, underscore, two_underscores, capitals, f08 };
inline constexpr int fortran_mangling_count = 5;

/// Waits for the Fortran call `call` (`args`: its arguments, every one a reference, the
/// last the ierror, which f08 may leave null) politely and returns true; returns false
/// when it does not (not the thread's outermost call, this rank does not wait politely,
/// the call has no polite form, or the library lacks a function it needs), and the caller
/// forwards the call to the library.
bool wait_fortran_politely(const timed_call& t, mpi_call call, fortran_mangling m, void* const* args) noexcept;

}  // namespace aloe::mpi

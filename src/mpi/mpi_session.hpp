// libaloe-mpi's view of MPI's life in this process: what it learns once MPI is initialised
// (rank, size, the library), and the statistics it writes before MPI is finalised, or at
// exit when the program never finalises. Called from both the C and the Fortran wrappers
// (OpenMPI's Fortran MPI_INIT calls PMPI_Init directly, never the C wrapper).
#pragma once

#include <string>

namespace aloe::mpi {

/// After a successful PMPI_Init or PMPI_Init_thread.
void after_init() noexcept;

/// Before PMPI_Finalize: writes the statistics (ALOE_MPI_STATS) while MPI can still be asked.
void before_finalize() noexcept;

/// The statistics of this process as JSON (what ALOE_MPI_STATS receives).
std::string statistics_json();

}  // namespace aloe::mpi

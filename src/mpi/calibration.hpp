// The short calibration libaloe-mpi runs right after MPI_Init (issue 15, item 2; Kale's
// thesis §4.5: 1,000 four-byte Allreduces seed its naive slack prediction). On a duplicate of
// MPI_COMM_WORLD, so no message of the program can match it:
//   1. one Allreduce agrees across the ranks whether to calibrate (ALOE_MPI_CALIBRATION may
//      differ between ranks; a calibration on some ranks only would hang);
//   2. `naive_calls` four-byte Allreduces: the naive prediction is their mean time beyond
//      the reduction's calibrated cost at four bytes;
//   3. per cost class, `repetitions` calls at a small and a large message: the least time of
//      each size fits the class's line (communication_cost.hpp). Back-to-back collectives
//      keep the ranks in step, so the least time is the call without waiting.
// A few hundred small collectives: milliseconds on one node.
#pragma once

#include "mpi/communication_cost.hpp"

#include <mpi.h>

namespace aloe::mpi {

struct calibration {
    bool ran = false;         ///< false: switched off (on some rank), or MPI refused a call
    int naive_calls = 0;
    double naive_s = 0;       ///< the naive prediction of every key's slack
    double seconds = 0;       ///< what the calibration took
    communication_cost cost;  ///< zero lines when it did not run: slack is the time inside
};

/// Collective over `world`: every rank that loaded libaloe-mpi calls it from MPI_Init.
calibration calibrate(MPI_Comm world, bool wanted, int naive_calls = 100, int repetitions = 10);

/// The process's communication cost (zero lines until the calibration ran).
const communication_cost& process_cost() noexcept;
void set_process_cost(const communication_cost& cost) noexcept;

}  // namespace aloe::mpi

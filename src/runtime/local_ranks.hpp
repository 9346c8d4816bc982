// How many ranks of this process's MPI job run on its node, as the launcher says: the one
// reading of the launchers' variables (aloe run's passive-wait rule, the team's spare
// workers for borrowed cores, libaloe-mpi's lending).
#pragma once

#include "runtime/config.hpp"

namespace aloe::runtime {

/// From Open MPI (OMPI_COMM_WORLD_LOCAL_SIZE), MPICH's Hydra (MPI_LOCALNRANKS), PMI
/// (PMI_LOCAL_SIZE) or Slurm (SLURM_NTASKS_PER_NODE, SLURM_TASKS_PER_NODE: "4", "4(x2)" or
/// "4(x2),2", whose leading count is this node's in the uniform jobs these rules are for),
/// the first that holds a count >= 1; 1 when none does.
int local_ranks_from(const env_lookup& env);

}  // namespace aloe::runtime

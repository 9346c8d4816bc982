/* A program's own exit status survives libaloe-mpi whatever it does with MPI's life:
 *   never   it never calls MPI_Init, and exits 3
 *   early   it calls MPI_Finalize, then works on and exits 5
 *   abort   rank 0 calls MPI_Abort with 7 (mpirun reports a failure)
 *   no-finalize  it exits 0 without MPI_Finalize (the statistics are still written) */
#include <mpi.h>

#include <stdio.h>
#include <string.h>

int main(int argc, char** argv) {
    const char* mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "never") == 0) return 3;
    MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    if (strcmp(mode, "abort") == 0) {
        if (rank == 0) MPI_Abort(MPI_COMM_WORLD, 7);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (strcmp(mode, "no-finalize") == 0) return 0;
    MPI_Finalize();
    if (strcmp(mode, "early") == 0) {
        double s = 0;
        for (int i = 1; i < 1000; ++i) s += 1.0 / i;
        return s > 1 ? 5 : 6;
    }
    return 0;
}

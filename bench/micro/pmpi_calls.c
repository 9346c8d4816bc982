/* pmpi_calls: N calls of one cheap MPI call on MPI_COMM_SELF, timed, so that pmpi_cost.py can
 * compare the program alone with the program under libaloe-mpi (preloaded): what an
 * intercepted call adds. The calls are the cheapest MPI offers, so the wrapper's cost is the
 * largest share it can be:
 *   wait       MPI_Wait on MPI_REQUEST_NULL (returns at once)
 *   barrier    MPI_Barrier on MPI_COMM_SELF
 *   allreduce  MPI_Allreduce of one int on MPI_COMM_SELF
 * Usage: pmpi_calls CALL N. Prints "ns_per_call X" and "checksum Y". One process, no mpirun
 * needed (MPI's singleton start). */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
    if (argc != 3 || atol(argv[2]) <= 0) {
        fprintf(stderr, "usage: pmpi_calls wait|barrier|allreduce N\n");
        return 2;
    }
    const char* call = argv[1];
    const long n = atol(argv[2]);
    if (strcmp(call, "wait") != 0 && strcmp(call, "barrier") != 0 && strcmp(call, "allreduce") != 0) {
        fprintf(stderr, "pmpi_calls: unknown call '%s' (wait, barrier, allreduce)\n", call);
        return 2;
    }
    MPI_Init(&argc, &argv);
    long checksum = 0;
    const double start = MPI_Wtime();
    for (long i = 0; i < n; ++i) {
        if (call[0] == 'w') {
            MPI_Request r = MPI_REQUEST_NULL;
            checksum += MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS;
        } else if (call[0] == 'b') {
            checksum += MPI_Barrier(MPI_COMM_SELF) == MPI_SUCCESS;
        } else {
            int x = (int)(i & 7), y = 0;
            MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF);
            checksum += y;
        }
    }
    const double seconds = MPI_Wtime() - start;
    printf("ns_per_call %.3f\nchecksum %ld\n", seconds / (double)n * 1e9, checksum);
    MPI_Finalize();
    return 0;
}

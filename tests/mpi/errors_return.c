/* Under MPI_ERRORS_RETURN an MPI error comes back to the program through the wrapper
 * unchanged: a broadcast from a root that does not exist returns MPI_ERR_ROOT (or, where
 * an MPI checks arguments differently, another error class), never MPI_SUCCESS. */
#include <mpi.h>

#include <stdio.h>

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int size = 0, x = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const int rc = MPI_Bcast(&x, 1, MPI_INT, size + 5, MPI_COMM_WORLD);
    int error_class = MPI_SUCCESS;
    MPI_Error_class(rc, &error_class);
    printf("errors_return: MPI_Bcast returned error class %d (MPI_ERR_ROOT is %d)\n", error_class, MPI_ERR_ROOT);
    MPI_Finalize();
    return rc != MPI_SUCCESS && error_class == MPI_ERR_ROOT ? 0 : 1;
}

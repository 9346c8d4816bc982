/* An MPI program without OpenMP (issue 19, a hostile check): under `aloe run --mpi --lend`
 * the interposer is preloaded but no libgomp is, and libaloe-mpi asks it at MPI_Init how many
 * threads its regions could put on borrowed cores. That question used to reach libgomp's
 * entry points and stop the program ("the program called GOMP_parallel"). Rank 1 waits in
 * MPI_Barrier right after MPI_Init (before any region could read the daemon's answer) and
 * each step in MPI_Allreduce while rank 0 computes longer; prints the reduced sum. */
#include <mpi.h>
#include <stdio.h>

static double spin(long n, double x) {
    for (long i = 0; i < n; ++i) x = x * 0.999999 + 1e-6;
    return x;
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double x = spin(rank == 0 ? 2000000 : 0, 1.0);
    MPI_Barrier(MPI_COMM_WORLD);
    double sum = 0;
    for (int step = 0; step < 100; ++step) {
        x = spin(rank == 0 ? 200000 : 50000, x);
        double one = 1.0, total = 0;
        MPI_Allreduce(&one, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        sum += total;
    }
    if (rank == 0) printf("sum %g check %d\n", sum, x > 0);
    MPI_Finalize();
    return 0;
}

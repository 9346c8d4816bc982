/* An MPI program without OpenMP (issue 19, a hostile check): under `aloe run --mpi --lend`
 * the interposer is preloaded but no libgomp is, and libaloe-mpi asks it at MPI_Init how many
 * threads its regions could put on borrowed cores. That question used to reach libgomp's
 * entry points and stop the program ("the program called GOMP_parallel"). Rank 1 waits in
 * MPI_Barrier right after MPI_Init (before any region could read the daemon's answer) and
 * each step in MPI_Allreduce while rank 0 computes longer; prints the reduced sum.
 * Then collectives of 100 KiB a rank, above the size where libaloe-mpi lets a collective
 * block (src/mpi/pmpi_c.cpp), with MPI_IN_PLACE at the root of Gather and Scatter and on
 * every rank of Allgather: the root's own counts are 0 or ignored, and a root that chose
 * by them waited nonblocking while the others blocked (the job hung). Prints "collectives
 * ok" when every element arrived. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { block = 100 * 1024 / (int)sizeof(int) };

/* Gather, Scatter and Allgather of `block` ints a rank, in place; the number of wrong ints. */
static long big_collectives_in_place(int rank, int size) {
    int* all = malloc(sizeof(int) * (size_t)block * (size_t)size);
    int* mine = malloc(sizeof(int) * (size_t)block);
    long wrong = 0;
    if (all == NULL || mine == NULL) return -1;
    for (int i = 0; i < block; ++i) mine[i] = rank * block + i;
    if (rank == 0) {
        for (int i = 0; i < block; ++i) all[i] = i;
        MPI_Gather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, block, MPI_INT, 0, MPI_COMM_WORLD);
    } else {
        MPI_Gather(mine, block, MPI_INT, NULL, 0, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD);
    }
    if (rank == 0)
        for (long i = 0; i < (long)block * size; ++i) wrong += all[i] != (int)i;
    if (rank == 0) {
        for (long i = 0; i < (long)block * size; ++i) all[i] = (int)(-i);
        MPI_Scatter(all, block, MPI_INT, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD);
    } else {
        MPI_Scatter(NULL, 0, MPI_DATATYPE_NULL, mine, block, MPI_INT, 0, MPI_COMM_WORLD);
        for (int i = 0; i < block; ++i) wrong += mine[i] != -(rank * block + i);
    }
    for (int i = 0; i < block; ++i) all[(long)rank * block + i] = 7 * rank + i;
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, block, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < size; ++r)
        for (int i = 0; i < block; ++i) wrong += all[(long)r * block + i] != 7 * r + i;
    free(all);
    free(mine);
    return wrong;
}

static double spin(long n, double x) {
    for (long i = 0; i < n; ++i) x = x * 0.999999 + 1e-6;
    return x;
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
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
    long wrong = 0;
    for (int round = 0; round < 3; ++round) wrong += big_collectives_in_place(rank, size);
    long total_wrong = 0;
    MPI_Reduce(&wrong, &total_wrong, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf(total_wrong == 0 ? "collectives ok\n" : "collectives wrong %ld\n", total_wrong);
    MPI_Finalize();
    return 0;
}

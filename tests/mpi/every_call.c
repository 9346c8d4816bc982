/* Every C call libaloe-mpi wraps, once each (MPI_Barrier twice), on any number of ranks,
 * each result checked against what MPI must give: the wrappers pass arguments and results
 * through unchanged. Exits 0, or 1 naming the first wrong result. mpi_check.cmake then reads
 * the statistics each rank wrote and checks every call was counted. */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>

static int rank, size;

static void expect(int ok, const char* what) {
    if (!ok) {
        fprintf(stderr, "every_call: rank %d: wrong result of %s\n", rank, what);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

int main(int argc, char** argv) {
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) return 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int n = size;
    int* in = malloc(sizeof(int) * (size_t)n);
    int* out = malloc(sizeof(int) * (size_t)n * (size_t)n);
    int* counts = malloc(sizeof(int) * (size_t)n);
    int* displs = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; ++i) {
        in[i] = rank * 100 + i;
        counts[i] = 1;
        displs[i] = i;
    }
    const int sum_of_ranks = size * (size - 1) / 2;

    expect(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS, "MPI_Barrier");

    int x = rank == 0 ? 42 : -1;
    MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD);
    expect(x == 42, "MPI_Bcast");

    int y = -1;
    MPI_Reduce(&rank, &y, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    expect(rank != 0 || y == sum_of_ranks, "MPI_Reduce");

    MPI_Allreduce(&rank, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    expect(y == sum_of_ranks, "MPI_Allreduce");
    y = rank;
    MPI_Allreduce(MPI_IN_PLACE, &y, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    expect(y == size - 1, "MPI_Allreduce (MPI_IN_PLACE)");

    MPI_Allgather(&rank, 1, MPI_INT, out, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < n; ++i) expect(out[i] == i, "MPI_Allgather");

    MPI_Allgatherv(&rank, 1, MPI_INT, out, counts, displs, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < n; ++i) expect(out[i] == i, "MPI_Allgatherv");

    MPI_Alltoall(in, 1, MPI_INT, out, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < n; ++i) expect(out[i] == i * 100 + rank, "MPI_Alltoall");

    MPI_Alltoallv(in, counts, displs, MPI_INT, out, counts, displs, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < n; ++i) expect(out[i] == i * 100 + rank, "MPI_Alltoallv");

    MPI_Reduce_scatter(in, &y, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    expect(y == 100 * sum_of_ranks + size * rank, "MPI_Reduce_scatter");

    MPI_Reduce_scatter_block(in, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    expect(y == 100 * sum_of_ranks + size * rank, "MPI_Reduce_scatter_block");

    MPI_Scan(&rank, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    expect(y == rank * (rank + 1) / 2, "MPI_Scan");

    y = -7;
    MPI_Exscan(&rank, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    expect(rank == 0 || y == rank * (rank - 1) / 2, "MPI_Exscan");

    MPI_Gather(&rank, 1, MPI_INT, out, 1, MPI_INT, 0, MPI_COMM_WORLD);
    for (int i = 0; rank == 0 && i < n; ++i) expect(out[i] == i, "MPI_Gather");

    MPI_Gatherv(&rank, 1, MPI_INT, out, counts, displs, MPI_INT, size - 1, MPI_COMM_WORLD);
    for (int i = 0; rank == size - 1 && i < n; ++i) expect(out[i] == i, "MPI_Gatherv");

    for (int i = 0; i < n; ++i) in[i] = 1000 + i;
    MPI_Scatter(in, 1, MPI_INT, &y, 1, MPI_INT, 0, MPI_COMM_WORLD);
    expect(y == 1000 + rank, "MPI_Scatter");

    MPI_Scatterv(in, counts, displs, MPI_INT, &y, 1, MPI_INT, 0, MPI_COMM_WORLD);
    expect(y == 1000 + rank, "MPI_Scatterv");

    /* A ring: receive from the left, send to the right. */
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Status status;
    MPI_Request requests[2];
    int got = -1;
    MPI_Irecv(&got, 1, MPI_INT, left, 1, MPI_COMM_WORLD, &requests[0]);
    MPI_Isend(&rank, 1, MPI_INT, right, 1, MPI_COMM_WORLD, &requests[1]);
    MPI_Wait(&requests[0], &status);
    expect(got == left && status.MPI_SOURCE == left && status.MPI_TAG == 1, "MPI_Wait");
    MPI_Wait(&requests[1], MPI_STATUS_IGNORE);

    MPI_Status statuses[2];
    MPI_Irecv(&got, 1, MPI_INT, left, 2, MPI_COMM_WORLD, &requests[0]);
    MPI_Isend(&rank, 1, MPI_INT, right, 2, MPI_COMM_WORLD, &requests[1]);
    expect(MPI_Waitall(2, requests, statuses) == MPI_SUCCESS && got == left && statuses[0].MPI_TAG == 2, "MPI_Waitall");

    int index = -1;
    MPI_Irecv(&got, 1, MPI_INT, left, 3, MPI_COMM_WORLD, &requests[0]);
    MPI_Isend(&rank, 1, MPI_INT, right, 3, MPI_COMM_WORLD, &requests[1]);
    MPI_Waitany(2, requests, &index, &status);
    expect(index == 0 || index == 1, "MPI_Waitany");
    MPI_Wait(&requests[1 - index], MPI_STATUS_IGNORE);
    expect(got == left, "MPI_Waitany (received)");

    int done = 0, indices[2];
    MPI_Irecv(&got, 1, MPI_INT, left, 4, MPI_COMM_WORLD, &requests[0]);
    MPI_Isend(&rank, 1, MPI_INT, right, 4, MPI_COMM_WORLD, &requests[1]);
    MPI_Waitsome(2, requests, &done, indices, statuses);
    expect(done >= 1 && done <= 2, "MPI_Waitsome");
    if (done == 1) MPI_Wait(&requests[1 - indices[0]], MPI_STATUS_IGNORE);
    expect(got == left, "MPI_Waitsome (received)");

    MPI_Request send;
    MPI_Isend(&rank, 1, MPI_INT, right, 5, MPI_COMM_WORLD, &send);
    MPI_Probe(left, 5, MPI_COMM_WORLD, &status);
    int probed = 0;
    MPI_Get_count(&status, MPI_INT, &probed);
    expect(status.MPI_SOURCE == left && probed == 1, "MPI_Probe");
    MPI_Recv(&got, 1, MPI_INT, left, 5, MPI_COMM_WORLD, &status);
    expect(got == left && status.MPI_TAG == 5, "MPI_Recv");
    MPI_Request_free(&send);

    MPI_Sendrecv(&rank, 1, MPI_INT, right, 6, &got, 1, MPI_INT, left, 6, MPI_COMM_WORLD, &status);
    expect(got == left && status.MPI_SOURCE == left, "MPI_Sendrecv");

    expect(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS, "MPI_Barrier");
    free(in);
    free(out);
    free(counts);
    free(displs);
    return MPI_Finalize() == MPI_SUCCESS ? 0 : 1;
}

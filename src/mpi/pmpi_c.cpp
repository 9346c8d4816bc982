// The C entry points: each times the call into the PMPI name of the same call (the MPI
// profiling interface) and records it under the call and the program's call site (this
// function's return address). Arguments and results pass through untouched.
#include "mpi/mpi_session.hpp"
#include "mpi/timed_call.hpp"

#include <mpi.h>

using aloe::mpi::mpi_call;
using aloe::mpi::timed_call;

#define ALOE_SITE __builtin_return_address(0)

extern "C" {

int MPI_Barrier(MPI_Comm comm) {
    timed_call t(mpi_call::Barrier, ALOE_SITE);
    return PMPI_Barrier(comm);
}

int MPI_Bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm) {
    timed_call t(mpi_call::Bcast, ALOE_SITE);
    return PMPI_Bcast(buffer, count, type, root, comm);
}

int MPI_Reduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm) {
    timed_call t(mpi_call::Reduce, ALOE_SITE);
    return PMPI_Reduce(send, recv, count, type, op, root, comm);
}

int MPI_Allreduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
    timed_call t(mpi_call::Allreduce, ALOE_SITE);
    return PMPI_Allreduce(send, recv, count, type, op, comm);
}

int MPI_Allgather(const void* send, int send_count, MPI_Datatype send_type, void* recv, int recv_count,
                  MPI_Datatype recv_type, MPI_Comm comm) {
    timed_call t(mpi_call::Allgather, ALOE_SITE);
    return PMPI_Allgather(send, send_count, send_type, recv, recv_count, recv_type, comm);
}

int MPI_Allgatherv(const void* send, int send_count, MPI_Datatype send_type, void* recv, const int recv_counts[],
                   const int displs[], MPI_Datatype recv_type, MPI_Comm comm) {
    timed_call t(mpi_call::Allgatherv, ALOE_SITE);
    return PMPI_Allgatherv(send, send_count, send_type, recv, recv_counts, displs, recv_type, comm);
}

int MPI_Alltoall(const void* send, int send_count, MPI_Datatype send_type, void* recv, int recv_count,
                 MPI_Datatype recv_type, MPI_Comm comm) {
    timed_call t(mpi_call::Alltoall, ALOE_SITE);
    return PMPI_Alltoall(send, send_count, send_type, recv, recv_count, recv_type, comm);
}

int MPI_Alltoallv(const void* send, const int send_counts[], const int send_displs[], MPI_Datatype send_type,
                  void* recv, const int recv_counts[], const int recv_displs[], MPI_Datatype recv_type,
                  MPI_Comm comm) {
    timed_call t(mpi_call::Alltoallv, ALOE_SITE);
    return PMPI_Alltoallv(send, send_counts, send_displs, send_type, recv, recv_counts, recv_displs, recv_type, comm);
}

int MPI_Reduce_scatter(const void* send, void* recv, const int recv_counts[], MPI_Datatype type, MPI_Op op,
                       MPI_Comm comm) {
    timed_call t(mpi_call::Reduce_scatter, ALOE_SITE);
    return PMPI_Reduce_scatter(send, recv, recv_counts, type, op, comm);
}

int MPI_Reduce_scatter_block(const void* send, void* recv, int recv_count, MPI_Datatype type, MPI_Op op,
                             MPI_Comm comm) {
    timed_call t(mpi_call::Reduce_scatter_block, ALOE_SITE);
    return PMPI_Reduce_scatter_block(send, recv, recv_count, type, op, comm);
}

int MPI_Scan(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
    timed_call t(mpi_call::Scan, ALOE_SITE);
    return PMPI_Scan(send, recv, count, type, op, comm);
}

int MPI_Exscan(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
    timed_call t(mpi_call::Exscan, ALOE_SITE);
    return PMPI_Exscan(send, recv, count, type, op, comm);
}

int MPI_Gather(const void* send, int send_count, MPI_Datatype send_type, void* recv, int recv_count,
               MPI_Datatype recv_type, int root, MPI_Comm comm) {
    timed_call t(mpi_call::Gather, ALOE_SITE);
    return PMPI_Gather(send, send_count, send_type, recv, recv_count, recv_type, root, comm);
}

int MPI_Gatherv(const void* send, int send_count, MPI_Datatype send_type, void* recv, const int recv_counts[],
                const int displs[], MPI_Datatype recv_type, int root, MPI_Comm comm) {
    timed_call t(mpi_call::Gatherv, ALOE_SITE);
    return PMPI_Gatherv(send, send_count, send_type, recv, recv_counts, displs, recv_type, root, comm);
}

int MPI_Scatter(const void* send, int send_count, MPI_Datatype send_type, void* recv, int recv_count,
                MPI_Datatype recv_type, int root, MPI_Comm comm) {
    timed_call t(mpi_call::Scatter, ALOE_SITE);
    return PMPI_Scatter(send, send_count, send_type, recv, recv_count, recv_type, root, comm);
}

int MPI_Scatterv(const void* send, const int send_counts[], const int displs[], MPI_Datatype send_type, void* recv,
                 int recv_count, MPI_Datatype recv_type, int root, MPI_Comm comm) {
    timed_call t(mpi_call::Scatterv, ALOE_SITE);
    return PMPI_Scatterv(send, send_counts, displs, send_type, recv, recv_count, recv_type, root, comm);
}

int MPI_Wait(MPI_Request* request, MPI_Status* status) {
    timed_call t(mpi_call::Wait, ALOE_SITE);
    return PMPI_Wait(request, status);
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
    timed_call t(mpi_call::Waitall, ALOE_SITE);
    return PMPI_Waitall(count, requests, statuses);
}

int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
    timed_call t(mpi_call::Waitany, ALOE_SITE);
    return PMPI_Waitany(count, requests, index, status);
}

int MPI_Waitsome(int in_count, MPI_Request requests[], int* out_count, int indices[], MPI_Status statuses[]) {
    timed_call t(mpi_call::Waitsome, ALOE_SITE);
    return PMPI_Waitsome(in_count, requests, out_count, indices, statuses);
}

int MPI_Recv(void* buffer, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status* status) {
    timed_call t(mpi_call::Recv, ALOE_SITE);
    return PMPI_Recv(buffer, count, type, source, tag, comm, status);
}

int MPI_Sendrecv(const void* send, int send_count, MPI_Datatype send_type, int dest, int send_tag, void* recv,
                 int recv_count, MPI_Datatype recv_type, int source, int recv_tag, MPI_Comm comm, MPI_Status* status) {
    timed_call t(mpi_call::Sendrecv, ALOE_SITE);
    return PMPI_Sendrecv(send, send_count, send_type, dest, send_tag, recv, recv_count, recv_type, source, recv_tag,
                         comm, status);
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
    timed_call t(mpi_call::Probe, ALOE_SITE);
    return PMPI_Probe(source, tag, comm, status);
}

int MPI_Init(int* argc, char*** argv) {
    int rc;
    {
        timed_call t(mpi_call::Init, ALOE_SITE);
        rc = PMPI_Init(argc, argv);
    }
    if (rc == MPI_SUCCESS) aloe::mpi::after_init();
    return rc;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
    int rc;
    {
        timed_call t(mpi_call::Init_thread, ALOE_SITE);
        rc = PMPI_Init_thread(argc, argv, required, provided);
    }
    if (rc == MPI_SUCCESS) aloe::mpi::after_init();
    return rc;
}

int MPI_Finalize(void) {
    aloe::mpi::before_finalize();
    return PMPI_Finalize();
}

}  // extern "C"

// The C entry points: each times the call into the PMPI name of the same call (the MPI
// profiling interface) and records it under the call and the program's call path (this
// function's return address and stack depth, mpi/call_path.hpp), with the bytes it moves
// for its communication cost. Arguments and results pass through untouched.
#include "mpi/mpi_session.hpp"
#include "mpi/rank_lending.hpp"
#include "mpi/timed_call.hpp"

#include <mpi.h>

using aloe::mpi::mpi_call;
using aloe::mpi::timed_call;

namespace {

// What a call moves for this rank (its communication cost grows with it); 0 when unknown.
std::uint64_t bytes_of(int count, MPI_Datatype type) noexcept {
    int size = 0;
    if (count <= 0 || type == MPI_DATATYPE_NULL || PMPI_Type_size(type, &size) != MPI_SUCCESS || size <= 0) return 0;
    return static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(size);
}

// Polite waits (mpi/rank_lending.hpp): the outermost call of a thread, in a process that
// lends, waits for its nonblocking form with tests, lending its cores meanwhile.
bool polite_p2p(const timed_call& t) noexcept { return t.outer() && aloe::mpi::polite_point_to_point(); }
//
// A collective waits politely only up to a size: its nonblocking form moves data only while
// it is tested (Open MPI has no progress thread), and the naps of a lent wait stall it, while
// libnbc's schedules are slower than the tuned blocking ones anyway. IMB-MPI1 on 2 ranks of
// the 2-vCPU VM, predictive against no preload: Reduce 1.5x at 16 KiB, 3.7x at 64 KiB, 27x at
// 4 MiB (Ireduce alone 3.8x at 256 KiB); the others 1.0-1.4x up to 64 KiB, reactive's
// Allreduce 1.9x at 256 KiB. Above the size the blocking call runs: the rank does not lend
// during it. Every rank must choose alike (a blocking collective does not match a
// nonblocking one), so the size is one all ranks pass: Bcast, Reduce and Allreduce's count;
// Allgather and Alltoall's receive count (their send count is ignored with MPI_IN_PLACE).
// Gather and Scatter have none (the root's counts are its own, and its send or receive count
// is ignored with MPI_IN_PLACE: a root that passed 0 waited nonblocking while the others
// blocked, and the job hung): they stay polite at any size.
constexpr std::uint64_t polite_reduce_bytes = 16 * 1024;
constexpr std::uint64_t polite_collective_bytes = 64 * 1024;
bool polite_coll(const timed_call& t, std::uint64_t bytes_every_rank_passes = 0,
                 std::uint64_t most = polite_collective_bytes) noexcept {
    return t.outer() && bytes_every_rank_passes <= most && aloe::mpi::polite_collectives();
}

template <class Test>
int wait_with(const timed_call& t, Test test) noexcept {
    return aloe::mpi::lend_during(t.row(), test).rc;
}

// A started nonblocking operation, waited for politely.
int wait_request(const timed_call& t, int started, MPI_Request* request, MPI_Status* status) noexcept {
    if (started != MPI_SUCCESS) return started;
    return wait_with(t, [=](bool& done) {
        int flag = 0;
        const int rc = PMPI_Test(request, &flag, status);
        done = flag != 0;
        return rc;
    });
}

}  // namespace

extern "C" {

int MPI_Barrier(MPI_Comm comm) {
    timed_call t(ALOE_CALL_PATH(mpi_call::Barrier));
    if (MPI_Request r; polite_coll(t)) return wait_request(t, PMPI_Ibarrier(comm, &r), &r, MPI_STATUS_IGNORE);
    return PMPI_Barrier(comm);
}

int MPI_Bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm) {
    timed_call t(ALOE_CALL_PATH(mpi_call::Bcast), bytes_of(count, type));
    if (MPI_Request r; polite_coll(t, t.bytes()))
        return wait_request(t, PMPI_Ibcast(buffer, count, type, root, comm, &r), &r, MPI_STATUS_IGNORE);
    return PMPI_Bcast(buffer, count, type, root, comm);
}

int MPI_Reduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm) {
    timed_call t(ALOE_CALL_PATH(mpi_call::Reduce), bytes_of(count, type));
    if (MPI_Request r; polite_coll(t, t.bytes(), polite_reduce_bytes))
        return wait_request(t, PMPI_Ireduce(send, recv, count, type, op, root, comm, &r), &r, MPI_STATUS_IGNORE);
    return PMPI_Reduce(send, recv, count, type, op, root, comm);
}

int MPI_Allreduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
    timed_call t(ALOE_CALL_PATH(mpi_call::Allreduce), bytes_of(count, type));
    if (MPI_Request r; polite_coll(t, t.bytes()))
        return wait_request(t, PMPI_Iallreduce(send, recv, count, type, op, comm, &r), &r, MPI_STATUS_IGNORE);
    return PMPI_Allreduce(send, recv, count, type, op, comm);
}

int MPI_Allgather(const void* send, int send_count, MPI_Datatype send_type, void* recv, int recv_count,
                  MPI_Datatype recv_type, MPI_Comm comm) {
    timed_call t(ALOE_CALL_PATH(mpi_call::Allgather), bytes_of(send_count, send_type));
    if (MPI_Request r; polite_coll(t, bytes_of(recv_count, recv_type)))
        return wait_request(t, PMPI_Iallgather(send, send_count, send_type, recv, recv_count, recv_type, comm, &r), &r,
                            MPI_STATUS_IGNORE);
    return PMPI_Allgather(send, send_count, send_type, recv, recv_count, recv_type, comm);
}

int MPI_Allgatherv(const void* send, int send_count, MPI_Datatype send_type, void* recv, const int recv_counts[],
                   const int displs[], MPI_Datatype recv_type, MPI_Comm comm) {
    timed_call t(ALOE_CALL_PATH(mpi_call::Allgatherv), bytes_of(send_count, send_type));
    return PMPI_Allgatherv(send, send_count, send_type, recv, recv_counts, displs, recv_type, comm);
}

int MPI_Alltoall(const void* send, int send_count, MPI_Datatype send_type, void* recv, int recv_count,
                 MPI_Datatype recv_type, MPI_Comm comm) {
    timed_call t(ALOE_CALL_PATH(mpi_call::Alltoall), bytes_of(send_count, send_type));
    if (MPI_Request r; polite_coll(t, bytes_of(recv_count, recv_type)))
        return wait_request(t, PMPI_Ialltoall(send, send_count, send_type, recv, recv_count, recv_type, comm, &r), &r,
                            MPI_STATUS_IGNORE);
    return PMPI_Alltoall(send, send_count, send_type, recv, recv_count, recv_type, comm);
}

int MPI_Alltoallv(const void* send, const int send_counts[], const int send_displs[], MPI_Datatype send_type,
                  void* recv, const int recv_counts[], const int recv_displs[], MPI_Datatype recv_type,
                  MPI_Comm comm) {
    timed_call t(ALOE_CALL_PATH(mpi_call::Alltoallv));
    return PMPI_Alltoallv(send, send_counts, send_displs, send_type, recv, recv_counts, recv_displs, recv_type, comm);
}

int MPI_Reduce_scatter(const void* send, void* recv, const int recv_counts[], MPI_Datatype type, MPI_Op op,
                       MPI_Comm comm) {
    timed_call t(ALOE_CALL_PATH(mpi_call::Reduce_scatter));
    return PMPI_Reduce_scatter(send, recv, recv_counts, type, op, comm);
}

int MPI_Reduce_scatter_block(const void* send, void* recv, int recv_count, MPI_Datatype type, MPI_Op op,
                             MPI_Comm comm) {
    timed_call t(ALOE_CALL_PATH(mpi_call::Reduce_scatter_block), bytes_of(recv_count, type));
    return PMPI_Reduce_scatter_block(send, recv, recv_count, type, op, comm);
}

int MPI_Scan(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
    timed_call t(ALOE_CALL_PATH(mpi_call::Scan), bytes_of(count, type));
    return PMPI_Scan(send, recv, count, type, op, comm);
}

int MPI_Exscan(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
    timed_call t(ALOE_CALL_PATH(mpi_call::Exscan), bytes_of(count, type));
    return PMPI_Exscan(send, recv, count, type, op, comm);
}

int MPI_Gather(const void* send, int send_count, MPI_Datatype send_type, void* recv, int recv_count,
               MPI_Datatype recv_type, int root, MPI_Comm comm) {
    timed_call t(ALOE_CALL_PATH(mpi_call::Gather), bytes_of(send_count, send_type));
    if (MPI_Request r; polite_coll(t))
        return wait_request(t, PMPI_Igather(send, send_count, send_type, recv, recv_count, recv_type, root, comm, &r), &r,
                            MPI_STATUS_IGNORE);
    return PMPI_Gather(send, send_count, send_type, recv, recv_count, recv_type, root, comm);
}

int MPI_Gatherv(const void* send, int send_count, MPI_Datatype send_type, void* recv, const int recv_counts[],
                const int displs[], MPI_Datatype recv_type, int root, MPI_Comm comm) {
    timed_call t(ALOE_CALL_PATH(mpi_call::Gatherv), bytes_of(send_count, send_type));
    return PMPI_Gatherv(send, send_count, send_type, recv, recv_counts, displs, recv_type, root, comm);
}

int MPI_Scatter(const void* send, int send_count, MPI_Datatype send_type, void* recv, int recv_count,
                MPI_Datatype recv_type, int root, MPI_Comm comm) {
    timed_call t(ALOE_CALL_PATH(mpi_call::Scatter), bytes_of(recv_count, recv_type));
    if (MPI_Request r; polite_coll(t))
        return wait_request(t, PMPI_Iscatter(send, send_count, send_type, recv, recv_count, recv_type, root, comm, &r),
                            &r, MPI_STATUS_IGNORE);
    return PMPI_Scatter(send, send_count, send_type, recv, recv_count, recv_type, root, comm);
}

int MPI_Scatterv(const void* send, const int send_counts[], const int displs[], MPI_Datatype send_type, void* recv,
                 int recv_count, MPI_Datatype recv_type, int root, MPI_Comm comm) {
    timed_call t(ALOE_CALL_PATH(mpi_call::Scatterv), bytes_of(recv_count, recv_type));
    return PMPI_Scatterv(send, send_counts, displs, send_type, recv, recv_count, recv_type, root, comm);
}

int MPI_Wait(MPI_Request* request, MPI_Status* status) {
    timed_call t(ALOE_CALL_PATH(mpi_call::Wait));
    if (polite_p2p(t)) return wait_request(t, MPI_SUCCESS, request, status);
    return PMPI_Wait(request, status);
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
    timed_call t(ALOE_CALL_PATH(mpi_call::Waitall));
    if (polite_p2p(t))
        return wait_with(t, [=](bool& done) {
            int flag = 0;
            const int rc = PMPI_Testall(count, requests, &flag, statuses);
            done = flag != 0;
            return rc;
        });
    return PMPI_Waitall(count, requests, statuses);
}

int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
    timed_call t(ALOE_CALL_PATH(mpi_call::Waitany));
    if (polite_p2p(t))
        return wait_with(t, [=](bool& done) {
            int flag = 0;
            const int rc = PMPI_Testany(count, requests, index, &flag, status);
            done = flag != 0;  // also with no active request (index MPI_UNDEFINED), as Waitany returns
            return rc;
        });
    return PMPI_Waitany(count, requests, index, status);
}

int MPI_Waitsome(int in_count, MPI_Request requests[], int* out_count, int indices[], MPI_Status statuses[]) {
    timed_call t(ALOE_CALL_PATH(mpi_call::Waitsome));
    if (polite_p2p(t))
        return wait_with(t, [=](bool& done) {
            const int rc = PMPI_Testsome(in_count, requests, out_count, indices, statuses);
            done = *out_count != 0;  // some completed, or none active (MPI_UNDEFINED)
            return rc;
        });
    return PMPI_Waitsome(in_count, requests, out_count, indices, statuses);
}

int MPI_Recv(void* buffer, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status* status) {
    timed_call t(ALOE_CALL_PATH(mpi_call::Recv), bytes_of(count, type));
    if (MPI_Request r; polite_p2p(t)) return wait_request(t, PMPI_Irecv(buffer, count, type, source, tag, comm, &r), &r, status);
    return PMPI_Recv(buffer, count, type, source, tag, comm, status);
}

int MPI_Sendrecv(const void* send, int send_count, MPI_Datatype send_type, int dest, int send_tag, void* recv,
                 int recv_count, MPI_Datatype recv_type, int source, int recv_tag, MPI_Comm comm, MPI_Status* status) {
    timed_call t(ALOE_CALL_PATH(mpi_call::Sendrecv), bytes_of(send_count, send_type));
    if (polite_p2p(t)) {
        MPI_Request r[2];
        int rc = PMPI_Irecv(recv, recv_count, recv_type, source, recv_tag, comm, &r[1]);
        if (rc != MPI_SUCCESS) return rc;
        rc = PMPI_Isend(send, send_count, send_type, dest, send_tag, comm, &r[0]);
        if (rc != MPI_SUCCESS) {
            PMPI_Cancel(&r[1]);  // the receive was posted: cancel it and complete it
            PMPI_Wait(&r[1], MPI_STATUS_IGNORE);
            return rc;
        }
        MPI_Status both[2];
        rc = wait_with(t, [&](bool& done) {
            int flag = 0;
            const int test_rc = PMPI_Testall(2, r, &flag, both);
            done = flag != 0;
            return test_rc;
        });
        if (rc == MPI_ERR_IN_STATUS) rc = both[0].MPI_ERROR != MPI_SUCCESS ? both[0].MPI_ERROR : both[1].MPI_ERROR;
        if (status != MPI_STATUS_IGNORE) *status = both[1];
        return rc;
    }
    return PMPI_Sendrecv(send, send_count, send_type, dest, send_tag, recv, recv_count, recv_type, source, recv_tag,
                         comm, status);
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
    timed_call t(ALOE_CALL_PATH(mpi_call::Probe));
    if (polite_p2p(t))
        return wait_with(t, [=](bool& done) {
            int flag = 0;
            const int rc = PMPI_Iprobe(source, tag, comm, &flag, status);
            done = flag != 0;
            return rc;
        });
    return PMPI_Probe(source, tag, comm, status);
}

int MPI_Init(int* argc, char*** argv) {
    int rc;
    {
        timed_call t(ALOE_CALL_PATH(mpi_call::Init));
        rc = PMPI_Init(argc, argv);
    }
    if (rc == MPI_SUCCESS) aloe::mpi::after_init();
    return rc;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
    int rc;
    {
        timed_call t(ALOE_CALL_PATH(mpi_call::Init_thread));
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

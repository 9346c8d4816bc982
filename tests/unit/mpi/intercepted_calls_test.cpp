// The list of intercepted calls: the calls issue 15 names, each once, with the standard's names.
#include "mpi/intercepted_calls.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace {

using namespace aloe::mpi;

TEST(MpiInterceptedCalls, AreTheWaitingCallsAndMpisLifeEachOnce) {
    const std::set<std::string> expected = {
        "MPI_Barrier", "MPI_Bcast", "MPI_Reduce", "MPI_Allreduce", "MPI_Allgather", "MPI_Allgatherv", "MPI_Alltoall",
        "MPI_Alltoallv", "MPI_Reduce_scatter", "MPI_Reduce_scatter_block", "MPI_Scan", "MPI_Exscan", "MPI_Gather",
        "MPI_Gatherv", "MPI_Scatter", "MPI_Scatterv", "MPI_Wait", "MPI_Waitall", "MPI_Waitany", "MPI_Waitsome",
        "MPI_Recv", "MPI_Sendrecv", "MPI_Probe", "MPI_Init", "MPI_Init_thread", "MPI_Finalize"};
    std::set<std::string> names;
    for (int c = 0; c < mpi_call_count; ++c) names.insert(std::string(call_name(static_cast<mpi_call>(c))));
    EXPECT_EQ(names, expected);
    EXPECT_EQ(static_cast<std::size_t>(mpi_call_count), expected.size());
    EXPECT_EQ(kind_of(mpi_call::Allreduce), call_kind::collective);
    EXPECT_EQ(kind_of(mpi_call::Waitsome), call_kind::completion);
    EXPECT_EQ(kind_of(mpi_call::Sendrecv), call_kind::receive);
    EXPECT_EQ(kind_name(kind_of(mpi_call::Finalize)), "lifetime");
}

}  // namespace

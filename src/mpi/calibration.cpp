#include "mpi/calibration.hpp"

#include "runtime/clock.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <vector>

namespace aloe::mpi {

namespace {

// The least time of `repetitions` calls of `call` (PMPI: never recorded as the program's).
template <class Call>
double least_time(int repetitions, Call&& call) {
    double least = std::numeric_limits<double>::infinity();
    for (int i = 0; i < repetitions; ++i) {
        const runtime::ticks start = runtime::now_ticks();
        if (call() != MPI_SUCCESS) return -1;
        least = std::min(least, runtime::ticks_to_seconds(runtime::now_ticks() - start));
    }
    return least;
}

constexpr std::uint64_t small_bytes = 8;
constexpr std::uint64_t large_bytes = 16384;  // per rank and destination: all-to-all moves size × this

bool fit_classes(MPI_Comm comm, int repetitions, communication_cost& cost) {
    int rank = 0, size = 1;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    const std::size_t n = static_cast<std::size_t>(size);
    std::vector<char> send(large_bytes * n), recv(large_bytes * n);
    auto measure_both = [&](cost_class c, auto&& call_of_bytes) {
        const double small = least_time(repetitions, [&] { return call_of_bytes(static_cast<int>(small_bytes)); });
        const double large = least_time(repetitions, [&] { return call_of_bytes(static_cast<int>(large_bytes)); });
        if (small < 0 || large < 0) return false;
        cost.fit(c, small_bytes, small, large_bytes, large);
        return true;
    };
    const double barrier = least_time(repetitions, [&] { return PMPI_Barrier(comm); });
    if (barrier < 0) return false;
    cost.fit(cost_class::barrier, 0, barrier, 0, barrier);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    return measure_both(cost_class::reduction,
                        [&](int bytes) {
                            return PMPI_Allreduce(send.data(), recv.data(), bytes, MPI_BYTE, MPI_BOR, comm);
                        }) &&
           measure_both(cost_class::broadcast, [&](int bytes) { return PMPI_Bcast(send.data(), bytes, MPI_BYTE, 0, comm); }) &&
           measure_both(cost_class::gathering,
                        [&](int bytes) {
                            return PMPI_Allgather(send.data(), bytes, MPI_BYTE, recv.data(), bytes, MPI_BYTE, comm);
                        }) &&
           measure_both(cost_class::all_to_all,
                        [&](int bytes) {
                            return PMPI_Alltoall(send.data(), bytes, MPI_BYTE, recv.data(), bytes, MPI_BYTE, comm);
                        }) &&
           measure_both(cost_class::point_to_point, [&](int bytes) {
               return PMPI_Sendrecv(send.data(), bytes, MPI_BYTE, right, 0, recv.data(), bytes, MPI_BYTE, left, 0, comm,
                                    MPI_STATUS_IGNORE);
           });
}

std::atomic<const communication_cost*> published{nullptr};

}  // namespace

calibration calibrate(MPI_Comm world, bool wanted, int naive_calls, int repetitions) {
    calibration out;
    const runtime::ticks start = runtime::now_ticks();
    MPI_Comm comm = MPI_COMM_NULL;
    if (PMPI_Comm_dup(world, &comm) != MPI_SUCCESS) return out;
    // Errors come back as codes here, whatever the program set on MPI_COMM_WORLD.
    PMPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int mine = wanted ? 1 : 0, all = 0;
    if (PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm) == MPI_SUCCESS && all == 1) {
        std::vector<double> times(static_cast<std::size_t>(std::max(naive_calls, 1)));
        int value = 1, sum = 0;
        bool ok = true;
        for (double& t : times) {
            const runtime::ticks s = runtime::now_ticks();
            ok = ok && PMPI_Allreduce(&value, &sum, 1, MPI_INT, MPI_SUM, comm) == MPI_SUCCESS;
            t = runtime::ticks_to_seconds(runtime::now_ticks() - s);
        }
        if (ok && fit_classes(comm, repetitions, out.cost)) {
            double mean = 0;
            for (const double t : times) mean += t;
            mean /= static_cast<double>(times.size());
            out.naive_calls = static_cast<int>(times.size());
            out.naive_s = std::max(mean - out.cost.of(mpi_call::Allreduce, 4), 0.0);
            out.ran = true;
        } else {
            out.cost = communication_cost();
        }
    }
    PMPI_Comm_free(&comm);
    out.seconds = runtime::ticks_to_seconds(runtime::now_ticks() - start);
    return out;
}

const communication_cost& process_cost() noexcept {
    static const communication_cost zero;
    const communication_cost* c = published.load(std::memory_order_acquire);
    return c != nullptr ? *c : zero;
}

void set_process_cost(const communication_cost& cost) noexcept {
    // Kept for the process's life: a reader may hold the previous one (a second MPI_Init is
    // an error in MPI itself, so this leaks at most once per process).
    published.store(new communication_cost(cost), std::memory_order_release);
}

}  // namespace aloe::mpi

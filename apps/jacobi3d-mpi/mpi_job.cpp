#include "mpi_job.hpp"

#include "common/args.hpp"
#include "common/harness.hpp"

#include <mpi.h>
#include <unistd.h>

#include <exception>
#include <stdexcept>

namespace jacobi3d_mpi {

void mpi_job::init(int required) {
    MPI_Init_thread(nullptr, nullptr, required, &provided_);
    initialized_ = true;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    if (provided_ < required) {
        throw std::runtime_error("the MPI library provides " + thread_level_name(provided_) + ", this mode needs " +
                                 thread_level_name(required));
    }
}

void mpi_job::agree(const std::function<void()>& step) {
    int status = 0;
    std::exception_ptr failure;
    try {
        step();
    } catch (const aloe_apps::usage_error&) {
        status = 2;
        failure = std::current_exception();
    } catch (...) {
        status = 1;
        failure = std::current_exception();
    }
    if (!initialized_) {  // failed before MPI_Init_thread: no rank got further (same flags)
        if (failure) std::rethrow_exception(failure);
        return;
    }
    const int counts[2] = {status, status != 0 ? 1 : 0};
    int totals[2] = {0, 0};
    MPI_Allreduce(&counts[0], &totals[0], 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&counts[1], &totals[1], 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (totals[0] == 0) return;
    agreed_failure_ = true;
    const bool every_rank = totals[1] == size_;
    if (failure && (rank_ == 0 || !every_rank)) std::rethrow_exception(failure);
    throw aloe_apps::quiet_exit{totals[0]};
}

int mpi_job::end(int status) {
    if (!initialized_) return status;
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized != 0) return status;
    // 0 and 3 (a failed check: every rank records the same, agreed, checks) end alike.
    if (status == 0 || status == 3 || agreed_failure_) {
        MPI_Finalize();
        return status;
    }
    MPI_Abort(MPI_COMM_WORLD, status);
    return status;
}

std::string thread_level_name(int level) {
    if (level == MPI_THREAD_SINGLE) return "MPI_THREAD_SINGLE";
    if (level == MPI_THREAD_FUNNELED) return "MPI_THREAD_FUNNELED";
    if (level == MPI_THREAD_SERIALIZED) return "MPI_THREAD_SERIALIZED";
    if (level == MPI_THREAD_MULTIPLE) return "MPI_THREAD_MULTIPLE";
    return "level " + std::to_string(level);
}

std::string mpi_library_version() {
    char text[MPI_MAX_LIBRARY_VERSION_STRING];
    int length = 0;
    MPI_Get_library_version(text, &length);
    std::string version(text, static_cast<std::size_t>(length > 0 ? length : 0));
    version = version.substr(0, version.find('\n'));
    while (!version.empty() && (version.back() == '\0' || version.back() == ' ' || version.back() == '\r')) version.pop_back();
    return version;
}

std::string host_name() {
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) != 0) return "unknown";
    return name;
}

}  // namespace jacobi3d_mpi

// jacobi3d-mpi's life as an MPI job: MPI_Init_thread at the thread level its mode needs (from
// the harness's before_threads hook, after the program has re-executed itself and before
// any thread starts), an agreement after start-up so that a command line one rank rejects
// ends every rank alike, and the end: MPI_Finalize when every rank ends alike, MPI_Abort when
// one rank fails alone (the others may be waiting for it in a collective).
#pragma once

#include <functional>
#include <string>

namespace jacobi3d_mpi {

class mpi_job {
public:
    mpi_job() = default;
    mpi_job(const mpi_job&) = delete;
    mpi_job& operator=(const mpi_job&) = delete;

    /// MPI_Init_thread asking for `required` (MPI_THREAD_FUNNELED, …); throws
    /// std::runtime_error when the library provides less.
    void init(int required);
    bool initialized() const noexcept { return initialized_; }
    int rank() const noexcept { return rank_; }
    int size() const noexcept { return size_; }
    int provided() const noexcept { return provided_; }

    /// Runs `step` on every rank (the harness's start, whose hook calls init), then agrees on
    /// the outcome: when any rank failed, every rank ends with the worst status, the failing
    /// ranks' messages printed (only rank 0's when every rank failed alike) and the others
    /// silent (aloe_apps::quiet_exit).
    void agree(const std::function<void()>& step);

    /// The program's exit status, after MPI_Finalize (0, 3 and agreed failures) or
    /// MPI_Abort (a failure of this rank alone: does not return).
    int end(int status);

private:
    bool initialized_ = false;
    bool agreed_failure_ = false;
    int rank_ = 0;
    int size_ = 1;
    int provided_ = 0;
};

/// "MPI_THREAD_SINGLE", …, as MPI names the levels.
std::string thread_level_name(int level);
/// The first line of MPI_Get_library_version.
std::string mpi_library_version();
/// This machine's host name.
std::string host_name();

}  // namespace jacobi3d_mpi

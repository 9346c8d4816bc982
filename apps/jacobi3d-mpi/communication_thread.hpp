// The dedicated communication thread of jacobi3d-mpi's `overlap` mode (Kale & Gropp's
// "message thread"): one std::thread, outside the compute team, that runs the halo exchange
// each step while the team sweeps the points that need no halo. It is started once and
// handed each step's work; run() returns at once and wait() blocks until the work is done,
// so its MPI calls never overlap the caller's (MPI_THREAD_SERIALIZED is enough).
#pragma once

#include <functional>
#include <semaphore>
#include <thread>
#include <vector>

namespace jacobi3d_mpi {

class communication_thread {
public:
    /// Starts the thread on `cpus` (empty: wherever the caller's mask allows).
    explicit communication_thread(std::vector<int> cpus);
    ~communication_thread();  // stops and joins it
    communication_thread(const communication_thread&) = delete;
    communication_thread& operator=(const communication_thread&) = delete;

    /// Hands `work` to the thread; the previous work must have been waited for.
    void run(std::function<void()> work);
    /// Blocks until the work handed by run() is done.
    void wait();

private:
    void main_loop();

    std::vector<int> cpus_;
    std::function<void()> work_;
    bool stop_ = false;
    std::binary_semaphore go_{0};
    std::binary_semaphore done_{0};
    std::thread thread_;
};

/// Restricts the calling thread to `cpus`; false when the kernel refuses.
bool pin_to(const std::vector<int>& cpus);

}  // namespace jacobi3d_mpi

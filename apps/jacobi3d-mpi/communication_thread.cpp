#include "communication_thread.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>

namespace jacobi3d_mpi {

bool pin_to(const std::vector<int>& cpus) {
    if (cpus.empty()) return true;
    const int ncpus = *std::max_element(cpus.begin(), cpus.end()) + 1;
    cpu_set_t* set = CPU_ALLOC(ncpus);
    if (set == nullptr) return false;
    const std::size_t size = CPU_ALLOC_SIZE(ncpus);
    CPU_ZERO_S(size, set);
    for (const int c : cpus)
        if (c >= 0) CPU_SET_S(c, size, set);
    const bool ok = pthread_setaffinity_np(pthread_self(), size, set) == 0;
    CPU_FREE(set);
    return ok;
}

communication_thread::communication_thread(std::vector<int> cpus)
    : cpus_(std::move(cpus)), thread_([this] { main_loop(); }) {}

communication_thread::~communication_thread() {
    stop_ = true;  // published by the release below
    go_.release();
    thread_.join();
}

void communication_thread::run(std::function<void()> work) {
    work_ = std::move(work);
    go_.release();
}

void communication_thread::wait() { done_.acquire(); }

void communication_thread::main_loop() {
    // The thread that made it may have been pinned to one CPU (libgomp pins the initial
    // thread): take the CPUs we were given instead.
    (void)pin_to(cpus_);
    for (;;) {
        go_.acquire();
        if (stop_) return;
        work_();
        done_.release();
    }
}

}  // namespace jacobi3d_mpi

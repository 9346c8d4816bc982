// A mutex the forking thread takes in fork()'s prepare hook and gives back after fork()
// (fork_hooks.cpp). The object that holds it may be made by another thread between the two
// hooks, so what was locked is remembered, per thread (two threads may fork at once), and
// only that is unlocked.
#pragma once

#include <mutex>
#include <utility>

namespace aloe::omp {

/// Locks `m` (when there is one yet) and remembers it in `held`, a thread_local of the caller.
inline void lock_for_fork(std::mutex* m, std::mutex*& held) noexcept {
    if (m != nullptr) m->lock();
    held = m;
}

/// Unlocks what lock_for_fork locked into `held`, if anything.
inline void unlock_after_fork(std::mutex*& held) noexcept {
    if (std::mutex* m = std::exchange(held, nullptr)) m->unlock();
}

}  // namespace aloe::omp

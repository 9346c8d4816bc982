#include "loop/task_loop.hpp"

#include <atomic>

namespace aloe::loop {

namespace {
std::atomic<task_loop_fn> runner{nullptr};
}

void set_task_loop_runner(task_loop_fn f) noexcept { runner.store(f, std::memory_order_release); }

task_loop_fn task_loop_runner() noexcept { return runner.load(std::memory_order_acquire); }

}  // namespace aloe::loop

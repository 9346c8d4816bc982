// The `tasks` schedule's runner (loop/task_loop.hpp): parallel_for over work-stealing tasks.
#pragma once

namespace aloe::adapt {

/// Registers the runner with loop/ (called when the library loads, from adaptive_policy.cpp,
/// whose object a static link keeps).
void install_task_loop_runner() noexcept;

}  // namespace aloe::adapt

// The `tasks` schedule's seam: loop/ owns the schedule and parallel_for, but the task
// scheduler (task/) sits beside it and the grain tuner (adapt/) above it. adapt/ registers a
// runner at load time that cuts the range into tasks (adapt/task_loop_runner.cpp); without one
// (a program that left adapt/ out), a `tasks` loop runs serially on its caller.
#pragma once

#include <aloe/parallel_for.hpp>

#include <cstdint>
#include <string_view>

namespace aloe::loop {

/// Runs [0, count) with `fn` as tasks; `site` names the loop (the grain is tuned per site).
using task_loop_fn = void (*)(const schedule& s, std::string_view site, std::uint64_t count, detail::chunk_fn fn,
                              void* ctx);

void set_task_loop_runner(task_loop_fn runner) noexcept;
task_loop_fn task_loop_runner() noexcept;

}  // namespace aloe::loop

// The message of the last failed C API call on this thread (aloe_last_error()), shared by
// every layer's C entry points (loop/c_api.cpp, task/task_c_api.cpp).
#pragma once

#include <aloe/aloe.h>

#include <string>

namespace aloe::runtime {

/// Sets this thread's message and returns `status`.
aloe_status c_fail(aloe_status status, std::string message);
/// Clears this thread's message (a call that succeeded).
void c_clear_error() noexcept;
/// This thread's message, "" when none.
const char* c_last_error() noexcept;

}  // namespace aloe::runtime

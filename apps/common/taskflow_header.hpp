// Taskflow's header, for the builds that have it (CMake's ALOE_TASKFLOW_DIR: ALOE_APPS_TASKFLOW
// defined, the checkout on the include path as a system directory).
//
// GCC 12 reports -Wnull-dereference in std::function calls inlined into Taskflow's executor
// (Executor::_invoke), system header or not; the warning is decided by the inlined code's
// location, so ignoring it around this include silences it there and nowhere else.
#pragma once

#ifdef ALOE_APPS_TASKFLOW
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include <taskflow/taskflow.hpp>
#pragma GCC diagnostic pop
#endif

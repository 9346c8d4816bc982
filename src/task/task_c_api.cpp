// The C API of task groups (include/aloe/aloe.h) and the small entry points of task.hpp that
// are not the scheduler's: no exception leaves a C function.
#include <aloe/aloe.h>
#include <aloe/task.hpp>

#include "runtime/c_error.hpp"
#include "task/task_pool.hpp"

#include <new>
#include <string>

struct aloe_task_group {
    aloe::task_group group;
};

namespace aloe {

void set_task_concurrency(int k) noexcept { task::task_pool::process().set_concurrency(k); }

int task_concurrency() noexcept { return task::task_pool::process().concurrency(); }

namespace detail {

void throw_no_state(const char* what) {
    throw aloe::error(std::string("aloe::future::") + what + ": the future has no state (default-made, moved from, or get() called already)");
}

}  // namespace detail

}  // namespace aloe

extern "C" {

aloe_task_group* aloe_task_group_create(void) {
    auto* g = new (std::nothrow) aloe_task_group;
    if (g == nullptr) aloe::runtime::c_fail(ALOE_ERROR_INTERNAL, "aloe_task_group_create: out of memory");
    return g;
}

aloe_status aloe_task_group_run(aloe_task_group* group, aloe_task_fn fn, void* arg) {
    if (group == nullptr) return aloe::runtime::c_fail(ALOE_ERROR_ARGUMENT, "aloe_task_group_run: group is NULL");
    if (fn == nullptr) return aloe::runtime::c_fail(ALOE_ERROR_ARGUMENT, "aloe_task_group_run: fn is NULL");
    try {
        group->group.run([fn, arg] { fn(arg); });
    } catch (const std::exception& e) {
        return aloe::runtime::c_fail(ALOE_ERROR_INTERNAL, std::string("aloe_task_group_run: ") + e.what());
    }
    aloe::runtime::c_clear_error();
    return ALOE_OK;
}

aloe_status aloe_task_group_wait(aloe_task_group* group) {
    if (group == nullptr) return aloe::runtime::c_fail(ALOE_ERROR_ARGUMENT, "aloe_task_group_wait: group is NULL");
    try {
        group->group.wait();
    } catch (const std::exception& e) {
        return aloe::runtime::c_fail(ALOE_ERROR_INTERNAL, std::string("aloe_task_group_wait: a task threw: ") + e.what());
    } catch (...) {
        return aloe::runtime::c_fail(ALOE_ERROR_INTERNAL, "aloe_task_group_wait: a task threw a non-standard exception");
    }
    aloe::runtime::c_clear_error();
    return ALOE_OK;
}

void aloe_task_group_destroy(aloe_task_group* group) { delete group; }

}  // extern "C"

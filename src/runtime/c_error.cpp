#include "runtime/c_error.hpp"

namespace aloe::runtime {

namespace {
thread_local std::string last_error;
}

aloe_status c_fail(aloe_status status, std::string message) {
    last_error = std::move(message);
    return status;
}

void c_clear_error() noexcept { last_error.clear(); }

const char* c_last_error() noexcept { return last_error.c_str(); }

}  // namespace aloe::runtime

#include "mpi/timed_call.hpp"

#include "mpi/calibration.hpp"
#include "mpi/call_table.hpp"
#include "mpi/slack_board.hpp"
#include "runtime/borrowed_cores.hpp"

#include <pthread.h>

namespace aloe::mpi {

std::uintptr_t thread_stack_top() noexcept {
    static thread_local std::uintptr_t top [[gnu::tls_model("initial-exec")]] = 1;  // 1: not looked up
    if (top == 1) {
        top = 0;
        pthread_attr_t attr;
        if (pthread_getattr_np(pthread_self(), &attr) == 0) {
            void* base = nullptr;
            std::size_t size = 0;
            if (pthread_attr_getstack(&attr, &base, &size) == 0) top = reinterpret_cast<std::uintptr_t>(base) + size;
            pthread_attr_destroy(&attr);
        }
    }
    return top;
}

void timed_call::begin(const call_path& path, std::uint64_t bytes) noexcept {
    call_ = path.call;
    bytes_ = bytes;
    row_ = process_calls().find(path);
    process_board().call_begins(row_);
    runtime::note_mpi_call(true);  // the rank's guests on lent CPUs stop waiting awake
    start_ = runtime::now_ticks();
}

void timed_call::end() noexcept {
    const runtime::ticks stop = runtime::now_ticks();
    runtime::note_mpi_call(false);
    call_table& table = process_calls();
    const runtime::ticks previous = table.swap_entry(row_, start_);
    invocation inv;
    inv.inside_s = runtime::ticks_to_seconds(stop - start_);
    inv.since_previous_s = previous != 0 && start_ > previous ? runtime::ticks_to_seconds(start_ - previous) : 0;
    inv.model_cost_s = process_cost().of(call_, bytes_);
    const recorded r = table.record(row_, call_, inv);
    process_board().call_ended(row_, r.next_s, r.slack_s);
}

}  // namespace aloe::mpi

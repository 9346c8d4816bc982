#include "runtime/thread_share.hpp"

namespace aloe::runtime {

namespace thread_share_detail {
constinit std::atomic<thread_share_source> source{nullptr};
}

void set_thread_share_source(thread_share_source s) noexcept {
    thread_share_detail::source.store(s, std::memory_order_relaxed);
}

}  // namespace aloe::runtime

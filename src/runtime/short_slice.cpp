#include "runtime/short_slice.hpp"

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace aloe::runtime {
namespace {

// The kernel's struct sched_attr (glibc 2.36 has no wrapper for sched_getattr/setattr).
struct kernel_sched_attr {
    std::uint32_t size;
    std::uint32_t sched_policy;
    std::uint64_t sched_flags;
    std::int32_t sched_nice;
    std::uint32_t sched_priority;
    std::uint64_t sched_runtime;
    std::uint64_t sched_deadline;
    std::uint64_t sched_period;
    std::uint32_t sched_util_min;
    std::uint32_t sched_util_max;
};

bool read_attr(kernel_sched_attr& a) noexcept {
    a = {};
    return syscall(SYS_sched_getattr, 0, &a, static_cast<unsigned>(sizeof a), 0u) == 0;
}

}  // namespace

bool request_short_slice(std::uint64_t slice_ns) noexcept {
    kernel_sched_attr a;
    if (!read_attr(a) || a.sched_policy != SCHED_OTHER) return false;
    a.size = sizeof a;
    a.sched_runtime = slice_ns;
    // Without their flags the utilization clamps are left as they are (set, they would be
    // applied again, and refused where the kernel has no clamping).
    a.sched_flags &= ~static_cast<std::uint64_t>(0x20 | 0x40);  // SCHED_FLAG_UTIL_CLAMP_MIN/MAX
    return syscall(SYS_sched_setattr, 0, &a, 0u) == 0;
}

std::int64_t current_slice_ns() noexcept {
    kernel_sched_attr a;
    if (!read_attr(a)) return -1;
    return static_cast<std::int64_t>(a.sched_runtime);
}

}  // namespace aloe::runtime

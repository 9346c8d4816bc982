// The two futex operations the wait policy needs (Linux), on a 32-bit atomic word.
#pragma once

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdint>

#include <ctime>

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace aloe::runtime {

static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t), "futex words must be plain 32-bit");

/// Sleeps while `word` holds `expected` (returns at once if it does not; may wake spuriously).
inline void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected) noexcept {
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}

/// As futex_wait, for at most `ns` nanoseconds. Returns false when the time ran out.
inline bool futex_wait_for(std::atomic<std::uint32_t>& word, std::uint32_t expected, long ns) noexcept {
    timespec limit{ns / 1'000'000'000L, ns % 1'000'000'000L};
    return syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, &limit, nullptr, 0) == 0 ||
           errno != ETIMEDOUT;
}

/// Wakes up to `n` threads sleeping on `word`.
inline void futex_wake(std::atomic<std::uint32_t>& word, int n) noexcept {
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, n, nullptr, nullptr, 0);
}

/// Wakes every thread sleeping on `word`.
inline void futex_wake_all(std::atomic<std::uint32_t>& word) noexcept {
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

}  // namespace aloe::runtime

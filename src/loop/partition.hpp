// Exact integer arithmetic shared by the schedules: block partitions (OpenMP's static
// split), fractions of a count, and claiming a chunk from a shared counter.
#pragma once

#include "loop/chunk.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>

namespace aloe::loop {

// 128-bit arithmetic keeps the wrap check exact for any 64-bit count (GCC/Clang extension).
__extension__ using uint128 = unsigned __int128;

/// Where worker i's block begins when [0, n) is split over p workers (i <= p) as OpenMP's
/// static schedule splits it in libgomp and in GCC's inlined schedule(static) loops:
/// q = n / p, r = n % p; workers below r get q + 1 iterations, the others q. A static loop
/// aloe runs therefore gives each thread the iterations an inlined one gives it (OpenMP
/// promises the same mapping to two static loops of the same count). No overflow: i·q <= n.
inline std::uint64_t block_start(std::uint64_t i, std::uint64_t n, std::uint64_t p) noexcept {
    const std::uint64_t q = n / p, r = n % p;
    return i * q + std::min(i, r);
}

/// Worker i's block of [0, n) split over p workers: sizes differ by at most one, the larger
/// blocks first.
inline chunk block_of(std::uint64_t i, std::uint64_t n, std::uint64_t p) noexcept {
    return {block_start(i, n, p), block_start(i + 1, n, p)};
}

/// floor(fs * n), clamped to [0, n]; long double keeps 64 bits of n exact.
inline std::uint64_t fraction_of(std::uint64_t n, double fs) noexcept {
    if (fs <= 0.0) return 0;
    if (fs >= 1.0) return n;
    const long double v = static_cast<long double>(n) * static_cast<long double>(fs);
    const auto r = static_cast<std::uint64_t>(v);
    return std::min(r, n);
}

/// [b, b + min(size, limit - b)) for b < limit.
inline chunk clip(std::uint64_t b, std::uint64_t size, std::uint64_t limit) noexcept {
    return {b, b + std::min(size, limit - b)};
}

/// True when `count` fetch-adds of `size` past `limit` could wrap a 64-bit counter, so the
/// claim must use compare-and-swap instead (only for loops near 2^64 iterations).
inline bool fetch_add_may_wrap(std::uint64_t limit, std::uint64_t size, std::uint64_t count) noexcept {
    const uint128 worst = static_cast<uint128>(limit) + static_cast<uint128>(size) * (count + 1);
    return worst > std::numeric_limits<std::uint64_t>::max();
}

/// Claims the next `size` iterations below `limit` from `next`.
///
/// Hot path: one relaxed fetch_add on the counter's line (relaxed is enough: the claim only
/// needs atomicity; the data the body touches is ordered by the loop's fork and join).
/// When `use_cas` (see fetch_add_may_wrap) a CAS loop never moves the counter past limit.
inline bool claim(std::atomic<std::uint64_t>& next, std::uint64_t size, std::uint64_t limit, bool use_cas,
                  chunk& out) noexcept {
    if (!use_cas) [[likely]] {
        const std::uint64_t b = next.fetch_add(size, std::memory_order_relaxed);
        if (b >= limit) return false;
        out = clip(b, size, limit);
        return true;
    }
    std::uint64_t b = next.load(std::memory_order_relaxed);
    do {
        if (b >= limit) return false;
    } while (!next.compare_exchange_weak(b, b + std::min(size, limit - b), std::memory_order_relaxed));
    out = clip(b, size, limit);
    return true;
}

/// A shared counter alone on its cache line.
struct alignas(runtime::cache_line) shared_counter {
    std::atomic<std::uint64_t> next{0};
};

}  // namespace aloe::loop

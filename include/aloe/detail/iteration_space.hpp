// Internal: do not include directly; use <aloe/parallel_for.hpp>.
//
// Maps a user loop (first, last, step) onto logical iterations 0..count-1. All arithmetic is
// done in uint64_t, where wrap-around is defined, so ranges touching INT64_MIN/INT64_MAX and
// negative steps need no special cases.
#pragma once

#ifndef ALOE_DETAIL_ALLOWED
#error "aloe/detail/ headers are internal: include <aloe/aloe.hpp> instead"
#endif

#include <cstdint>

namespace aloe::detail {

struct iteration_space {
    std::int64_t first = 0;
    std::int64_t last = 0;  ///< exclusive, in the direction of step
    std::int64_t step = 1;  ///< never 0 (checked by the API before one is built)
    std::uint64_t count = 0;

    static constexpr iteration_space make(std::int64_t first, std::int64_t last, std::int64_t step) noexcept {
        iteration_space s{first, last, step, 0};
        const auto ufirst = static_cast<std::uint64_t>(first);
        const auto ulast = static_cast<std::uint64_t>(last);
        if (step > 0 && last > first) s.count = steps_in(ulast - ufirst, static_cast<std::uint64_t>(step));
        // -step as uint64 is exact even for INT64_MIN.
        else if (step < 0 && last < first) s.count = steps_in(ufirst - ulast, 0 - static_cast<std::uint64_t>(step));
        return s;
    }

    /// How many steps of `step` start inside a span of `span` (both > 0): ceil(span / step),
    /// without the overflow of span + step - 1. The C API's aloe_chunk_count is its C twin.
    static constexpr std::uint64_t steps_in(std::uint64_t span, std::uint64_t step) noexcept {
        return (span - 1) / step + 1;
    }

    /// The user index of logical iteration i (i < count).
    constexpr std::int64_t index(std::uint64_t i) const noexcept {
        return static_cast<std::int64_t>(static_cast<std::uint64_t>(first) + i * static_cast<std::uint64_t>(step));
    }

    /// The exclusive user bound after logical iteration i-1: index(i) for i < count, and the
    /// user's own `last` for i == count, so it is always representable.
    constexpr std::int64_t bound(std::uint64_t i) const noexcept { return i >= count ? last : index(i); }
};

}  // namespace aloe::detail

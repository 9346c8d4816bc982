/// @file subrange.hpp
/// A run of consecutive iterations handed to one thread: what a subrange body receives.
#pragma once

#include <cstdint>
#include <iterator>

namespace aloe {

/// Iterations first, first+step, … (count of them). Iterating it with range-for yields the
/// user's indices without overflow, even next to INT64_MAX.
class subrange {
public:
    constexpr subrange() noexcept = default;
    constexpr subrange(std::int64_t first, std::int64_t bound, std::int64_t step, std::uint64_t count) noexcept
        : first_(first), bound_(bound), step_(step), count_(count) {}

    constexpr std::int64_t first() const noexcept { return first_; }
    /// Exclusive bound in the direction of step (the loop's own `last` for the final chunk).
    constexpr std::int64_t bound() const noexcept { return bound_; }
    constexpr std::int64_t step() const noexcept { return step_; }
    constexpr std::uint64_t size() const noexcept { return count_; }
    constexpr bool empty() const noexcept { return count_ == 0; }

    class iterator {
    public:
        using value_type = std::int64_t;
        using difference_type = std::ptrdiff_t;
        constexpr iterator() noexcept = default;
        constexpr iterator(std::int64_t first, std::int64_t step, std::uint64_t i) noexcept
            : first_(first), step_(step), i_(i) {}
        constexpr std::int64_t operator*() const noexcept {
            return static_cast<std::int64_t>(static_cast<std::uint64_t>(first_) + i_ * static_cast<std::uint64_t>(step_));
        }
        constexpr iterator& operator++() noexcept { ++i_; return *this; }
        constexpr iterator operator++(int) noexcept { iterator t = *this; ++i_; return t; }
        friend constexpr bool operator==(const iterator& a, const iterator& b) noexcept { return a.i_ == b.i_; }

    private:
        std::int64_t first_ = 0;
        std::int64_t step_ = 1;
        std::uint64_t i_ = 0;
    };

    constexpr iterator begin() const noexcept { return {first_, step_, 0}; }
    constexpr iterator end() const noexcept { return {first_, step_, count_}; }

private:
    std::int64_t first_ = 0;
    std::int64_t bound_ = 0;
    std::int64_t step_ = 1;
    std::uint64_t count_ = 0;
};

}  // namespace aloe

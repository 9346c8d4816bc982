/// @file loop_site.hpp
/// The identity of a loop in the program. History, statistics and tuner state hang off the
/// site, so timestep N+1 learns from timestep N.
#pragma once

#include <aloe/export.h>

#include <cstdint>
#include <source_location>
#include <string_view>

namespace aloe {

class ALOE_API loop_site {
public:
    /// The call site: file, line and column of the caller. `name` must outlive the program
    /// (source_location's strings do).
    constexpr loop_site(std::source_location where = std::source_location::current()) noexcept  // NOLINT
        : name_(where.file_name()), line_(where.line()), column_(where.column()) {}

    /// An explicit name, e.g. loop_site("jacobi/sweep"). The registry copies the text, so
    /// a temporary string is fine.
    explicit constexpr loop_site(std::string_view name) noexcept : name_(name), line_(0), column_(0) {}

    constexpr std::string_view name() const noexcept { return name_; }
    constexpr std::uint_least32_t line() const noexcept { return line_; }
    constexpr std::uint_least32_t column() const noexcept { return column_; }

    friend constexpr bool operator==(const loop_site&, const loop_site&) = default;

private:
    std::string_view name_;
    std::uint_least32_t line_;
    std::uint_least32_t column_;
};

}  // namespace aloe

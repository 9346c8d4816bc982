// Small helpers for plain (not JSON) text that several layers read or print: settings,
// schedule strings, rules files, reports.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace aloe::runtime {

/// `s` without leading and trailing ASCII whitespace (space, \t, \n, \v, \f, \r).
inline std::string_view trim(std::string_view s) noexcept {
    constexpr std::string_view blanks = " \t\n\v\f\r";
    const std::size_t first = s.find_first_not_of(blanks);
    if (first == std::string_view::npos) return {};
    return s.substr(first, s.find_last_not_of(blanks) - first + 1);
}

/// `x` with `digits` digits after the point ("%.*f"; the C locale's point).
inline std::string fixed(double x, int digits = 2) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, x);
    return buf;
}

}  // namespace aloe::runtime

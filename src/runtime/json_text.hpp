// JSON text for aloe's writers (statistics, `aloe info`, `aloe noise`, the workloads'
// records): one escaping rule and one number format, so every file parses the same way.
#pragma once

#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>

namespace aloe::runtime {

/// `s` as a JSON string literal, quotes included (control characters as \u00XX).
inline std::string json_quote(std::string_view s) {
    std::string out = "\"";
    for (const char ch : s) {
        switch (ch) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\t': out += "\\t"; break;
        default:
            if (static_cast<unsigned char>(ch) < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(ch)));
                out += buf;
            } else {
                out += ch;
            }
        }
    }
    return out + "\"";
}

/// `x` with enough digits to read back the same double; null for NaN and infinities,
/// which JSON cannot spell.
inline std::string json_number(double x) {
    if (!std::isfinite(x)) return "null";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", x);
    return buf;
}

}  // namespace aloe::runtime

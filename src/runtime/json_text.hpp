// JSON text for aloe's writers (statistics, `aloe info`, `aloe noise`, the workloads'
// records): one escaping rule and one number format, so every file parses the same way.
#pragma once

#include "runtime/utf8_text.hpp"

#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>

namespace aloe::runtime {

/// `s` as a JSON string literal, quotes included, always valid UTF-8 and valid JSON: `"` and
/// `\` escaped, control characters (and DEL) as \n, \t, \r, \b, \f or \u00XX, U+2028 and
/// U+2029 as \u2028/\u2029 (JavaScript before ES2019 reads them as line ends, and trace files
/// are opened in browser tools), valid multi-byte UTF-8 kept as it is.
///
/// Each ill-formed UTF-8 sequence (stray or truncated bytes, overlong forms, CESU-8
/// surrogates, beyond U+10FFFF; utf8_text.hpp) becomes one U+FFFD. Why not \u00XX per byte:
/// a JSON reader turns \u00e9 into the character é, so a broken name would come back as a
/// different, plausible one; U+FFFD is the standard's mark for "bytes lost here", and every
/// reader shows it as such. Site names come from file names and symbols, so in practice this
/// only happens to names that were never text.
inline std::string json_quote(std::string_view s) {
    std::string out;
    out.reserve(s.size() + 2);
    out += '"';
    for (std::size_t i = 0; i < s.size();) {
        const utf8_unit u = decode_utf8(s, i);
        const std::string_view bytes = s.substr(i, u.length);
        i += u.length;
        if (!u.well_formed) {
            out += "\xEF\xBF\xBD";  // U+FFFD
            continue;
        }
        switch (u.code_point) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\t': out += "\\t"; break;
        case '\r': out += "\\r"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        default:
            if (u.code_point < 0x20 || u.code_point == 0x7F || u.code_point == 0x2028 || u.code_point == 0x2029) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(u.code_point));
                out += buf;
            } else {
                out += bytes;
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

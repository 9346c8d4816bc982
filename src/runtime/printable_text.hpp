// Text from outside (a file, a variable, an argument) made safe to quote in a one-line
// message: a value with a newline, an escape sequence, a NUL, invalid UTF-8 or a right-to-
// left override must neither break the line, drive the terminal nor hide what was given.
// Every layer quotes user text through printable(), so one rule holds everywhere.
#pragma once

#include "runtime/utf8_text.hpp"

#include <cstddef>
#include <string>
#include <string_view>

namespace aloe::runtime {

/// Output bytes printable() keeps before it cuts: a message quotes a value, it does not
/// reproduce a 10 kB one. 80 shows any sensible schedule, site or number in full.
inline constexpr std::size_t printable_default_limit = 80;

/// Longer limit for file paths, which are often long and useless when cut.
inline constexpr std::size_t printable_path_limit = 1024;

namespace detail {

// Valid code points that print nothing or reorder the text around them: C1 controls, zero-width
// and direction marks, line/paragraph separators, bidi embeddings, overrides and isolates,
// invisible operators, the byte order mark.
constexpr bool invisible_code_point(char32_t c) noexcept {
    return (c >= 0x80 && c <= 0x9F) || (c >= 0x200B && c <= 0x200F) || (c >= 0x2028 && c <= 0x202E) ||
           (c >= 0x2060 && c <= 0x206F) || c == 0xFEFF;
}

inline void append_hex(std::string& out, const char* prefix, unsigned value, int digits) {
    static constexpr char hex[] = "0123456789abcdef";
    out += prefix;
    for (int shift = 4 * (digits - 1); shift >= 0; shift -= 4) out += hex[(value >> shift) & 0xFu];
}

}  // namespace detail

/// `text` with everything that is not plainly visible escaped: `\\` for a backslash, `\n`,
/// `\r`, `\t`, `\xNN` for any other control byte, DEL and each byte of an invalid UTF-8
/// sequence, `\uNNNN` for invisible or reordering code points (BOM, bidi overrides, C1).
/// Valid visible UTF-8 (é, 中) is kept. When the result would exceed `limit` bytes it is cut
/// at a character boundary and ends with "…". Pure; safe on any bytes.
inline std::string printable(std::string_view text, std::size_t limit = printable_default_limit) {
    std::string out;
    out.reserve(text.size() < limit ? text.size() : limit);
    std::string piece;
    for (std::size_t i = 0; i < text.size();) {
        const utf8_unit u = decode_utf8(text, i);
        piece.clear();
        if (!u.well_formed) {
            for (std::size_t k = 0; k < u.length; ++k)
                detail::append_hex(piece, "\\x", static_cast<unsigned char>(text[i + k]), 2);
        } else if (u.code_point == '\\') {
            piece = "\\\\";
        } else if (u.code_point == '\n') {
            piece = "\\n";
        } else if (u.code_point == '\r') {
            piece = "\\r";
        } else if (u.code_point == '\t') {
            piece = "\\t";
        } else if (u.code_point < 0x20 || u.code_point == 0x7F) {
            detail::append_hex(piece, "\\x", static_cast<unsigned>(u.code_point), 2);
        } else if (detail::invisible_code_point(u.code_point)) {
            detail::append_hex(piece, "\\u", static_cast<unsigned>(u.code_point), 4);
        } else {
            piece.assign(text.substr(i, u.length));
        }
        if (out.size() + piece.size() > limit) return out + "\xE2\x80\xA6";  // U+2026 "…"
        out += piece;
        i += u.length;
    }
    return out;
}

}  // namespace aloe::runtime

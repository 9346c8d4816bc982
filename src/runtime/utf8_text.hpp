// Strict UTF-8 decoding, one code point at a time, for the two places that must tell valid
// text from bytes: messages (printable_text.hpp) and JSON strings (json_text.hpp).
//
// Well-formed sequences are exactly those of the Unicode Standard's table 3-7: no overlong
// forms (C0, C1, E0 80..9F, F0 80..8F), no UTF-16 surrogates (ED A0..BF, so CESU-8 is
// refused), nothing above U+10FFFF (F4 90.., F5..FF). An ill-formed sequence is consumed as
// its "maximal subpart" (the longest prefix that could still have become well-formed, at
// least one byte), so one replacement stands for each broken character, as the standard
// recommends (section 3.9, "U+FFFD Substitution of Maximal Subparts").
#pragma once

#include <cstddef>
#include <string_view>

namespace aloe::runtime {

/// One step of decoding: a code point and the bytes it took, or an ill-formed run of bytes.
struct utf8_unit {
    char32_t code_point = 0;  ///< valid only when `well_formed`
    std::size_t length = 1;   ///< bytes consumed, at least 1
    bool well_formed = false;
};

/// Decodes the sequence starting at `text[at]` (`at` < text.size()). Never reads past the end.
inline utf8_unit decode_utf8(std::string_view text, std::size_t at) noexcept {
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
    const unsigned char lead = byte(at);
    if (lead < 0x80) return {lead, 1, true};
    std::size_t continuation = 0;
    char32_t cp = 0;
    // The first continuation byte's range narrows for E0, ED, F0 and F4 (table 3-7).
    unsigned char lo = 0x80, hi = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) {
        continuation = 1;
        cp = lead & 0x1Fu;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        continuation = 2;
        cp = lead & 0x0Fu;
        if (lead == 0xE0) lo = 0xA0;       // overlong below U+0800
        else if (lead == 0xED) hi = 0x9F;  // surrogates U+D800..DFFF
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        continuation = 3;
        cp = lead & 0x07u;
        if (lead == 0xF0) lo = 0x90;       // overlong below U+10000
        else if (lead == 0xF4) hi = 0x8F;  // above U+10FFFF
    } else {
        return {0, 1, false};  // a continuation byte alone, C0, C1, F5..FF
    }
    for (std::size_t n = 1; n <= continuation; ++n) {
        if (at + n >= text.size()) return {0, n, false};
        const unsigned char b = byte(at + n);
        if (b < lo || b > hi) return {0, n, false};
        cp = (cp << 6) | (b & 0x3Fu);
        lo = 0x80;
        hi = 0xBF;
    }
    return {cp, continuation + 1, true};
}

/// True when all of `text` is well-formed UTF-8.
inline bool is_valid_utf8(std::string_view text) noexcept {
    for (std::size_t i = 0; i < text.size();) {
        const utf8_unit u = decode_utf8(text, i);
        if (!u.well_formed) return false;
        i += u.length;
    }
    return true;
}

}  // namespace aloe::runtime

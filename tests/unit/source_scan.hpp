// Test helper: reading the project's own C and C++ sources as text, for the tests that check
// rules no compiler enforces (no getenv outside config.cpp, includes point down the layers).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

namespace aloe::testing {

inline bool is_identifier_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/// `text` with // and /* */ comments blanked out (string and character literals kept, so a
/// comment marker inside a string does not hide code after it). Newlines are kept, so line
/// numbers stay those of the file.
inline std::string strip_comments(const std::string& text) {
    std::string out;
    out.reserve(text.size());
    enum class state { code, line_comment, block_comment, string, character } s = state::code;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        const char next = i + 1 < text.size() ? text[i + 1] : '\0';
        switch (s) {
        case state::code:
            if (c == '/' && next == '/') {
                s = state::line_comment;
                ++i;
                out += "  ";
                continue;
            }
            if (c == '/' && next == '*') {
                s = state::block_comment;
                ++i;
                out += "  ";
                continue;
            }
            if (c == '"') s = state::string;
            // A quote after a digit or letter is a digit separator (1'000) or a literal's
            // prefix (u8'x' is rare enough to ignore), not the start of a character.
            if (c == '\'' && (out.empty() || !is_identifier_char(out.back()))) s = state::character;
            out += c;
            break;
        case state::line_comment:
            if (c == '\n') {
                s = state::code;
                out += c;
            } else {
                out += ' ';
            }
            break;
        case state::block_comment:
            if (c == '*' && next == '/') {
                s = state::code;
                ++i;
                out += "  ";
                continue;
            }
            out += c == '\n' ? '\n' : ' ';
            break;
        case state::string:
        case state::character:
            if (c == '\\' && i + 1 < text.size()) {
                out += c;
                out += next;
                ++i;
                continue;
            }
            if ((s == state::string && c == '"') || (s == state::character && c == '\'')) s = state::code;
            out += c;
            break;
        }
    }
    return out;
}

/// Whether `p` names a C or C++ source or header by its extension.
inline bool is_source(const std::filesystem::path& p) {
    static constexpr std::array<std::string_view, 11> extensions = {".c",   ".cc",  ".cpp", ".cxx", ".h",  ".hh",
                                                                    ".hpp", ".hxx", ".inl", ".ipp", ".tpp"};
    const std::string ext = p.extension().string();
    return std::find(extensions.begin(), extensions.end(), ext) != extensions.end();
}

/// The whole file, or an empty string when it cannot be read.
inline std::string read_file(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream buf;
    buf << in.rdbuf();
    return buf.str();
}

}  // namespace aloe::testing

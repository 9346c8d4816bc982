// Test helper: a small, strict JSON reader (RFC 8259) for checking what aloe's writers emit.
// Strict where lenient readers are not: the text must be well-formed UTF-8, control
// characters must be escaped, \u escapes must pair surrogates, numbers follow the grammar
// exactly (no leading zeros, no NaN), no trailing commas or text. Strings are decoded to
// UTF-8, so a test can compare a name it wrote with the name it reads back.
#pragma once

#include "runtime/utf8_text.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aloe::testing {

/// The shortest UTF-8 form of code point `cp` (written apart from the decoder under test).
inline std::string utf8_of(std::uint32_t cp) {
    std::string out;
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
    return out;
}

struct json_value {
    enum class kind_t { null, boolean, number, string, array, object } kind = kind_t::null;
    std::string text;  ///< string: decoded UTF-8; number: as written; boolean: "true"/"false"
    std::vector<json_value> items;                            ///< array
    std::vector<std::pair<std::string, json_value>> members;  ///< object, in order

    const json_value* member(std::string_view name) const {
        for (const auto& m : members)
            if (m.first == name) return &m.second;
        return nullptr;
    }
};

class strict_json_reader {
public:
    /// The value `text` holds, or nullopt with `error` saying where it went wrong.
    static std::optional<json_value> parse(std::string_view text, std::string& error) {
        if (!runtime::is_valid_utf8(text)) {
            error = "not valid UTF-8";
            return std::nullopt;
        }
        strict_json_reader r(text);
        json_value v;
        if (!r.value(v, 0) || (r.skip_blanks(), r.at_ != text.size())) {
            error = (r.error_.empty() ? std::string("trailing text") : r.error_) + " at byte " + std::to_string(r.at_);
            return std::nullopt;
        }
        return v;
    }

private:
    // Deep enough for any writer of ours; bounded so hostile input cannot overflow the stack.
    static constexpr int max_depth = 64;

    explicit strict_json_reader(std::string_view text) : s_(text) {}

    bool fail(const char* what) {
        if (error_.empty()) error_ = what;
        return false;
    }
    void skip_blanks() {
        while (at_ < s_.size() && (s_[at_] == ' ' || s_[at_] == '\t' || s_[at_] == '\n' || s_[at_] == '\r')) ++at_;
    }
    bool literal(std::string_view word) {
        if (s_.substr(at_, word.size()) != word) return fail("bad literal");
        at_ += word.size();
        return true;
    }

    bool value(json_value& v, int depth) {
        if (depth > max_depth) return fail("nested too deeply");
        skip_blanks();
        if (at_ >= s_.size()) return fail("value expected");
        const char c = s_[at_];
        if (c == 'n') return v.kind = json_value::kind_t::null, literal("null");
        if (c == 't') return v.kind = json_value::kind_t::boolean, v.text = "true", literal("true");
        if (c == 'f') return v.kind = json_value::kind_t::boolean, v.text = "false", literal("false");
        if (c == '"') return v.kind = json_value::kind_t::string, string(v.text);
        if (c == '[') return array(v, depth);
        if (c == '{') return object(v, depth);
        return v.kind = json_value::kind_t::number, number(v.text);
    }

    bool array(json_value& v, int depth) {
        v.kind = json_value::kind_t::array;
        ++at_;
        skip_blanks();
        if (at_ < s_.size() && s_[at_] == ']') return ++at_, true;
        for (;;) {
            v.items.emplace_back();
            if (!value(v.items.back(), depth + 1)) return false;
            skip_blanks();
            if (at_ >= s_.size()) return fail("unterminated array");
            if (s_[at_] == ']') return ++at_, true;
            if (s_[at_] != ',') return fail("',' or ']' expected");
            ++at_;
        }
    }

    bool object(json_value& v, int depth) {
        v.kind = json_value::kind_t::object;
        ++at_;
        skip_blanks();
        if (at_ < s_.size() && s_[at_] == '}') return ++at_, true;
        for (;;) {
            skip_blanks();
            std::string name;
            if (at_ >= s_.size() || s_[at_] != '"') return fail("member name expected");
            if (!string(name)) return false;
            skip_blanks();
            if (at_ >= s_.size() || s_[at_] != ':') return fail("':' expected");
            ++at_;
            v.members.emplace_back(std::move(name), json_value{});
            if (!value(v.members.back().second, depth + 1)) return false;
            skip_blanks();
            if (at_ >= s_.size()) return fail("unterminated object");
            if (s_[at_] == '}') return ++at_, true;
            if (s_[at_] != ',') return fail("',' or '}' expected");
            ++at_;
        }
    }

    bool digits() {
        const std::size_t from = at_;
        while (at_ < s_.size() && s_[at_] >= '0' && s_[at_] <= '9') ++at_;
        return at_ > from;
    }

    bool number(std::string& out) {
        const std::size_t from = at_;
        if (at_ < s_.size() && s_[at_] == '-') ++at_;
        if (at_ < s_.size() && s_[at_] == '0') {
            ++at_;
        } else if (at_ < s_.size() && s_[at_] >= '1' && s_[at_] <= '9') {
            digits();
        } else {
            return fail("number expected");
        }
        if (at_ < s_.size() && s_[at_] == '.') {
            ++at_;
            if (!digits()) return fail("digits expected after '.'");
        }
        if (at_ < s_.size() && (s_[at_] == 'e' || s_[at_] == 'E')) {
            ++at_;
            if (at_ < s_.size() && (s_[at_] == '+' || s_[at_] == '-')) ++at_;
            if (!digits()) return fail("digits expected in exponent");
        }
        out.assign(s_.substr(from, at_ - from));
        return true;
    }

    bool hex4(std::uint32_t& out) {
        if (at_ + 4 > s_.size()) return fail("short \\u escape");
        out = 0;
        for (int k = 0; k < 4; ++k) {
            const char c = s_[at_++];
            out <<= 4;
            if (c >= '0' && c <= '9') out |= static_cast<std::uint32_t>(c - '0');
            else if (c >= 'a' && c <= 'f') out |= static_cast<std::uint32_t>(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F') out |= static_cast<std::uint32_t>(c - 'A' + 10);
            else return fail("bad hex digit in \\u escape");
        }
        return true;
    }


    bool string(std::string& out) {
        ++at_;  // the opening quote
        for (;;) {
            if (at_ >= s_.size()) return fail("unterminated string");
            const auto c = static_cast<unsigned char>(s_[at_]);
            if (c == '"') return ++at_, true;
            if (c < 0x20) return fail("unescaped control character in string");
            if (c != '\\') {
                out += static_cast<char>(c);
                ++at_;
                continue;
            }
            if (++at_ >= s_.size()) return fail("unterminated escape");
            const char e = s_[at_++];
            switch (e) {
            case '"': out += '"'; break;
            case '\\': out += '\\'; break;
            case '/': out += '/'; break;
            case 'b': out += '\b'; break;
            case 'f': out += '\f'; break;
            case 'n': out += '\n'; break;
            case 'r': out += '\r'; break;
            case 't': out += '\t'; break;
            case 'u': {
                std::uint32_t cp = 0;
                if (!hex4(cp)) return false;
                if (cp >= 0xDC00 && cp <= 0xDFFF) return fail("lone low surrogate escape");
                if (cp >= 0xD800 && cp <= 0xDBFF) {
                    std::uint32_t low = 0;
                    if (s_.substr(at_, 2) != "\\u") return fail("high surrogate escape without its pair");
                    at_ += 2;
                    if (!hex4(low)) return false;
                    if (low < 0xDC00 || low > 0xDFFF) return fail("high surrogate escape without its pair");
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                }
                out += utf8_of(cp);
                break;
            }
            default: return fail("unknown escape");
            }
        }
    }

    std::string_view s_;
    std::size_t at_ = 0;
    std::string error_;
};

}  // namespace aloe::testing

#include "loop/schedules/spec_text.hpp"

#include "runtime/printable_text.hpp"

#include <aloe/error.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

namespace aloe::loop {

namespace {

using runtime::printable;

std::string spec_message(std::string_view spec, const std::string& what) {
    return "schedule '" + printable(spec) + "': " + what;
}

std::string outside(const std::string& shown, std::int64_t lo, std::int64_t hi) {
    return shown + " is outside [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
}

std::string outside(const std::string& shown, double lo, double hi) {
    return shown + " is outside [" + number(lo) + ", " + number(hi) + "]";
}

// from_chars reads '-' but not '+'; "+4" is 4. A second sign stays and is refused.
std::string_view without_plus(std::string_view v) {
    if (v.size() > 1 && v[0] == '+' && v[1] != '+' && v[1] != '-') v.remove_prefix(1);
    return v;
}

// The power of ten of the first significant digit of a decimal from_chars read whole
// ("3.2" 0, "0.0012" -3, "1e400" 400); only its sign is used, to tell an overflow from
// an underflow. Saturates, so a thousand-digit exponent is still just "large".
long decimal_exponent(std::string_view v) {
    constexpr long saturated = 1'000'000;
    std::size_t i = (!v.empty() && v[0] == '-') ? 1 : 0;
    long integer_digits = 0, leading_fraction_zeros = 0;
    bool significant = false;
    for (; i < v.size() && v[i] >= '0' && v[i] <= '9'; ++i) {
        significant = significant || v[i] != '0';
        if (significant && integer_digits < saturated) ++integer_digits;
    }
    if (i < v.size() && v[i] == '.') {
        for (++i; i < v.size() && v[i] >= '0' && v[i] <= '9'; ++i) {
            if (!significant && v[i] == '0' && leading_fraction_zeros < saturated) ++leading_fraction_zeros;
            else significant = true;
        }
    }
    long exponent = 0;
    if (i < v.size() && (v[i] == 'e' || v[i] == 'E')) {
        ++i;
        const bool negative = i < v.size() && v[i] == '-';
        if (i < v.size() && (v[i] == '-' || v[i] == '+')) ++i;
        for (; i < v.size() && v[i] >= '0' && v[i] <= '9'; ++i)
            exponent = std::min(saturated, exponent * 10 + (v[i] - '0'));
        if (negative) exponent = -exponent;
    }
    return (integer_digits > 0 ? integer_digits - 1 : -(leading_fraction_zeros + 1)) + exponent;
}

}  // namespace

std::string number(double x) {
    char buf[32];
    const auto end = std::to_chars(buf, buf + sizeof buf, x).ptr;
    return std::string(buf, end);
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

bool lists_key(std::string_view keys, std::string_view key) {
    for (;;) {
        const auto comma = keys.find(',');
        std::string_view name = keys.substr(0, comma);
        while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
        if (name == key) return true;
        if (comma == std::string_view::npos) return false;
        keys.remove_prefix(comma + 1);
    }
}

bool spec_reader::fail(const std::string& what) const {
    error_ = spec_message(spec_, what);
    return false;
}

bool spec_reader::has_key(std::string_view key) const {
    return std::find(keys_.begin(), keys_.end(), key) != keys_.end();
}

bool spec_reader::read_int(std::string_view key, std::string_view value, std::int64_t lo, std::int64_t hi,
                           std::int64_t& out) const {
    const std::string shown = std::string(key) + "=" + printable(value);
    const std::string_view digits = without_plus(value);
    std::int64_t x = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), x);
    if (end != digits.data() + digits.size() || (ec != std::errc() && ec != std::errc::result_out_of_range))
        return fail(shown + " is not an integer");
    if (ec == std::errc::result_out_of_range || x < lo || x > hi) return fail(outside(shown, lo, hi));
    out = x;
    return true;
}

bool spec_reader::read_real(std::string_view key, std::string_view value, double lo, double hi, double& out) const {
    const std::string shown = std::string(key) + "=" + printable(value);
    const std::string_view digits = without_plus(value);
    double x = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), x);
    if (end != digits.data() + digits.size() || (ec != std::errc() && ec != std::errc::result_out_of_range) ||
        std::isnan(x))
        return fail(shown + " is not a number");
    if (ec == std::errc::result_out_of_range) {
        // from_chars leaves x alone; IEEE rounding would give 0 or an infinity.
        const bool negative = digits.front() == '-';
        if (decimal_exponent(digits) < 0) x = 0;
        else x = negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    }
    if (x == 0) x = 0;  // -0 is 0
    if (!(x >= lo && x <= hi)) return fail(outside(shown, lo, hi));
    out = x;
    return true;
}

bool spec_reader::read_word_index(std::string_view key, std::string_view value,
                                  std::initializer_list<std::string_view> words, int& index) const {
    const std::string v = lower(value);
    std::string expected;
    int i = 0;
    for (const std::string_view word : words) {
        if (v == word) {
            index = i;
            return true;
        }
        expected += std::string(i == 0 ? "" : i + 1 == static_cast<int>(words.size()) ? " or " : ", ") +
                    std::string(word);
        ++i;
    }
    return fail(std::string(key) + "=" + printable(value) + " is not " + expected);
}

bool spec_reader::read_bool(std::string_view key, std::string_view value, bool& out) const {
    const std::string v = lower(value);
    if (v == "1" || v == "true") out = true;
    else if (v == "0" || v == "false") out = false;
    else return fail(std::string(key) + "=" + printable(value) + " is not 0 or 1");
    return true;
}

void value_check::integer(std::string_view key, std::int64_t x, std::int64_t lo, std::int64_t hi,
                          std::int64_t& out) {
    if (!problem_.empty()) return;
    // The parser reads back std::to_string(x) exactly, so only the range can fail.
    if (x < lo || x > hi) problem_ = outside(std::string(key) + "=" + std::to_string(x), lo, hi);
    else out = x;
}

void value_check::real(std::string_view key, double x, double lo, double hi, double& out) {
    if (!problem_.empty()) return;
    // The parser reads back number(x) exactly (the shortest round-trip text), nan as nan.
    if (std::isnan(x)) {
        problem_ = std::string(key) + "=" + number(x) + " is not a number";
        return;
    }
    const double value = x == 0 ? 0.0 : x;  // -0 is 0
    if (!(value >= lo && value <= hi)) problem_ = outside(std::string(key) + "=" + number(x), lo, hi);
    else out = value;
}

void value_check::fail(const std::string& spec) const { throw error(spec_message(spec, problem_)); }

}  // namespace aloe::loop

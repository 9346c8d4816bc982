#include "runtime/cpu_list.hpp"

#include <algorithm>
#include <charconv>
#include <iterator>

namespace aloe::runtime {
namespace {

// One CPU number at the front of `s` (plain digits), consumed; nullopt when there is none
// or it is above max_cpu_number.
std::optional<int> take_number(std::string_view& s) {
    std::size_t n = 0;
    while (n < s.size() && s[n] >= '0' && s[n] <= '9') ++n;
    if (n == 0) return std::nullopt;
    int value = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + n, value);
    if (ec != std::errc{} || end != s.data() + n || value > max_cpu_number) return std::nullopt;
    s.remove_prefix(n);
    return value;
}

}  // namespace

std::optional<std::vector<int>> parse_cpu_list(std::string_view text) {
    constexpr std::string_view blanks = " \t\r\n";
    const std::size_t first = text.find_first_not_of(blanks);
    if (first == std::string_view::npos) return std::vector<int>{};
    text = text.substr(first, text.find_last_not_of(blanks) - first + 1);
    std::vector<int> cpus;
    for (;;) {
        const std::optional<int> lo = take_number(text);
        if (!lo) return std::nullopt;
        int hi = *lo;
        if (!text.empty() && text.front() == '-') {
            text.remove_prefix(1);
            const std::optional<int> end = take_number(text);
            if (!end || *end < *lo) return std::nullopt;
            hi = *end;
        }
        for (int c = *lo; c <= hi; ++c) cpus.push_back(c);
        if (text.empty()) break;
        if (text.front() != ',') return std::nullopt;
        text.remove_prefix(1);
    }
    std::sort(cpus.begin(), cpus.end());
    cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
    return cpus;
}

std::string format_cpu_list(const std::vector<int>& cpus) {
    std::string out;
    for (std::size_t i = 0; i < cpus.size();) {
        std::size_t j = i;
        while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
        if (!out.empty()) out += ',';
        out += std::to_string(cpus[i]);
        if (j > i) out += '-' + std::to_string(cpus[j]);
        i = j + 1;
    }
    return out;
}

std::vector<int> intersect_cpus(const std::vector<int>& a, const std::vector<int>& b) {
    std::vector<int> both;
    std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(both));
    return both;
}

}  // namespace aloe::runtime

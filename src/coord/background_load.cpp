#include "coord/background_load.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>
#include <utility>

namespace aloe::coord {
namespace {

// The next blank-separated word of `s`, removed from it; empty at the end.
std::string_view next_word(std::string_view& s) {
    const std::size_t begin = std::min(s.find_first_not_of(" \t"), s.size());
    const std::size_t end = std::min(s.find_first_of(" \t", begin), s.size());
    const std::string_view word = s.substr(begin, end - begin);
    s.remove_prefix(end);
    return word;
}

// A whole word of decimal digits (no sign, no blanks, no overflow).
std::optional<std::uint64_t> number(std::string_view word) {
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), v);
    if (word.empty() || ec != std::errc{} || end != word.data() + word.size()) return std::nullopt;
    return v;
}

std::optional<std::string> read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) return std::nullopt;
    return std::move(text).str();
}

}  // namespace

std::optional<cpu_jiffies> parse_proc_stat(std::string_view text) {
    std::string_view line = text.substr(0, text.find('\n'));
    // "cpu " and not "cpu0 ": a per-CPU line is not the machine.
    if (!line.starts_with("cpu ")) return std::nullopt;
    line.remove_prefix(3);
    enum field { user, nice, system, idle, iowait, irq, softirq, steal, guest, guest_nice, known_fields };
    std::uint64_t f[known_fields] = {};
    std::size_t count = 0;
    for (std::string_view word = next_word(line); !word.empty(); word = next_word(line), ++count) {
        const std::optional<std::uint64_t> v = number(word);
        if (!v) return std::nullopt;
        if (count < known_fields) f[count] = *v;
    }
    if (count <= idle) return std::nullopt;
    // guest and guest_nice are left out: the kernel already adds them to user and nice.
    return cpu_jiffies{f[user] + f[nice] + f[system] + f[irq] + f[softirq] + f[steal], f[idle] + f[iowait]};
}

std::optional<std::uint64_t> parse_pid_stat_jiffies(std::string_view text) {
    // "pid (comm) state ppid ...": comm is up to 15 bytes of anything, blanks and ")" too, so only
    // the last ')' is sure to close it.
    const std::size_t open = text.find(" (");
    const std::size_t close = text.rfind(')');
    if (open == std::string_view::npos || close == std::string_view::npos || close < open + 2) return std::nullopt;
    if (!number(text.substr(0, open))) return std::nullopt;
    std::string_view rest = text.substr(close + 1);
    // Words after ')' start at field 3 (state); utime is field 14, stime field 15.
    constexpr int utime_word = 14 - 3;
    std::optional<std::uint64_t> utime;
    std::optional<std::uint64_t> stime;
    for (int i = 0; i <= utime_word + 1; ++i) {
        const std::string_view word = next_word(rest);
        if (word.empty()) return std::nullopt;
        if (i == utime_word) utime = number(word);
        if (i == utime_word + 1) stime = number(word);
    }
    if (!utime || !stime) return std::nullopt;
    return *utime + *stime;
}

double background_load_meter::sample(const cpu_jiffies& machine, std::span<const pid_jiffies> controlled) {
    std::uint64_t clients = 0;
    std::unordered_map<pid_t, std::uint64_t> seen;
    seen.reserve(controlled.size());
    for (const pid_jiffies& p : controlled) {
        // Only pids at both ends of the interval; an exited pid simply is not here.
        const auto before = last_pid_.find(p.pid);
        if (before != last_pid_.end() && p.jiffies >= before->second) clients += p.jiffies - before->second;
        seen[p.pid] = p.jiffies;
    }
    last_pid_ = std::move(seen);

    const std::optional<cpu_jiffies> before = std::exchange(last_machine_, machine);
    if (!before || machine.busy < before->busy || machine.idle < before->idle) return 0.0;
    const std::uint64_t busy = machine.busy - before->busy;
    const std::uint64_t total = busy + (machine.idle - before->idle);
    // Clients read a little after /proc/stat can exceed the machine's busy time: no load.
    // This also covers total == 0, since busy <= total.
    if (busy <= clients) return 0.0;
    return static_cast<double>(busy - clients) / static_cast<double>(total) * cpus_;
}

unsigned available_cores(unsigned cores, double uncontrolled_cpus, double threshold) {
    const double excess = uncontrolled_cpus - threshold;
    if (!(excess > 0.0)) return std::max(cores, 1u);  // also a NaN load
    if (excess >= cores) return 1;                    // keeps the cast below in range
    const auto taken = static_cast<unsigned>(std::ceil(excess));
    return std::max(cores - taken, 1u);
}

std::optional<cpu_jiffies> read_machine_jiffies(const std::string& proc_root) {
    const std::optional<std::string> text = read_text(proc_root + "/stat");
    return text ? parse_proc_stat(*text) : std::nullopt;
}

std::optional<std::uint64_t> read_pid_jiffies(pid_t pid, const std::string& proc_root) {
    const std::optional<std::string> text = read_text(proc_root + "/" + std::to_string(pid) + "/stat");
    return text ? parse_pid_stat_jiffies(*text) : std::nullopt;
}

}  // namespace aloe::coord

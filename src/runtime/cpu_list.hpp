// The kernel's CPU list syntax ("0-3,8"), as cpuset files, /sys/devices/system/cpu/online
// and taskset -c use it: read from cgroup files, written by `aloe info` and the reports.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aloe::runtime {

/// Largest CPU number a list may name: above Linux's largest NR_CPUS (8192) with room to
/// spare, and small enough that a corrupt range ("0-4000000000") cannot exhaust memory.
inline constexpr int max_cpu_number = 65535;

/// The CPUs of `text` ("0-3,8", blanks and a trailing newline allowed), ascending and
/// without duplicates; empty for an empty list. std::nullopt when `text` is not a list
/// (a reversed range, a sign, a number above max_cpu_number, stray characters).
std::optional<std::vector<int>> parse_cpu_list(std::string_view text);

/// `cpus` (ascending) as a list with ranges: {0,1,2,3,8} gives "0-3,8"; {} gives "".
std::string format_cpu_list(const std::vector<int>& cpus);

/// The CPUs in both ascending lists.
std::vector<int> intersect_cpus(const std::vector<int>& a, const std::vector<int>& b);

}  // namespace aloe::runtime

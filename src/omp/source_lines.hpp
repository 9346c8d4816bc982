// Code addresses to "file:line (function)" with binutils' addr2line, run once per batch of
// addresses (at exit for the summary; at a site's first use when a rules file names source
// lines). Without addr2line or debug information the answer is empty and the caller keeps
// the "module+0xOFFSET" name.
#pragma once

#include "runtime/code_address.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace aloe::omp {

using runtime::code_address;

/// One entry per address, in order: "file:line (function)", "file:line", or empty.
std::vector<std::string> source_lines(const std::vector<code_address>& addresses);

/// "file:line" alone from what source_lines() returned.
std::string file_and_line(const std::string& source_line);

}  // namespace aloe::omp

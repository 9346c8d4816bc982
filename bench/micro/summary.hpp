// summary.md: the targets, met or missed with their figures, and one table per test group.
#pragma once

#include "measure.hpp"
#include "results.hpp"

#include <string>
#include <vector>

namespace aloe_overhead {

void write_summary(const std::vector<group>& groups, const run_info& info, const std::string& path);

}  // namespace aloe_overhead

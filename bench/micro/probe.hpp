// --callgrind-probe: one variant, run a given number of times without timing, for counting
// instructions under valgrind (scripts/bench-callgrind.sh).
#pragma once

#include "options.hpp"

namespace aloe_overhead {

/// Runs o.probe o.probe_loops times and prints what it ran; exits with status 2 on an unknown
/// variant. Returns the program's exit status.
int callgrind_probe(const options& o);

}  // namespace aloe_overhead

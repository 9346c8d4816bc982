// aloe_overhead's command line: the settings of one run, parsed strictly. A bad flag or value
// is named on stderr and the program exits with status 2.
#pragma once

#include <string>

namespace aloe_overhead {

struct options {
    int threads = 0;
    int reps = 51;
    bool quick = false;
    std::string out;
    bool fork = true, balanced = true, chunk = true;
    bool settle = true;
    double settle_us = -1;  // < 0: measured
    double target_us = 3000;
    int iters_per_thread = 1024;
    double fork_delay_us = 0.1;
    double balanced_delay_us = 0.25;
    double chunk_delay_us = 0.1;
    std::string probe;  // --callgrind-probe
    int probe_loops = 1000;
    int probe_iters = 0;  // 0: 64 per thread
};

/// Names the problem on stderr and exits with status 2.
[[noreturn]] void usage_error(const std::string& what);

/// The options of argv; prints the help and exits on --help.
options parse_options(int argc, char** argv);

}  // namespace aloe_overhead

// aloe_overhead's command line: the help text, the strict number parsers and parse_options.
#include "options.hpp"

#include "runtime/cpu_mask.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <sstream>

#include <unistd.h>

namespace aloe_overhead {
namespace {

void print_help() {
    std::cout <<
        R"(aloe_overhead: EPCC-style loop overheads, aloe against libgomp, interleaved.

  --threads N        threads for both runtimes (default: nproc)
  --reps R           outer repetitions, every variant once per repetition (default 51)
  --quick            smoke run: 5 repetitions, short batches
  --out DIR          results folder (default bench/results/overhead-YYYYMMDD)
  --only LIST        fork, balanced, chunk (comma-separated; default all)
  --no-settle        do not sleep between variants (see README: unfair on few cores)
  --settle-us US     sleep this long between variants instead of the measured value
  --target-ms MS     length of one timed batch (default 3)
  --iters-per-thread K   schedbench's itersperthr (default 1024)
  --callgrind-probe V    run variant V --probe-loops times and exit (for callgrind);
                     V: serial, gomp-parallel, gomp-static, gomp-dynamic, gomp-guided,
                        aloe-static, aloe-dynamic, aloe-guided, aloe-hybrid,
                        aloe-staggered, aloe-staggered-mutex
  --probe-loops K    loops run by a probe (default 1000)
  --probe-iters N    iterations per probe loop (default 64 per thread)
)";
}

int parse_int(const std::string& flag, const char* v, int lo, int hi) {
    char* end = nullptr;
    errno = 0;
    const long x = std::strtol(v, &end, 10);
    if (end == v || *end != '\0' || errno != 0 || x < lo || x > hi)
        usage_error(flag + " needs an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got '" +
                    v + "'");
    return static_cast<int>(x);
}

double parse_double(const std::string& flag, const char* v, double lo, double hi) {
    char* end = nullptr;
    errno = 0;
    const double x = std::strtod(v, &end);
    if (end == v || *end != '\0' || errno != 0 || !(x >= lo && x <= hi))
        usage_error(flag + " needs a number in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got '" +
                    v + "'");
    return x;
}

std::string today() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    localtime_r(&t, &tm);
    char buf[16];
    std::strftime(buf, sizeof buf, "%Y%m%d", &tm);
    return buf;
}

}  // namespace

[[noreturn]] void usage_error(const std::string& what) {
    std::cerr << "aloe_overhead: " << what << " (see --help)\n";
    std::exit(2);
}

options parse_options(int argc, char** argv) {
    options o;
    // The CPUs this process may use (taskset, Slurm, a cgroup), not the machine's.
    o.threads = std::max(1, static_cast<int>(aloe::runtime::cpus_in_affinity_mask().size()));
    bool reps_given = false, target_given = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> const char* {
            if (i + 1 >= argc) usage_error(a + " needs a value");
            return argv[++i];
        };
        if (a == "--help" || a == "-h") {
            print_help();
            std::exit(0);
        } else if (a == "--threads") {
            o.threads = parse_int(a, value(), 1, 4096);
        } else if (a == "--reps") {
            o.reps = parse_int(a, value(), 1, 100000);
            reps_given = true;
        } else if (a == "--quick") {
            o.quick = true;
        } else if (a == "--out") {
            o.out = value();
            if (o.out.empty()) usage_error("--out needs a folder");
        } else if (a == "--only") {
            o.fork = o.balanced = o.chunk = false;
            std::stringstream list(value());
            for (std::string item; std::getline(list, item, ',');) {
                if (item == "fork") o.fork = true;
                else if (item == "balanced") o.balanced = true;
                else if (item == "chunk") o.chunk = true;
                else usage_error("--only takes fork, balanced or chunk, got '" + item + "'");
            }
        } else if (a == "--no-settle") {
            o.settle = false;
        } else if (a == "--settle-us") {
            o.settle_us = parse_double(a, value(), 0, 1e7);
        } else if (a == "--target-ms") {
            o.target_us = 1000 * parse_double(a, value(), 0.01, 10000);
            target_given = true;
        } else if (a == "--iters-per-thread") {
            o.iters_per_thread = parse_int(a, value(), 128, 1 << 20);
        } else if (a == "--callgrind-probe") {
            o.probe = value();
        } else if (a == "--probe-loops") {
            o.probe_loops = parse_int(a, value(), 1, 100000000);
        } else if (a == "--probe-iters") {
            o.probe_iters = parse_int(a, value(), 1, 100000000);
        } else {
            usage_error("unknown flag '" + a + "'");
        }
    }
    if (o.quick) {
        if (!reps_given) o.reps = 5;
        if (!target_given) o.target_us = 500;
    }
    if (o.out.empty()) o.out = "bench/results/overhead-" + today();
    return o;
}

}  // namespace aloe_overhead

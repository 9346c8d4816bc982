// The results folder: what a run records (run_info), the text helpers the reports share, and
// the writers of machine.txt, overhead.csv and raw/samples.csv (summary.md: summary.hpp).
// They only format what the groups measured.
#pragma once

#include "checks.hpp"
#include "measure.hpp"
#include "options.hpp"

#include <string>
#include <vector>

namespace aloe_overhead {

struct run_info {
    options opt;
    std::string command;
    double iters_per_us = 0;
    int fork_dl = 0, balanced_dl = 0, chunk_dl = 0;
    double gomp_spin_us = 0, aloe_spin_us = 0, spin_window_us = 0;
    double settle_us = 0;
    std::string settle_how;
    double seconds = 0;
    other_load before, during;  // other processes' share of the CPUs: 1 s before, and during the run
    double gomp_shared_cpu = 0, aloe_shared_cpu = 0;  // placement check (shared_cpu_share)
};

/// The output of a shell command, trailing newlines and spaces cut, or "(not available)".
std::string run_command(const std::string& cmd);

/// Writes one result file whole (runtime/output_file.hpp); a failure is printed, not fatal.
void save_result(const std::string& path, const std::string& text);

/// The OMP_*, GOMP_*, ALOE_* and KMP_* variables of this process, as NAME=value.
std::vector<std::string> runtime_environment();

/// "unbound", or the binding variables that are set.
std::string binding_text();

/// A path as written into the results: relative to the working directory when under it,
/// else its file name, so no machine path reaches a committed file.
std::string portable_path(const std::string& p);

std::string shell_quote(const std::string& s);

/// x with `decimals` decimals, or "n/a" for NaN.
std::string fmt(double x, int decimals = 3);

void write_machine(const run_info& info, const std::string& path);
void write_csv(const std::vector<group>& groups, const run_info& info, const std::string& path);
void write_raw(const std::vector<group>& groups, const std::string& dir);

}  // namespace aloe_overhead

// What every port of a Taskflow benchmark program shares: the options, the timing and the
// size/runtime table those programs print, and one entry point per benchmark.
//
// Each port solves the problem its Taskflow program (taskflow/benchmarks/<name>/) defines,
// with the same sizes, the same sweep and the same output, but with aloe's API. The problem
// definitions were read from those programs; the code here is written for aloe.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace taskflow_ports {

/// The command line, with Taskflow's flag names (-t, -r, -m, -f, -l) and two of our own.
struct options {
    std::string benchmark;
    std::string model = "aloe";  ///< accepted for symmetry with Taskflow's -m; only "aloe"
    unsigned num_threads = 1;
    unsigned num_rounds = 1;
    unsigned fibonacci = 40;     ///< fibonacci: the sweep runs f = 1 … this
    unsigned num_layers = 25;    ///< binary_tree: the sweep runs 1 … this layers
    std::string variant;         ///< which aloe construct builds the task graph ("" = default)
    std::string schedule;        ///< loop benchmarks: the aloe schedule ("" = default)
};

/// Times `fn()` as Taskflow's programs do: one interval, truncated to whole microseconds.
template <class F>
std::chrono::microseconds time_us(F&& fn) {
    const auto begin = std::chrono::steady_clock::now();
    fn();
    const auto end = std::chrono::steady_clock::now();
    return std::chrono::duration_cast<std::chrono::microseconds>(end - begin);
}

/// The table Taskflow's programs print: a header of two right-aligned 12-wide columns, then
/// per size the mean runtime over the rounds in milliseconds.
void print_header(const char* size_column = "size", const char* runtime_column = "runtime");
void print_row(std::size_t size, double total_us, unsigned rounds);

/// A wrong result: names the benchmark and what was wrong on stderr, exits with status 1.
[[noreturn]] void fail(const std::string& benchmark, const std::string& what);

/// A variant or schedule name that the benchmark does not know: exits with status 2.
[[noreturn]] void bad_choice(const std::string& benchmark, const std::string& what, const std::string& value,
                             const std::string& allowed);

void run_fibonacci(const options& o);
void run_binary_tree(const options& o);
void run_wavefront(const options& o);
void run_graph_traversal(const options& o);
void run_for_each(const options& o);
void run_reduce_sum(const options& o);
void run_black_scholes(const options& o);
void run_mandelbrot(const options& o);

}  // namespace taskflow_ports

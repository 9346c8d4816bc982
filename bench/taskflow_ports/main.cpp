// aloe_taskflow_ports: Taskflow's benchmark programs (taskflow/benchmarks/) ported to aloe's
// API, one program with the benchmark as its first argument. See README.md in this folder.
//
//   aloe_taskflow_ports fibonacci -t 2 -r 3 -f 30
//
// The flags are Taskflow's (-t/--num_threads, -r/--num_rounds, -m/--model, -f/--fibonacci,
// -l/--num_layers) and the output is theirs (the settings line, then a size/runtime table
// in milliseconds, one row per size of the benchmark's sweep), so one parser reads both.
// Two flags are ours: --variant (which aloe construct builds a task graph) and --schedule
// (the schedule of a loop benchmark). Every port checks its result; a wrong one exits 1.
#include "ports.hpp"

#include <aloe/team.hpp>

#include <cerrno>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <string>
#include <string_view>

namespace taskflow_ports {

void print_header(const char* size_column, const char* runtime_column) {
    std::cout << std::setw(12) << size_column << std::setw(12) << runtime_column << std::endl;
}

void print_row(std::size_t size, double total_us, unsigned rounds) {
    std::cout << std::setw(12) << size << std::setw(12) << total_us / rounds / 1e3 << std::endl;
}

void fail(const std::string& benchmark, const std::string& what) {
    std::cout.flush();
    std::cerr << "aloe_taskflow_ports: " << benchmark << ": wrong result: " << what << '\n';
    std::exit(1);
}

void bad_choice(const std::string& benchmark, const std::string& what, const std::string& value,
                const std::string& allowed) {
    std::cerr << "aloe_taskflow_ports: " << benchmark << ": unknown " << what << " '" << value << "' (one of "
              << allowed << ")\n";
    std::exit(2);
}

namespace {

constexpr std::string_view benchmarks_list =
    "fibonacci, binary_tree, wavefront, graph_traversal, for_each, reduce_sum, black_scholes, mandelbrot";

void print_help() {
    std::cout << R"(aloe_taskflow_ports BENCHMARK [flags]: Taskflow's benchmark programs on aloe.

  BENCHMARK              fibonacci, binary_tree, wavefront, graph_traversal, for_each,
                         reduce_sum, black_scholes, mandelbrot (or -b/--benchmark NAME)
  -t, --num_threads N    threads (default 1; sets ALOE_NUM_THREADS for the process team)
  -r, --num_rounds R     rounds per size; a row is their mean (default 1)
  -m, --model M          aloe (the only model; accepted for symmetry with Taskflow's)
  -f, --fibonacci F      fibonacci: largest n of the sweep 1..F (default 40)
  -l, --num_layers L     binary_tree: largest number of layers of the sweep 1..L (default 25)
  --variant V            the aloe construct of a task-graph benchmark:
                           fibonacci        group (task_group, default) | async (futures)
                           binary_tree      then (shared_future::then, default) | group
                           wavefront        dataflow (default) | group
                           graph_traversal  dataflow (default) | group
                         group = dependency counts kept by the port, ready tasks run on a
                         task_group (what a static task graph costs without futures)
  --schedule S           a loop benchmark's aloe schedule (defaults: for_each,
                         reduce_sum and black_scholes guided,divisor=4; mandelbrot
                         dynamic,chunk=1)

Output: Taskflow's (settings line, then size and runtime in ms per size). Exit status: 0,
1 a wrong result, 2 a bad command line.
)";
}

[[noreturn]] void usage_error(const std::string& what) {
    std::cerr << "aloe_taskflow_ports: " << what << " (see --help)\n";
    std::exit(2);
}

unsigned parse_count(const std::string& flag, const std::string& value, unsigned lo, unsigned hi) {
    char* end = nullptr;
    errno = 0;
    const unsigned long x = std::strtoul(value.c_str(), &end, 10);
    if (value.empty() || value[0] == '-' || *end != '\0' || errno != 0 || x < lo || x > hi)
        usage_error(flag + " needs an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got '" +
                    value + "'");
    return static_cast<unsigned>(x);
}

options parse_options(int argc, char** argv) {
    options o;
    for (int k = 1; k < argc; ++k) {
        std::string flag = argv[k];
        std::string value;
        bool has_value = false;
        if (const auto eq = flag.find('='); flag.rfind("--", 0) == 0 && eq != std::string::npos) {
            value = flag.substr(eq + 1);
            flag.resize(eq);
            has_value = true;
        }
        auto next = [&]() -> std::string {
            if (has_value) return value;
            if (k + 1 >= argc) usage_error(flag + " needs a value");
            return argv[++k];
        };
        if (flag == "-h" || flag == "--help") {
            print_help();
            std::exit(0);
        } else if (flag == "-b" || flag == "--benchmark") {
            o.benchmark = next();
        } else if (flag == "-t" || flag == "--num_threads") {
            o.num_threads = parse_count(flag, next(), 1, 4096);
        } else if (flag == "-r" || flag == "--num_rounds") {
            o.num_rounds = parse_count(flag, next(), 1, 1000000);
        } else if (flag == "-m" || flag == "--model") {
            o.model = next();
            if (o.model != "aloe") usage_error("-m/--model: this program runs only 'aloe', got '" + o.model + "'");
        } else if (flag == "-f" || flag == "--fibonacci") {
            o.fibonacci = parse_count(flag, next(), 1, 92);  // fib(93) overflows 64 bits
        } else if (flag == "-l" || flag == "--num_layers") {
            o.num_layers = parse_count(flag, next(), 1, 31);
        } else if (flag == "--variant") {
            o.variant = next();
        } else if (flag == "--schedule") {
            o.schedule = next();
        } else if (!flag.empty() && flag[0] != '-' && o.benchmark.empty() && !has_value) {
            o.benchmark = flag;
        } else {
            usage_error("unknown argument '" + std::string(argv[k]) + "'");
        }
    }
    if (o.benchmark.empty()) usage_error("name a benchmark: " + std::string(benchmarks_list));
    return o;
}

// The settings line of Taskflow's programs ("model=tf num_threads=2 num_rounds=1 "), with
// fibonacci's extra field; ours adds the variant or schedule when one was given.
void print_settings(const options& o) {
    std::cout << "model=" << o.model << ' ' << "num_threads=" << o.num_threads << ' ' << "num_rounds=" << o.num_rounds
              << ' ';
    if (o.benchmark == "fibonacci") std::cout << "fibonacci=" << o.fibonacci << ' ';
    if (!o.variant.empty()) std::cout << "variant=" << o.variant << ' ';
    if (!o.schedule.empty()) std::cout << "schedule=" << o.schedule << ' ';
    std::cout << std::endl;
}

}  // namespace
}  // namespace taskflow_ports

int main(int argc, char** argv) {
    using namespace taskflow_ports;
    const options o = parse_options(argc, argv);
    using runner = void (*)(const options&);
    struct entry {
        std::string_view name;
        runner run;
    };
    constexpr entry table[] = {
        {"fibonacci", run_fibonacci},         {"binary_tree", run_binary_tree}, {"wavefront", run_wavefront},
        {"graph_traversal", run_graph_traversal}, {"for_each", run_for_each}, {"reduce_sum", run_reduce_sum},
        {"black_scholes", run_black_scholes}, {"mandelbrot", run_mandelbrot},
    };
    runner run = nullptr;
    for (const entry& e : table)
        if (e.name == o.benchmark) run = e.run;
    if (run == nullptr) usage_error("unknown benchmark '" + o.benchmark + "' (one of " + std::string(benchmarks_list) + ")");

    // The process team is sized by ALOE_NUM_THREADS when it is first used; -t sets it, as
    // Taskflow's executor(num_threads) and TBB's global_control take -t. The team is made
    // here, before any timed interval, as Taskflow's programs make their executor.
    setenv("ALOE_NUM_THREADS", std::to_string(o.num_threads).c_str(), 1);
    if (aloe::team::global().size() != static_cast<int>(o.num_threads)) {
        std::cerr << "aloe_taskflow_ports: the process team has " << aloe::team::global().size()
                  << " workers, not the " << o.num_threads << " asked for\n";
        return 2;
    }
    print_settings(o);
    run(o);
    return 0;
}

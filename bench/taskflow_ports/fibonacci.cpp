// fibonacci (taskflow/benchmarks/fibonacci): fib(n) by the naive binary recursion, one task
// per call: fib(n-1) is spawned, fib(n-2) runs on the caller, then the caller waits (and runs
// other tasks meanwhile). The sweep is n = 1 … F (-f), each n timed over the rounds; a row's
// size is n. No work but the tasks: this measures spawn, steal and wait.
//
// Variants: `group` (default) spawns through an aloe::task_group, as Taskflow's TaskGroup and
// TBB's task_group do; `async` returns the spawned half through aloe::async's future (HPX's
// idiom). Both start the recursion as a task, as Taskflow's program does (executor.async),
// so it runs on a worker and its spawns go to a worker's own deque.
#include "ports.hpp"

#include <aloe/task.hpp>

#include <cstdint>
#include <string>

namespace taskflow_ports {
namespace {

std::uint64_t fib_group(unsigned n) {
    if (n < 2) return n;
    std::uint64_t first = 0;
    aloe::task_group group;
    group.run([&first, n] { first = fib_group(n - 1); });
    const std::uint64_t second = fib_group(n - 2);
    group.wait();
    return first + second;
}

std::uint64_t fib_async(unsigned n) {
    if (n < 2) return n;
    aloe::future<std::uint64_t> first = aloe::async(fib_async, n - 1);
    const std::uint64_t second = fib_async(n - 2);
    return first.get() + second;
}

std::uint64_t fib_reference(unsigned n) {
    std::uint64_t a = 0, b = 1;
    for (unsigned k = 0; k < n; ++k) {
        const std::uint64_t c = a + b;
        a = b;
        b = c;
    }
    return a;
}

}  // namespace

void run_fibonacci(const options& o) {
    const std::string variant = o.variant.empty() ? "group" : o.variant;
    std::uint64_t (*fib)(unsigned) = nullptr;
    if (variant == "group") fib = fib_group;
    else if (variant == "async") fib = fib_async;
    else bad_choice("fibonacci", "variant", variant, "group, async");

    print_header();
    for (unsigned n = 1; n <= o.fibonacci; ++n) {
        double total_us = 0;
        for (unsigned round = 0; round < o.num_rounds; ++round) {
            std::uint64_t result = 0;
            total_us += static_cast<double>(
                time_us([&] { result = aloe::async([fib, n] { return fib(n); }).get(); }).count());
            if (result != fib_reference(n))
                fail("fibonacci", "fib(" + std::to_string(n) + ") = " + std::to_string(result) + ", expected " +
                                      std::to_string(fib_reference(n)));
        }
        print_row(n, total_us, o.num_rounds);
    }
}

}  // namespace taskflow_ports

// fib: what a runtime's task costs to spawn, run and join, by the naive recursive Fibonacci.
// A call fib(k) with k >= --cutoff spawns fib(k-1) as a task, computes fib(k-2) itself, waits
// for the task and adds; below the cutoff the call recurses serially. Each task does almost
// nothing, so time per task is the runtime's overhead: spawn, steal, join (and, for aloe's
// futures, the shared state). One timestep computes fib(--n) once.
//
// Every runtime adds the same integers, so the value is exact: checksum fib(n) (n <= 78 fits
// a double's 53 bits), checked against the iterative value.
#include "common/harness.hpp"
#include "common/task_runtimes.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace {

using aloe_apps::usage_error;

std::uint64_t fib_serial(int k) noexcept {
    return k < 2 ? static_cast<std::uint64_t>(k) : fib_serial(k - 1) + fib_serial(k - 2);
}

/// fib(k) on the runtime of `rt` (common/task_runtimes.hpp): fib(k-1) as a task of a
/// fork-join group (aloe::task_group, tbb::task_group, an OpenMP task and taskwait,
/// tf::TaskGroup; serial: inline), fib(k-2) here.
template <class Tasks>
std::uint64_t fib(const Tasks& rt, int k, int cutoff) {
    if (k < cutoff) return fib_serial(k);
    std::uint64_t a = 0;
    auto g = rt.make_group();
    g.run([&rt, &a, k, cutoff] { a = fib(rt, k - 1, cutoff); });
    const std::uint64_t b = fib(rt, k - 2, cutoff);
    g.wait();
    return a + b;
}

/// aloe's other construct, HPX's idiom: fib(k-1) through aloe::async and its future.
std::uint64_t fib_aloe_future(int k, int cutoff) {
    if (k < cutoff) return fib_serial(k);
    aloe::future<std::uint64_t> a = aloe::async([k, cutoff] { return fib_aloe_future(k - 1, cutoff); });
    const std::uint64_t b = fib_aloe_future(k - 2, cutoff);
    return a.get() + b;
}

/// Calls fib(k) makes with k >= cutoff: one task each.
std::uint64_t tasks_of(int n, int cutoff) {
    std::vector<std::uint64_t> t(static_cast<std::size_t>(n) + 1, 0);
    for (int k = cutoff; k <= n; ++k) t[k] = 1 + t[k - 1] + t[k - 2];
    return t[n];
}

std::uint64_t fib_iterative(int n) noexcept {
    std::uint64_t a = 0, b = 1;
    for (int i = 0; i < n; ++i) b = std::exchange(a, b) + b;
    return a;
}

}  // namespace

int main(int argc, char** argv) {
    return aloe_apps::run_workload("fib", argc, argv, [](aloe_apps::harness& h) {
        auto& f = h.flags();
        const std::int64_t n = f.integer("--n", 32, "compute fib(N) each timestep (2..78)");
        const std::int64_t cutoff =
            f.integer("--cutoff", 12, "calls fib(k) with k >= CUTOFF spawn a task; below, serial (>= 2)");
        const std::string api =
            f.text("--api", "group", "aloe runs: group (aloe::task_group) or future (aloe::async, future::get)");
        if (n < 2 || n > 78) throw usage_error("flag --n: must be in [2, 78], not " + std::to_string(n));
        if (cutoff < 2) throw usage_error("flag --cutoff: must be at least 2, not " + std::to_string(cutoff));
        if (api != "group" && api != "future")
            throw usage_error("flag --api: expected group or future, not '" + api + "'");
        h.task_workload();
        h.default_steps(10, 2);
        h.start();
        h.param("n", n);
        h.param("cutoff", cutoff);
        if (h.runtime() == aloe_apps::runtime_kind::aloe) h.param("api", api);
        const int k = static_cast<int>(n), c = static_cast<int>(cutoff);
        h.param("tasks_per_step", h.runtime() == aloe_apps::runtime_kind::serial ? 0 : tasks_of(k, c));

        std::uint64_t value = 0;
        std::int64_t differing_steps = 0;
        const std::uint64_t expected = fib_iterative(k);
        h.run_steps([&](int) {
            if (h.runtime() == aloe_apps::runtime_kind::aloe && api == "future")
                value = fib_aloe_future(k, c);
            else
                aloe_apps::with_tasks(h, [&](const auto& rt) { value = fib(rt, k, c); });
            if (value != expected) ++differing_steps;
        });
        if (h.corrupt_result()) value += 1;
        h.checksum(static_cast<double>(value));
        h.check(value == expected, "fib(" + std::to_string(n) + ") of the last step against the iterative value",
                static_cast<double>(value), static_cast<double>(expected));
        h.check(differing_steps == 0, "steps whose fib(n) was not the iterative value",
                static_cast<double>(differing_steps), 0);
    });
}

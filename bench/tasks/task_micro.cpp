// Task-runtime micro-benchmarks, one program for every runtime so the measured code is the
// same machine code and only the task calls differ (bench/tasks/README.md):
//
//   fib    fib(n) with one spawn and one sync per call (a group per level): spawn + sync cost
//   empty  n empty tasks spawned by one thread, then one wait: spawn and run cost alone
//   spin   n tasks of d µs each (busy, measured on the clock) spawned as a binary tree:
//          efficiency = n·d / (threads · wall), the granularity study of Grubel ch. 6
//   idle   the runtime started (one task run on every worker), then `seconds` asleep: the
//          process's CPU time over that sleep, as a share of one core
//
// Runtimes: aloe, tbb (tbb::task_group), omp (OpenMP tasks: libgomp, or libomp when the
// driver puts libomp first under libgomp's name), taskflow (when built with
// ALOE_TASKFLOW_DIR), hpx (HPX's local runtime, when built with ALOE_HPX_DIR), async
// (std::async, a thread per task: spin and empty), serial (no runtime: the bodies in a plain
// loop, fib and empty: the floor under every runtime's time per task).
// Output: one JSON object per line.
#include <aloe/task.hpp>
#include <aloe/team.hpp>

#include "task/task_pool.hpp"  // set_counting: the counters' cost, measured (never for programs)

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>
#include <omp.h>
#if defined(ALOE_BENCH_TASKFLOW)
#include <taskflow/taskflow.hpp>
#endif
#if defined(ALOE_BENCH_HPX)
#include <hpx/experimental/task_group.hpp>
#include <hpx/future.hpp>
#include <hpx/init_runtime_local/init_runtime_local.hpp>
#include <hpx/runtime.hpp>
#endif

#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
    return std::chrono::duration<double>(clock_type::now() - t0).count();
}

// Busy for `us` microseconds of wall time (what a task of that duration costs a core).
void spin_for(double us) {
    const auto end = clock_type::now() + std::chrono::duration<double, std::micro>(us);
    while (clock_type::now() < end) {
    }
}

std::atomic<std::uint64_t> sink{0};

std::int64_t fib_serial(int n) { return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2); }

std::int64_t fib_tasks_count(int n) { return n < 2 ? 1 : 1 + fib_tasks_count(n - 1) + fib_tasks_count(n - 2); }

// --- aloe ----------------------------------------------------------------------------------

std::int64_t fib_aloe(int n) {
    if (n < 2) return n;
    std::int64_t a = 0;
    aloe::task_group g;
    g.run([&a, n] { a = fib_aloe(n - 1); });
    const std::int64_t b = fib_aloe(n - 2);
    g.wait();
    return a + b;
}

void tree_aloe(aloe::task_group& g, std::int64_t lo, std::int64_t hi, double us) {
    while (hi - lo > 1) {
        const std::int64_t mid = lo + (hi - lo) / 2;
        g.run([&g, mid, hi, us] { tree_aloe(g, mid, hi, us); });
        hi = mid;
    }
    spin_for(us);
}

// --- oneTBB --------------------------------------------------------------------------------

std::int64_t fib_tbb(int n) {
    if (n < 2) return n;
    std::int64_t a = 0;
    tbb::task_group g;
    g.run([&a, n] { a = fib_tbb(n - 1); });
    const std::int64_t b = fib_tbb(n - 2);
    g.wait();
    return a + b;
}

void tree_tbb(tbb::task_group& g, std::int64_t lo, std::int64_t hi, double us) {
    while (hi - lo > 1) {
        const std::int64_t mid = lo + (hi - lo) / 2;
        g.run([&g, mid, hi, us] { tree_tbb(g, mid, hi, us); });
        hi = mid;
    }
    spin_for(us);
}

// --- OpenMP tasks --------------------------------------------------------------------------

std::int64_t fib_omp(int n) {
    if (n < 2) return n;
    std::int64_t a = 0;
#pragma omp task shared(a) firstprivate(n)
    a = fib_omp(n - 1);
    const std::int64_t b = fib_omp(n - 2);
#pragma omp taskwait
    return a + b;
}

void tree_omp(std::int64_t lo, std::int64_t hi, double us) {
    while (hi - lo > 1) {
        const std::int64_t mid = lo + (hi - lo) / 2;
#pragma omp task firstprivate(mid, hi, us)
        tree_omp(mid, hi, us);
        hi = mid;
    }
    spin_for(us);
}

// --- Taskflow ------------------------------------------------------------------------------

#if defined(ALOE_BENCH_TASKFLOW)
// Taskflow's own idiom (its benchmarks/fibonacci): a TaskGroup per call, corun to wait.
std::int64_t fib_taskflow(int n, tf::Executor& ex) {
    if (n < 2) return n;
    std::int64_t a = 0;
    tf::TaskGroup tg = ex.task_group();
    tg.silent_async([&a, n, &ex] { a = fib_taskflow(n - 1, ex); });
    const std::int64_t b = fib_taskflow(n - 2, ex);
    tg.corun();
    return a + b;
}

// A TaskGroup belongs to the worker that made it: one per level, as fib.
void tree_taskflow(tf::Executor& ex, std::int64_t lo, std::int64_t hi, double us) {
    tf::TaskGroup tg = ex.task_group();
    while (hi - lo > 1) {
        const std::int64_t mid = lo + (hi - lo) / 2;
        tg.silent_async([&ex, mid, hi, us] { tree_taskflow(ex, mid, hi, us); });
        hi = mid;
    }
    spin_for(us);
    tg.corun();
}
#endif

// --- HPX ----------------------------------------------------------------------------------

#if defined(ALOE_BENCH_HPX)
// HPX's own idiom: every call's spawn is an hpx::async (a new HPX thread), its sync the
// future's get (which suspends the calling HPX thread, not its worker).
std::int64_t fib_hpx(int n) {
    if (n < 2) return n;
    hpx::future<std::int64_t> a = hpx::async(fib_hpx, n - 1);
    const std::int64_t b = fib_hpx(n - 2);
    return a.get() + b;
}

// The tree as tbb's: one hpx::experimental::task_group, run from inside the tasks too.
void tree_hpx(hpx::experimental::task_group& g, std::int64_t lo, std::int64_t hi, double us) {
    while (hi - lo > 1) {
        const std::int64_t mid = lo + (hi - lo) / 2;
        g.run([&g, mid, hi, us] { tree_hpx(g, mid, hi, us); });
        hi = mid;
    }
    spin_for(us);
}

// HPX's local runtime with `threads` worker threads, started with no hpx_main: this thread
// stays outside it, hands each run in and waits on its future (as the Taskflow peer's
// executor), and sleeps outside it for `idle`. HPX sees none of this program's options; it
// keeps to the process's CPU mask (taskset), as the others do. No guard page under each HPX
// thread's stack: every hpx::async is a thread with its own mmap'd stack, and fib keeps tens of
// thousands of them suspended, so with guard pages fib(26) already runs out of Linux's default
// vm.max_map_count (65530 mappings) and HPX stops (its own message suggests this setting).
class hpx_runtime {
public:
    hpx_runtime(int threads, char* argv0) : args_{argv0, nullptr} {
        hpx::local::init_params p;
        p.cfg = {"hpx.os_threads!=" + std::to_string(threads),  // "!=": set, or add where HPX has no entry
                 "hpx.use_process_mask!=1", "hpx.stacks.use_guard_pages!=0"};
        if (!hpx::local::start(nullptr, 1, args_, p)) throw std::runtime_error("hpx: the runtime did not start");
        if (hpx::get_num_worker_threads() != static_cast<std::size_t>(threads)) {
            stop();
            throw std::runtime_error("hpx: " + std::to_string(hpx::get_num_worker_threads()) + " worker threads, not " +
                                     std::to_string(threads));
        }
    }
    hpx_runtime(const hpx_runtime&) = delete;
    hpx_runtime& operator=(const hpx_runtime&) = delete;
    ~hpx_runtime() { stop(); }

private:
    void stop() {
        if (stopped_) return;
        stopped_ = true;
        hpx::post([] { hpx::local::finalize(); });
        hpx::local::stop();
    }
    char* args_[2];
    bool stopped_ = false;
};
#endif

struct options {
    std::string runtime = "aloe", bench = "fib";
    int threads = 2;
    std::int64_t n = 25;
    double us = 10;
    double seconds = 2;
    int reps = 5;
    bool counters = true;  // aloe: the task counters on (always, outside this measurement)
};

[[noreturn]] void usage(const std::string& why) {
    std::fprintf(stderr,
                 "aloe-bench-tasks: %s\n"
                 "usage: aloe-bench-tasks --runtime aloe|tbb|omp|taskflow|hpx|async|serial --bench fib|empty|spin|idle\n"
                 "                        [--threads P] [--n N] [--us D] [--seconds S] [--reps R]\n",
                 why.c_str());
    std::exit(2);
}

options parse(int argc, char** argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (i + 1 >= argc) usage("'" + a + "' needs a value");
        const char* v = argv[++i];
        char* end = nullptr;
        if (a == "--runtime") o.runtime = v;
        else if (a == "--bench") o.bench = v;
        else if (a == "--threads") o.threads = static_cast<int>(std::strtol(v, &end, 10));
        else if (a == "--n") o.n = std::strtoll(v, &end, 10);
        else if (a == "--us") o.us = std::strtod(v, &end);
        else if (a == "--seconds") o.seconds = std::strtod(v, &end);
        else if (a == "--reps") o.reps = static_cast<int>(std::strtol(v, &end, 10));
        else if (a == "--counters") {
            if (std::strcmp(v, "on") != 0 && std::strcmp(v, "off") != 0) usage("--counters takes on or off");
            o.counters = std::strcmp(v, "on") == 0;
        }
        else usage("unknown option '" + a + "'");
        if (end != nullptr && *end != '\0') usage("'" + a + " " + v + "' is not a number");
    }
    if (o.threads < 1 || o.n < 1 || o.us < 0 || o.reps < 1 || o.seconds <= 0) usage("a value is out of range");
    return o;
}

double cpu_seconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// One measured repetition; returns wall seconds (idle: CPU seconds over the sleep).
template <class Fib, class Empty, class Tree, class Warm>
double run_once(const options& o, Fib&& fib, Empty&& empty, Tree&& tree, Warm&& warm) {
    if (o.bench == "fib") {
        const auto t0 = clock_type::now();
        const std::int64_t r = fib(static_cast<int>(o.n));
        const double s = seconds_since(t0);
        if (r != fib_serial(static_cast<int>(o.n))) throw std::runtime_error("fib: wrong result");
        return s;
    }
    if (o.bench == "empty") {
        const auto t0 = clock_type::now();
        empty(o.n);
        return seconds_since(t0);
    }
    if (o.bench == "spin") {
        const auto t0 = clock_type::now();
        tree(o.n, o.us);
        return seconds_since(t0);
    }
    warm();
    const double c0 = cpu_seconds();
    std::this_thread::sleep_for(std::chrono::duration<double>(o.seconds));
    return cpu_seconds() - c0;
}

}  // namespace

int main(int argc, char** argv) {
    const options o = parse(argc, argv);
    std::atomic<std::int64_t> counter{0};
    auto emit = [&](double value, int rep) {
        const double tasks = o.bench == "fib" ? static_cast<double>(fib_tasks_count(static_cast<int>(o.n)) / 2)
                                              : static_cast<double>(o.n);
        std::printf("{\"runtime\":\"%s\",\"bench\":\"%s\",\"threads\":%d,\"n\":%lld,\"us\":%g,\"rep\":%d,"
                    "\"counters\":%s,\"%s\":%.9g,\"tasks\":%.0f}\n",
                    o.runtime.c_str(), o.bench.c_str(), o.threads, static_cast<long long>(o.n), o.us, rep,
                    o.counters ? "true" : "false",
                    o.bench == "idle" ? "cpu_s" : "wall_s", value, tasks);
        std::fflush(stdout);
    };
    try {
        if (o.runtime == "aloe") {
            if (aloe::team::global().size() != o.threads)
                usage("aloe's team has " + std::to_string(aloe::team::global().size()) +
                      " threads: set ALOE_NUM_THREADS=" + std::to_string(o.threads));
            aloe::task::task_pool::process().set_counting(o.counters);
            for (int r = 0; r < o.reps; ++r)
                emit(run_once(
                         o, fib_aloe,
                         [&](std::int64_t n) {
                             aloe::task_group g;
                             for (std::int64_t i = 0; i < n; ++i) g.run([&counter] { counter.fetch_add(0, std::memory_order_relaxed); });
                             g.wait();
                         },
                         [](std::int64_t n, double us) {
                             aloe::task_group g;
                             tree_aloe(g, 0, n, us);
                             g.wait();
                         },
                         [&] {
                             aloe::task_group g;
                             for (int i = 0; i < 4 * o.threads; ++i) g.run([] { spin_for(100); });
                             g.wait();
                         }),
                     r);
        } else if (o.runtime == "tbb") {
            tbb::global_control limit(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(o.threads));
            for (int r = 0; r < o.reps; ++r)
                emit(run_once(
                         o, fib_tbb,
                         [&](std::int64_t n) {
                             tbb::task_group g;
                             for (std::int64_t i = 0; i < n; ++i) g.run([&counter] { counter.fetch_add(0, std::memory_order_relaxed); });
                             g.wait();
                         },
                         [](std::int64_t n, double us) {
                             tbb::task_group g;
                             tree_tbb(g, 0, n, us);
                             g.wait();
                         },
                         [&] {
                             tbb::task_group g;
                             for (int i = 0; i < 4 * o.threads; ++i) g.run([] { spin_for(100); });
                             g.wait();
                         }),
                     r);
        } else if (o.runtime == "omp") {
            omp_set_num_threads(o.threads);
            for (int r = 0; r < o.reps; ++r)
                emit(run_once(
                         o,
                         [](int n) {
                             std::int64_t v = 0;
#pragma omp parallel
#pragma omp single
                             v = fib_omp(n);
                             return v;
                         },
                         [&](std::int64_t n) {
#pragma omp parallel
#pragma omp single
                             for (std::int64_t i = 0; i < n; ++i) {
#pragma omp task shared(counter)
                                 counter.fetch_add(0, std::memory_order_relaxed);
                             }
                         },
                         [](std::int64_t n, double us) {
#pragma omp parallel
#pragma omp single
                             tree_omp(0, n, us);
                         },
                         [&] {
#pragma omp parallel
                             spin_for(100);
                         }),
                     r);
#if defined(ALOE_BENCH_TASKFLOW)
        } else if (o.runtime == "taskflow") {
            tf::Executor executor(static_cast<std::size_t>(o.threads));
            for (int r = 0; r < o.reps; ++r)
                emit(run_once(
                         o, [&](int n) { return executor.async([&executor, n] { return fib_taskflow(n, executor); }).get(); },
                         [&](std::int64_t n) {
                             executor.async([&executor, &counter, n] {
                                         tf::TaskGroup tg = executor.task_group();
                                         for (std::int64_t i = 0; i < n; ++i)
                                             tg.silent_async([&counter] { counter.fetch_add(0, std::memory_order_relaxed); });
                                         tg.corun();
                                     }).get();
                         },
                         [&](std::int64_t n, double us) {
                             executor.async([&executor, n, us] { tree_taskflow(executor, 0, n, us); }).get();
                         },
                         [&] {
                             for (int i = 0; i < 4 * o.threads; ++i) executor.silent_async([] { spin_for(100); });
                             executor.wait_for_all();
                         }),
                     r);
#endif
#if defined(ALOE_BENCH_HPX)
        } else if (o.runtime == "hpx") {
            hpx_runtime runtime(o.threads, argv[0]);
            for (int r = 0; r < o.reps; ++r)
                emit(run_once(
                         o, [](int n) { return hpx::async(fib_hpx, n).get(); },
                         [&](std::int64_t n) {
                             hpx::async([&counter, n] {
                                 hpx::experimental::task_group g;
                                 for (std::int64_t i = 0; i < n; ++i)
                                     g.run([&counter] { counter.fetch_add(0, std::memory_order_relaxed); });
                                 g.wait();
                             }).get();
                         },
                         [](std::int64_t n, double us) {
                             hpx::async([n, us] {
                                 hpx::experimental::task_group g;
                                 tree_hpx(g, 0, n, us);
                                 g.wait();
                             }).get();
                         },
                         [&] {
                             hpx::async([&o] {
                                 hpx::experimental::task_group g;
                                 for (int i = 0; i < 4 * o.threads; ++i) g.run([] { spin_for(100); });
                                 g.wait();
                             }).get();
                         }),
                     r);
#endif
        } else if (o.runtime == "serial") {
            // No runtime: the same bodies called in a plain loop (fib: the plain recursion), the
            // floor under every runtime's time per task.
            if (o.bench != "fib" && o.bench != "empty") usage("--runtime serial runs fib and empty only");
            for (int r = 0; r < o.reps; ++r)
                emit(run_once(
                         o, [](int n) { return fib_serial(n); },
                         [&](std::int64_t n) {
                             for (std::int64_t i = 0; i < n; ++i) counter.fetch_add(0, std::memory_order_relaxed);
                         },
                         [](std::int64_t, double) {}, [] {}),
                     r);
        } else if (o.runtime == "async") {
            if (o.bench != "spin" && o.bench != "empty") usage("--runtime async runs spin and empty only");
            for (int r = 0; r < o.reps; ++r)
                emit(run_once(
                         o, [](int) -> std::int64_t { return 0; },
                         [&](std::int64_t n) {
                             std::vector<std::future<void>> f;
                             for (std::int64_t i = 0; i < n; ++i)
                                 f.push_back(std::async(std::launch::async, [&counter] { counter.fetch_add(0); }));
                             for (auto& x : f) x.get();
                         },
                         [](std::int64_t n, double us) {
                             std::vector<std::future<void>> f;
                             for (std::int64_t i = 0; i < n; ++i)
                                 f.push_back(std::async(std::launch::async, [us] { spin_for(us); }));
                             for (auto& x : f) x.get();
                         },
                         [] {}),
                     r);
        } else {
            usage("unknown runtime '" + o.runtime + "'");
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "aloe-bench-tasks: %s\n", e.what());
        return 1;
    }
    return 0;
}

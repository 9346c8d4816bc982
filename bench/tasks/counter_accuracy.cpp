// The task counters against an independent measurement: n tasks that each spin d µs on
// std::chrono's clock (not the runtime's), timed by themselves; Σ of their own durations
// against /threads/time/cumulative, and wall × threads against /threads/time/overall.
//   aloe-bench-counter-accuracy [n] [d_us]   (ALOE_NUM_THREADS sets the threads)
#include <aloe/stats.hpp>
#include <aloe/task.hpp>
#include <aloe/team.hpp>

#include <atomic>
#include <thread>
#include <chrono>
#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
    using clk = std::chrono::steady_clock;
    const long n = argc > 1 ? std::atol(argv[1]) : 20000;
    const double d = argc > 2 ? std::atof(argv[2]) : 10.0;
    const int p = aloe::team::global().size();
    std::atomic<long long> own_ns{0};
    aloe::counter_reader exec("/threads{locality#0/total}/time/cumulative");
    aloe::counter_reader overall("/threads{locality#0/total}/time/overall");
    aloe::counter_reader tasks("/threads{locality#0/total}/count/cumulative");
    const auto t0 = clk::now();
    {
        aloe::task_group g;
        for (long i = 0; i < n; ++i)
            g.run([&] {
                const auto s = clk::now();
                const auto end = s + std::chrono::duration<double, std::micro>(d);
                auto now = s;
                while (now < end) now = clk::now();
                own_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(now - s).count();
            });
        g.wait();
    }
    const double wall_ns = std::chrono::duration<double, std::nano>(clk::now() - t0).count();
    // The last task's counts land just after its group sees it done: let them settle.
    for (int i = 0; i < 1000 && tasks.peek().at(0).value < static_cast<std::uint64_t>(n); ++i)
        std::this_thread::yield();
    const double e = static_cast<double>(exec.delta().at(0).value);
    const double o = static_cast<double>(overall.delta().at(0).value);
    std::printf("threads %d tasks %ld d %.1f us\n", p, n, d);
    std::printf("  sum of the tasks' own durations %.3f ms, /threads/time/cumulative %.3f ms: %+.2f%%\n",
                static_cast<double>(own_ns.load()) / 1e6, e / 1e6, 100 * (e / static_cast<double>(own_ns.load()) - 1));
    std::printf("  wall x threads %.3f ms, /threads/time/overall %.3f ms: %+.2f%%\n", wall_ns * p / 1e6, o / 1e6,
                100 * (o / (wall_ns * p) - 1));
    return 0;
}

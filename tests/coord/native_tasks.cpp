// An aloe-native task program for daemon_scenarios.py (native_tasks): runs rounds of small
// tasks for the given seconds and prints the task concurrency it ran with, as
// "concurrency seen: 1:12 2:345" (rounds per value); the node daemon's share sets it. Prints
// "running" once its first round ended.
#include <aloe/task.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>

int main(int argc, char** argv) {
    const double seconds = argc > 1 ? std::atof(argv[1]) : 1.0;
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    std::map<int, long> seen;
    bool announced = false;
    while (std::chrono::steady_clock::now() < end) {
        aloe::task_group g;
        for (int i = 0; i < 64; ++i)
            g.run([] {
                volatile double x = 0;
                for (int k = 0; k < 20000; ++k) x = x + 1e-9;
            });
        g.wait();
        ++seen[aloe::task_concurrency()];
        if (!announced) {
            std::printf("running\n");
            std::fflush(stdout);
            announced = true;
        }
    }
    std::printf("concurrency seen:");
    for (const auto& [k, n] : seen) std::printf(" %d:%ld", k, n);
    std::printf("\n");
    return 0;
}

// A program for tests/process/counter_print_test.cpp: it counts fixed values into the task
// scheduler's raw counters (under the object "probe") and their idle-rate, then ends as its
// one argument says, so that the printer ALOE_PRINT_COUNTER arms at load prints at exit.
//
//   counts     hits 42, and per worker t_func/t_exec of 1000/750 (slot 0), 2000/500 (slot 1);
//              returns from main
//   fork       counts; a child adds 7 hits and exits normally; another child execs /bin/true;
//              writes "children <pid> <pid>" on stderr and returns once both have ended
//   steps      5 steps of 10 hits, 20 ms apart
//   busy-exit  counts; two threads keep counting while main calls exit()
#include "runtime/counters.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <thread>

namespace {

using namespace aloe::runtime;

struct probe_counters {
    counter_handle hits = register_counter({.object = "probe", .name = "hits"});
    counter_handle overall = register_counter({.object = "probe", .name = "time/overall", .unit = aloe::counter_unit::nanoseconds});
    counter_handle cumulative =
        register_counter({.object = "probe", .name = "time/cumulative", .unit = aloe::counter_unit::nanoseconds});

    probe_counters() {
        register_derived_counter({.object = "probe", .name = "idle-rate", .unit = aloe::counter_unit::ratio,
                                  .a = overall, .b = cumulative, .c = overall, .scale = 1'000'000,
                                  .empty_value = 1'000'000});
    }

    void count() const {
        hits.add_for_worker(0, 42);
        overall.add_for_worker(0, 1000);
        cumulative.add_for_worker(0, 750);
        overall.add_for_worker(1, 2000);
        cumulative.add_for_worker(1, 500);
    }
};

int wait_for(pid_t pid) {
    int status = 0;
    if (pid < 0 || ::waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
    return WEXITSTATUS(status);
}

}  // namespace

int main(int argc, char** argv) {
    const std::string_view scenario = argc > 1 ? argv[1] : "counts";
    const probe_counters c;
    if (scenario == "counts") {
        c.count();
        return 0;
    }
    if (scenario == "fork") {
        c.count();
        const pid_t child = ::fork();
        if (child == 0) {
            c.hits.add_for_worker(0, 7);
            std::exit(0);  // a normal exit: this child prints its own counts
        }
        const pid_t exec_child = ::fork();
        if (exec_child == 0) {
            ::execl("/bin/true", "true", static_cast<char*>(nullptr));
            ::_exit(127);
        }
        std::fprintf(stderr, "children %ld %ld\n", static_cast<long>(child), static_cast<long>(exec_child));
        return wait_for(child) == 0 && wait_for(exec_child) == 0 ? 0 : 3;
    }
    if (scenario == "steps") {
        for (int step = 0; step < 5; ++step) {
            c.hits.add(10);
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        return 0;
    }
    if (scenario == "busy-exit") {
        c.count();
        for (int t = 0; t < 2; ++t)
            std::thread([&c] {
                for (;;) c.hits.add(1);
            }).detach();
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
        std::exit(0);
    }
    std::fprintf(stderr, "unknown scenario '%.*s'\n", static_cast<int>(scenario.size()), scenario.data());
    return 2;
}

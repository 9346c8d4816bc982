// A program for the process.task_exit tests: tasks queued when the process exits. With
// set_task_concurrency(1) the workers run none, so the tasks of dropped futures stay queued in
// main's deque.
//
//   dropped   queues 100 tasks, drops their futures and returns from main: W020 says they
//             are not run, and none runs during the exit
//   waited    the same tasks, waited for: each runs, no W020
//   fork      the same tasks kept; a child forked while they are queued calls exit(0) without
//             using tasks (it says nothing of its parent's queue), then the parent waits
#include <aloe/task.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

namespace {
std::atomic<int> ran{0};
}

int main(int argc, char** argv) {
    const std::string_view mode = argc > 1 ? argv[1] : "";
    if (mode != "dropped" && mode != "waited" && mode != "fork") {
        std::fprintf(stderr, "usage: %s dropped|waited|fork\n", argv[0]);
        return 2;
    }
    aloe::set_task_concurrency(1);
    std::vector<aloe::future<void>> kept;
    for (int i = 0; i < 100; ++i) {
        aloe::future<void> f = aloe::async([] { ran.fetch_add(1, std::memory_order_relaxed); });
        if (mode != "dropped") kept.push_back(std::move(f));
    }
    if (mode == "fork") {
        std::fflush(nullptr);
        const pid_t child = fork();
        if (child == 0) std::exit(0);
        int status = 0;
        if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            std::fprintf(stderr, "the child did not exit with 0\n");
            return 1;
        }
    }
    for (aloe::future<void>& f : kept) f.get();
    std::printf("ran %d before exit\n", ran.load());
    std::fflush(stdout);  // before the exit handlers write on stderr
    return 0;
}

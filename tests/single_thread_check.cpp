// The check behind aloe_add_gtest's SINGLE_THREADED files (tests/CMakeLists.txt): the TSan
// tree leaves those files out, which is sound only if their tests start no thread (a race
// needs two). Every other tree links this listener into the program: a test of such a file
// that begins on one thread and ends with more fails the program, naming the test.
//
// A thread that is started and joined within the test goes unseen; what this catches is the
// common way such a test would start threads, through aloe's team or task workers, which stay.
// When a run of the whole program already has threads before the test (an earlier test of
// the same program started them), the test is not judged; CTest runs one test per process.
#include <dirent.h>

#include <cstdio>
#include <cstdlib>
#include <string_view>

#include <gtest/gtest.h>

#ifndef ALOE_SINGLE_THREADED_FILES
#error "ALOE_SINGLE_THREADED_FILES (comma-separated file names) is set by aloe_add_gtest"
#endif

namespace {

// Entries of /proc/self/task: one per thread of this process; -1 when it cannot be read.
int live_threads() {
    DIR* tasks = ::opendir("/proc/self/task");
    if (tasks == nullptr) return -1;
    int n = 0;
    while (const dirent* e = ::readdir(tasks)) {
        if (e->d_name[0] != '.') ++n;
    }
    ::closedir(tasks);
    return n;
}

bool is_single_threaded_file(std::string_view path) {
    const std::string_view name = path.substr(path.find_last_of('/') + 1);
    std::string_view listed = ALOE_SINGLE_THREADED_FILES;
    while (!listed.empty()) {
        const std::size_t comma = listed.find(',');
        if (listed.substr(0, comma) == name) return true;
        if (comma == std::string_view::npos) break;
        listed.remove_prefix(comma + 1);
    }
    return false;
}

class single_thread_check : public ::testing::EmptyTestEventListener {
    void OnTestStart(const ::testing::TestInfo& test) override {
        judged_ = test.file() != nullptr && is_single_threaded_file(test.file()) && live_threads() == 1;
    }
    void OnTestEnd(const ::testing::TestInfo& test) override {
        if (!judged_) return;
        const int threads = live_threads();
        if (threads <= 1) return;
        std::fprintf(stderr,
                     "single_thread_check: %s.%s (in %s, listed as SINGLE_THREADED) ended with %d threads; "
                     "the TSan tree leaves that file out, so move the test to a file that is not listed\n",
                     test.test_suite_name(), test.name(), test.file(), threads);
        std::fflush(stderr);
        std::_Exit(EXIT_FAILURE);  // the threads it left may hold locks a normal exit would wait on
    }
    bool judged_ = false;
};

[[maybe_unused]] const bool single_thread_check_registered = [] {
    ::testing::UnitTest::GetInstance()->listeners().Append(new single_thread_check);
    return true;
}();

}  // namespace

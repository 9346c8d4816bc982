// single_thread_check.cpp checked against a listed file of its own (tests/CMakeLists.txt
// registers the two outcomes): a test that leaves a thread running fails its program, one
// that stays on its thread passes.
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

TEST(SingleThreadCheckSelf, LeavesAThreadRunning) {
    std::thread([] { std::this_thread::sleep_for(std::chrono::minutes(1)); }).detach();
    SUCCEED();
}

TEST(SingleThreadCheckSelf, StaysOnItsThread) {
    int sum = 0;
    for (int i = 1; i <= 10; ++i) sum += i;
    EXPECT_EQ(sum, 55);
}

// The C API of task groups (include/aloe/aloe.h, src/task/task_c_api.cpp): tasks run once,
// wait() and destroy() wait, NULL arguments give ALOE_ERROR_ARGUMENT with a message naming the
// argument, and an exception from a task becomes ALOE_ERROR_INTERNAL, never escaping.
#include <aloe/aloe.h>

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

namespace {

struct task_arg {
    std::atomic<int>* counts;
    int id;
};

extern "C" void count_once(void* p) {
    auto* a = static_cast<task_arg*>(p);
    a->counts[a->id].fetch_add(1, std::memory_order_relaxed);
}

extern "C" void increment(void* p) { static_cast<std::atomic<int>*>(p)->fetch_add(1); }

// A C++ function behind a C pointer that throws: what a C caller cannot do, but a C++ one
// using the C API (or a bug) can.
void throws(void* p) {
    static_cast<std::atomic<int>*>(p)->fetch_add(1);
    throw std::runtime_error("boom from a task");
}

TEST(TaskCApi, EveryTaskRunsOnce) {
    constexpr int n = 5000;
    std::unique_ptr<std::atomic<int>[]> counts(new std::atomic<int>[n]);
    std::unique_ptr<task_arg[]> args(new task_arg[n]);
    for (int i = 0; i < n; ++i) {
        counts[i].store(0);
        args[i] = {counts.get(), i};
    }
    aloe_task_group* g = aloe_task_group_create();
    ASSERT_NE(g, nullptr);
    for (int i = 0; i < n; ++i) ASSERT_EQ(aloe_task_group_run(g, &count_once, &args[i]), ALOE_OK);
    EXPECT_EQ(aloe_task_group_wait(g), ALOE_OK);
    EXPECT_STREQ(aloe_last_error(), "");
    for (int i = 0; i < n; ++i) ASSERT_EQ(counts[i].load(), 1) << "task " << i;

    // Reusable after a wait.
    std::atomic<int> more{0};
    for (int i = 0; i < 100; ++i) ASSERT_EQ(aloe_task_group_run(g, &increment, &more), ALOE_OK);
    EXPECT_EQ(aloe_task_group_wait(g), ALOE_OK);
    EXPECT_EQ(more.load(), 100);
    aloe_task_group_destroy(g);
}

TEST(TaskCApi, DestroyWaitsForPendingTasks) {
    std::atomic<int> ran{0};
    aloe_task_group* g = aloe_task_group_create();
    ASSERT_NE(g, nullptr);
    for (int i = 0; i < 1000; ++i) ASSERT_EQ(aloe_task_group_run(g, &increment, &ran), ALOE_OK);
    aloe_task_group_destroy(g);  // no wait first
    EXPECT_EQ(ran.load(), 1000);
}

TEST(TaskCApi, NullArgumentsAreNamed) {
    std::atomic<int> ran{0};
    EXPECT_EQ(aloe_task_group_run(nullptr, &increment, &ran), ALOE_ERROR_ARGUMENT);
    EXPECT_NE(std::string(aloe_last_error()).find("group"), std::string::npos) << aloe_last_error();
    EXPECT_NE(std::string(aloe_last_error()).find("aloe_task_group_run"), std::string::npos) << aloe_last_error();

    aloe_task_group* g = aloe_task_group_create();
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(aloe_task_group_run(g, nullptr, &ran), ALOE_ERROR_ARGUMENT);
    EXPECT_NE(std::string(aloe_last_error()).find("fn"), std::string::npos) << aloe_last_error();

    EXPECT_EQ(aloe_task_group_wait(nullptr), ALOE_ERROR_ARGUMENT);
    EXPECT_NE(std::string(aloe_last_error()).find("group"), std::string::npos) << aloe_last_error();
    EXPECT_NE(std::string(aloe_last_error()).find("aloe_task_group_wait"), std::string::npos) << aloe_last_error();

    // A call that succeeds clears the message; a NULL arg is passed through as it is.
    EXPECT_EQ(aloe_task_group_run(g, &increment, &ran), ALOE_OK);
    EXPECT_STREQ(aloe_last_error(), "");
    EXPECT_EQ(aloe_task_group_wait(g), ALOE_OK);
    EXPECT_EQ(ran.load(), 1) << "the refused calls ran nothing";
    aloe_task_group_destroy(g);
    aloe_task_group_destroy(nullptr);  // like free(NULL)
}

TEST(TaskCApi, ExceptionFromATaskIsAnInternalError) {
    std::atomic<int> ran{0};
    aloe_task_group* g = aloe_task_group_create();
    ASSERT_NE(g, nullptr);
    for (int i = 0; i < 20; ++i) ASSERT_EQ(aloe_task_group_run(g, i == 5 ? &throws : &increment, &ran), ALOE_OK);
    EXPECT_EQ(aloe_task_group_wait(g), ALOE_ERROR_INTERNAL);
    EXPECT_NE(std::string(aloe_last_error()).find("boom from a task"), std::string::npos) << aloe_last_error();
    EXPECT_EQ(ran.load(), 20) << "the other tasks still ran";
    EXPECT_EQ(aloe_task_group_wait(g), ALOE_OK) << "reported once";
    aloe_task_group_destroy(g);
}

TEST(TaskCApi, GroupsFromSeveralThreads) {
    constexpr int threads = 3;
    std::atomic<int> ran{0};
    std::atomic<int> ok{0};
    std::thread pool[threads];
    for (auto& t : pool)
        t = std::thread([&] {
            aloe_task_group* g = aloe_task_group_create();
            if (g == nullptr) return;
            bool good = true;
            for (int i = 0; i < 500; ++i) good = good && aloe_task_group_run(g, &increment, &ran) == ALOE_OK;
            good = good && aloe_task_group_wait(g) == ALOE_OK;
            aloe_task_group_destroy(g);
            if (good) ok.fetch_add(1);
        });
    for (auto& t : pool) t.join();
    EXPECT_EQ(ok.load(), threads);
    EXPECT_EQ(ran.load(), threads * 500);
}

}  // namespace

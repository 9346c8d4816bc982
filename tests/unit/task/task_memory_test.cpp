// White-box tests of src/task/task_memory.cpp through task_allocate/task_deallocate: every
// block of every class is aligned and its own (no two overlap, whether cut from a slab or
// recycled), blocks freed on another thread come back, and a thread's slab rest and free
// blocks reach the depot when it exits. Under ASan and TSan blocks come from operator new
// one by one (the sanitizers see each use); the cache's own properties are tested in the
// other builds only, and say so when skipped.
#include "task/task_memory.hpp"

#include <aloe/task.hpp>

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <set>
#include <thread>
#include <utility>
#include <vector>

namespace {

using aloe::detail::task_allocate;
using aloe::detail::task_deallocate;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool sanitizer_build = true;
#else
constexpr bool sanitizer_build = false;
#endif

constexpr std::size_t class_sizes[] = {64, 128, 256, 512};

// Fills each block's `size` bytes (what was asked) with its own byte, then checks every
// byte: a block cut across another (a wrong stride, a block handed out twice) shows as a
// foreign byte.
void expect_disjoint(const std::vector<void*>& blocks, std::size_t size) {
    for (std::size_t k = 0; k < blocks.size(); ++k)
        std::memset(blocks[k], static_cast<int>(k % 251 + 1), size);
    std::size_t bad = 0;
    for (std::size_t k = 0; k < blocks.size(); ++k) {
        const auto* bytes = static_cast<const unsigned char*>(blocks[k]);
        for (std::size_t b = 0; b < size; ++b)
            if (bytes[b] != k % 251 + 1) ++bad;
    }
    EXPECT_EQ(bad, 0u) << size << "-byte blocks overlap";
    std::set<void*> distinct(blocks.begin(), blocks.end());
    EXPECT_EQ(distinct.size(), blocks.size()) << size << "-byte blocks handed out twice";
}

TEST(TaskMemory, BlocksOfEveryClassAreAlignedAndDisjointAcrossSlabs) {
    for (std::size_t size : class_sizes) {
        // Several 64 KiB slabs' worth, and a size just above the class below it.
        const std::size_t n = 3 * (std::size_t{64} << 10) / size + 7;
        for (std::size_t ask : {size, size - 63}) {
            std::vector<void*> blocks;
            for (std::size_t k = 0; k < n; ++k) blocks.push_back(task_allocate(ask));
            for (void* p : blocks)
                EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 64, 0u) << "a " << ask << "-byte block is not 64-aligned";
            expect_disjoint(blocks, ask);
            // Free half, take as many again: recycled and fresh blocks stay disjoint.
            for (std::size_t k = 0; k < n; k += 2) task_deallocate(std::exchange(blocks[k], nullptr), ask);
            for (std::size_t k = 0; k < n; k += 2) blocks[k] = task_allocate(ask);
            expect_disjoint(blocks, ask);
            for (void* p : blocks) task_deallocate(p, ask);
        }
    }
}

TEST(TaskMemory, LargerObjectsAndNullAreHandled) {
    void* big = task_allocate(4096);
    ASSERT_NE(big, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(big) % 64, 0u);
    std::memset(big, 0x5a, 4096);
    task_deallocate(big, 4096);
    task_deallocate(nullptr, 64);  // a no-op, as delete of null
}

TEST(TaskMemory, BlocksFreedOnAnotherThreadComeBack) {
    if (sanitizer_build) GTEST_SKIP() << "sanitizer build: blocks go to operator new one by one, no cache to test";
    constexpr std::size_t size = 256;  // a class nothing else in this process uses much
    constexpr std::size_t n = 4 * 256;  // four of the cache's batches
    std::vector<void*> made;
    for (std::size_t k = 0; k < n; ++k) made.push_back(task_allocate(size));
    // Freed on a thread that then exits: past two batches its cache hands them to the depot,
    // and the rest goes there at exit.
    std::thread([&made] {
        for (void* p : made) task_deallocate(p, size);
    }).join();
    // A new thread (an empty cache) takes them back from the depot, the last batches given
    // first.
    std::set<void*> freed(made.begin(), made.end());
    std::size_t reused = 0;
    std::thread([&] {
        std::vector<void*> again;
        for (std::size_t k = 0; k < n; ++k) {
            again.push_back(task_allocate(size));
            reused += freed.count(again.back());
        }
        for (void* p : again) task_deallocate(p, size);
    }).join();
    EXPECT_EQ(reused, n) << "blocks freed on another thread were not handed back (" << reused << " of " << n << ")";
}

TEST(TaskMemory, AnExitingThreadLeavesItsSlabsRestToOthers) {
    if (sanitizer_build) GTEST_SKIP() << "sanitizer build: blocks go to operator new one by one, no slabs to test";
    constexpr std::size_t size = 512;  // 128 blocks a slab
    constexpr std::size_t per_slab = (std::size_t{64} << 10) / size;
    std::uintptr_t first = 0;
    std::thread([&first] {
        void* p = task_allocate(size);  // a new thread's first block: a new slab's first
        first = reinterpret_cast<std::uintptr_t>(p);
        task_deallocate(p, size);
    }).join();
    // A new thread takes the exited one's leftovers from the depot: its whole slab, the freed
    // block and the 127 never cut.
    std::vector<std::uintptr_t> got;
    std::thread([&got] {
        for (std::size_t k = 0; k < per_slab; ++k) got.push_back(reinterpret_cast<std::uintptr_t>(task_allocate(size)));
        for (std::uintptr_t p : got) task_deallocate(reinterpret_cast<void*>(p), size);
    }).join();
    std::sort(got.begin(), got.end());
    ASSERT_EQ(got.size(), per_slab);
    EXPECT_EQ(got.front(), first) << "the exited thread's slab was not handed on (or the depot held 512-byte "
                                     "blocks before this test: ctest runs it alone)";
    for (std::size_t k = 0; k < per_slab; ++k)
        EXPECT_EQ(got[k], first + k * size) << "block " << k << " is not the exited thread's slab's";
}

TEST(TaskMemory, AForkWhileAnotherThreadHoldsTheDepotLeavesTheChildItsBlocks) {
    if (sanitizer_build) GTEST_SKIP() << "sanitizer build: no depot (and no threads in a fork child under TSan)";
    task_deallocate(task_allocate(64), 64);  // the depot exists, and its fork hooks
    std::atomic<bool> holding{false};
    std::thread holder([&holding] {
        std::lock_guard lock(aloe::detail::task_memory_depot_mutex());
        holding.store(true);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    });
    while (!holding.load()) std::this_thread::yield();
    // fork() now: the prepare hook waits for the holder, so the child's depot is free. A new
    // thread of the child has an empty cache and goes to the depot at its first block.
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::alarm(10);  // a depot left locked: the child stops here, SIGALRM ends it
        std::thread([] {
            for (int k = 0; k < 3 * 256; ++k) task_deallocate(task_allocate(128), 128);
            std::vector<void*> many;
            for (int k = 0; k < 4 * 256; ++k) many.push_back(task_allocate(128));
            for (void* p : many) task_deallocate(p, 128);
        }).join();
        ::_exit(0);
    }
    holder.join();
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "the child " << (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM ? "stopped on the depot's lock" : "failed");
}

}  // namespace

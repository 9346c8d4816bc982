// Drives one loop of a loop::shared_loop (reset() given its count) on `threads` plain threads,
// as threads aloe did not start do: even threads call next() to the end (and once more,
// which must answer false), odd ones claim() then finish(), as the GOMP interposer does.
// Returns the iterations handed out.
#pragma once

#include "loop/shared_loop.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace aloe::loop::test_threads {

inline std::uint64_t run_on_threads(shared_loop& loop, int threads) {
    std::atomic<std::uint64_t> ran{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            chunk c;
            if (t % 2 == 0) {
                while (loop.next(t, threads, c)) ran.fetch_add(c.end - c.begin);
                EXPECT_FALSE(loop.next(t, threads, c)) << "asking again after the end";
            } else {
                while (loop.claim(t, threads, c)) ran.fetch_add(c.end - c.begin);
                loop.finish(t);
            }
        });
    }
    for (std::thread& th : pool) th.join();
    return ran.load();
}

}  // namespace aloe::loop::test_threads

// The barrier: nobody leaves a round before everybody has arrived.
#include "runtime/barrier.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace aloe::runtime {
namespace {

TEST(RuntimeBarrier, NoThreadLeavesARoundEarly) {
    for (auto kind : {wait_policy_kind::active, wait_policy_kind::passive, wait_policy_kind::hybrid})
        for (int threads : {1, 2, 4}) {
            config cfg;
            cfg.wait_policy = kind;
            cfg.spin_us = 20;
            barrier b(threads, wait_settings::from_config(cfg, threads, 2));
            constexpr int rounds = 200;
            std::vector<std::atomic<int>> round_of(static_cast<std::size_t>(threads));
            std::atomic<int> violations{0};
            std::vector<std::thread> pool;
            for (int t = 0; t < threads; ++t)
                pool.emplace_back([&, t] {
                    for (int r = 1; r <= rounds; ++r) {
                        round_of[static_cast<std::size_t>(t)].store(r);
                        b.arrive_and_wait();
                        // After the barrier every thread has reached round r.
                        for (const auto& other : round_of)
                            if (other.load() < r) violations.fetch_add(1);
                        b.arrive_and_wait();
                    }
                });
            for (auto& th : pool) th.join();
            EXPECT_EQ(violations.load(), 0) << to_string(kind) << " threads=" << threads;
            EXPECT_EQ(b.threads(), threads);
        }
}

}  // namespace
}  // namespace aloe::runtime

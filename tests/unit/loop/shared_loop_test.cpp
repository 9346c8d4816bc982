// White-box tests of loop::shared_loop's accounting: every loop counts once at its site,
// an empty one (count 0) as an empty invocation, whichever threads ask and however
// (next(), or claim() then finish() as the GOMP interposer does).
#include "loop/shared_loop.hpp"
#include "shared_loop_threads.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace aloe::loop {
namespace {

using test_threads::run_on_threads;

TEST(LoopSharedLoop, EmptyLoopCountsOnceFromEveryThread) {
    site_registry r(64);
    site_state& site = r.pin(loop_site("shared/empty"));
    shared_loop loop;
    constexpr int loops = 5;
    for (int k = 0; k < loops; ++k) {
        loop.reset(0, schedule("dynamic,chunk=2"), site);
        EXPECT_EQ(run_on_threads(loop, 4), 0u);
    }
    const auto st = r.snapshot(loop_site("shared/empty"));
    ASSERT_TRUE(st.has_value());
    EXPECT_EQ(st->empty_invocations, static_cast<std::uint64_t>(loops));
    EXPECT_EQ(st->invocations, 0u);
    EXPECT_EQ(st->iterations, 0u);
    EXPECT_EQ(st->calls(), static_cast<std::uint64_t>(loops));
    EXPECT_EQ(st->schedule, "dynamic,chunk=2");
}

TEST(LoopSharedLoop, EmptyAndFullLoopsAtOneSiteAddUp) {
    site_registry r(64);
    site_state& site = r.pin(loop_site("shared/mixed"));
    shared_loop loop;
    const std::uint64_t counts[] = {100, 0, 7, 0, 0, 1};
    std::uint64_t iterations = 0;
    for (std::uint64_t n : counts) {
        loop.reset(n, schedule("staggered,fs=0.5,chunk=2"), site);
        EXPECT_EQ(run_on_threads(loop, 3), n);
        iterations += n;
    }
    const auto st = r.snapshot(loop_site("shared/mixed"));
    ASSERT_TRUE(st.has_value());
    EXPECT_EQ(st->invocations, 3u);
    EXPECT_EQ(st->empty_invocations, 3u);
    EXPECT_EQ(st->calls(), std::size(counts));
    EXPECT_EQ(st->iterations, iterations);
}

}  // namespace
}  // namespace aloe::loop

// Workers leaving a running loop (loop/participant_limit.hpp, issue 18): every iteration
// still runs exactly once whichever participants leave and whenever, on the team
// (parallel_for) and on threads aloe did not start (shared_loop, driven as the GOMP
// interposer drives it); a participant over the limit takes no dynamic chunk; participant 0
// never leaves and calls the refresh hook.
#include "aloe/parallel_for.hpp"
#include "aloe/team.hpp"
#include "loop/participant_limit.hpp"
#include "unit/loop/iteration_hits.hpp"
#include "loop/shared_loop.hpp"
#include "loop/site_registry.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace aloe::loop {
namespace {

// Every test leaves the process as it found it: no limit, no hook.
class LoopParticipantLimit : public ::testing::Test {
protected:
    void TearDown() override {
        set_participant_limit_refresh(nullptr);
        lift_participant_limit();
    }
};

// Schedules with a dynamic part (the part a worker can leave), and static, which has none.
const std::vector<std::string> schedules_that_can_shrink = {
    "dynamic,chunk=1",        "dynamic,chunk=7",           "guided,chunk=2",
    "hybrid,fs=0.5,chunk=3",  "staggered,fs=0,chunk=1",    "staggered,fs=0.5,chunk=3",
    "staggered,fs=0.5,chunk=2,queue=mutex", "weighted,fs=0.5,chunk=4", "tasklets,n=64,fs=0.25,skew=2",
    "tasklets,n=200,fs=0,skew=1,locality=0",
};

using hits = test::iteration_hits;

// Sets the limit to a random 0..top-1, or lifts it (drawn as `top`), on a thread of its
// own, as fast as it can, until it is destroyed.
class limit_mover {
public:
    limit_mover(unsigned seed, int top)
        : thread_([this, seed, top] {
              std::mt19937 rng(seed);
              while (!stop_.load()) {
                  const int v = static_cast<int>(rng() % static_cast<unsigned>(top + 1));
                  if (v == top) lift_participant_limit();
                  else limit_participants(v);
                  std::this_thread::yield();
              }
          }) {}
    ~limit_mover() {
        stop_.store(true);
        thread_.join();
    }

private:
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

TEST_F(LoopParticipantLimit, LimitBelowOneStillLetsTheCallerRun) {
    limit_participants(0);
    EXPECT_EQ(participant_limit(), 1);
    limit_participants(-5);
    EXPECT_EQ(participant_limit(), 1);
    lift_participant_limit();
    EXPECT_EQ(participant_limit(), INT_MAX);
    EXPECT_FALSE(must_leave(0));
    limit_participants(1);
    EXPECT_FALSE(must_leave(0)) << "participant 0 is the loop's caller and never leaves";
    EXPECT_TRUE(must_leave(1));
    EXPECT_TRUE(must_leave(7));
}

// A run's reader learns whether the limit moved while it ran: each real change counts once.
TEST_F(LoopParticipantLimit, ChangesAreCountedOncePerRealChange) {
    const unsigned before = participant_limit_changes();
    limit_participants(2);
    limit_participants(2);  // the same value: no change
    EXPECT_EQ(participant_limit_changes(), before + 1);
    limit_participants(0);
    limit_participants(1);  // 0 counts as 1: no change
    EXPECT_EQ(participant_limit_changes(), before + 2);
    lift_participant_limit();
    lift_participant_limit();
    EXPECT_EQ(participant_limit_changes(), before + 3);
}

// A limit set before the loop: participants at or over it run their static part only.
TEST_F(LoopParticipantLimit, OverTheLimitRunsItsStaticPartOnly) {
    aloe::team t(4);
    limit_participants(2);
    for (const std::string& spec : {std::string("dynamic,chunk=1"), std::string("hybrid,fs=0.5,chunk=2"),
                                    std::string("staggered,fs=0.5,chunk=2")}) {
        SCOPED_TRACE(spec);
        constexpr std::int64_t n = 400;
        hits h(n);
        std::vector<std::atomic<std::int64_t>> by_thread(static_cast<std::size_t>(t.size()));
        aloe::parallel_for(t, std::int64_t{0}, n, aloe::schedule(spec), [&](aloe::subrange r, int thread) {
            for (std::int64_t i : r) h.count[static_cast<std::size_t>(i)].fetch_add(1);
            by_thread[static_cast<std::size_t>(thread)].fetch_add(static_cast<std::int64_t>(r.size()));
            // Slow chunks: without the limit every participant would take dynamic ones.
            std::this_thread::sleep_for(std::chrono::microseconds(20));
        });
        EXPECT_EQ(h.first_wrong(), -1);
        // A static share per participant is at most fs·n / p (rounded up).
        const std::int64_t static_share = spec.rfind("dynamic", 0) == 0 ? 0 : (n / 2 + 3) / 4 + 1;
        for (std::size_t k = 2; k < by_thread.size(); ++k)
            EXPECT_LE(by_thread[k].load(), static_share) << "participant " << k << " took dynamic chunks";
    }
}

// The property: a controller moves the limit at random while loops run; nothing is lost or
// run twice (run under TSan by `make test`).
TEST_F(LoopParticipantLimit, EveryIterationOnceWhileTheLimitMovesOnTheTeam) {
    aloe::team t(4);
    limit_mover mover(18, 5);
    for (const std::string& spec : schedules_that_can_shrink)
        for (std::int64_t n : {1, 31, 1000, 5003}) {
            SCOPED_TRACE(spec + " n=" + std::to_string(n));
            hits h(static_cast<std::size_t>(n));
            aloe::parallel_for(t, std::int64_t{0}, n, aloe::schedule(spec), [&](std::int64_t i) {
                h.count[static_cast<std::size_t>(i)].fetch_add(1);
                if (i % 97 == 0) std::this_thread::yield();
            });
            EXPECT_EQ(h.first_wrong(), -1);
        }
}

// The same on threads aloe did not start, asking chunk by chunk (next(), and claim() then
// finish() as the GOMP interposer does), including the direct claim of `dynamic`.
TEST_F(LoopParticipantLimit, EveryIterationOnceWhileTheLimitMovesOnPlainThreads) {
    site_registry r(64);
    site_state& site = r.pin(loop_site("participant-limit/shared"));
    limit_mover mover(19, 4);
    for (const std::string& spec : schedules_that_can_shrink)
        for (std::uint64_t n : {7ULL, 1000ULL, 4099ULL}) {
            SCOPED_TRACE(spec + " n=" + std::to_string(n));
            shared_loop loop;
            loop.reset(n, schedule(spec), site);
            hits h(n);
            constexpr int threads = 4;
            std::vector<std::thread> pool;
            for (int th = 0; th < threads; ++th)
                pool.emplace_back([&, th] {
                    chunk c;
                    const auto run = [&] {
                        for (std::uint64_t i = c.begin; i < c.end; ++i) h.count[i].fetch_add(1);
                    };
                    if (th % 2 == 0) {
                        while (loop.next(th, threads, c)) run();
                        EXPECT_FALSE(loop.next(th, threads, c)) << "a participant that left came back";
                    } else {
                        while (loop.claim(th, threads, c)) run();
                        loop.finish(th);
                    }
                });
            for (std::thread& p : pool) p.join();
            EXPECT_EQ(h.first_wrong(), -1);
        }
    const auto st = r.snapshot(loop_site("participant-limit/shared"));
    ASSERT_TRUE(st.has_value());
    EXPECT_EQ(st->invocations, schedules_that_can_shrink.size() * 3);
}

// Participant 0 calls the refresh hook before its dynamic chunks: here the hook is what
// lowers the limit (as the daemon's client does when an allocation arrives mid-loop), and
// the others stop taking chunks from then on.
std::atomic<int> refreshes{0};
void lower_after_ten() noexcept {
    if (refreshes.fetch_add(1) == 10) limit_participants(1);
}

TEST_F(LoopParticipantLimit, TheCallersRefreshCanShrinkARunningLoop) {
    aloe::team t(3);
    refreshes.store(0);
    set_participant_limit_refresh(&lower_after_ten);
    constexpr std::int64_t n = 600;
    hits h(n);
    std::atomic<std::int64_t> others_after{0};
    std::atomic<bool> lowered_seen{false};
    aloe::parallel_for(t, std::int64_t{0}, n, aloe::schedule("dynamic,chunk=1"), [&](aloe::subrange r, int thread) {
        for (std::int64_t i : r) h.count[static_cast<std::size_t>(i)].fetch_add(1);
        if (thread == 0 && participant_limit() == 1) lowered_seen.store(true);
        if (thread != 0 && lowered_seen.load()) others_after.fetch_add(static_cast<std::int64_t>(r.size()));
        // Every chunk takes a while, so that participant 0 reaches its 11th long before the
        // loop ends.
        std::this_thread::sleep_for(std::chrono::microseconds(20));
    });
    EXPECT_EQ(h.first_wrong(), -1);
    EXPECT_GT(refreshes.load(), 10) << "participant 0 called the hook before its chunks";
    EXPECT_TRUE(lowered_seen.load());
    // After participant 0 saw the lower limit, each other participant ran at most the chunk
    // it had taken already (one iteration each here).
    EXPECT_LE(others_after.load(), t.size() - 1);
}

}  // namespace
}  // namespace aloe::loop

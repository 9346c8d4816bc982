// The slack policy (slackSched / comboSched): which sites it serves, Eq. 4.11 applied to the
// run the links before it chose, with the site's share of the predicted slack of the call
// that followed it, and each guard that leaves the fraction alone. The board is driven by
// hand: no MPI, no clock in the arithmetic (t1 comes from recorded static parts).
#include "mpi/slack_board.hpp"
#include "mpi/slack_policy.hpp"

#include "runtime/clock.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace {

using aloe::schedule;
using aloe::slack_mode;
namespace loop = aloe::loop;
namespace mpi = aloe::mpi;

loop::policy_site site_of(const schedule& s) { return {loop::policy_scope::loop, &s, "test-site", {}}; }

// One run of `threads` workers whose static parts took t1 per iteration.
void observe_run(loop::site_policy& p, int threads, std::uint64_t static_iterations, double t1_s, double loop_s) {
    const double tps = aloe::runtime::ticks_per_second();
    std::vector<loop::worker_record> records(static_cast<std::size_t>(threads));
    for (loop::worker_record& r : records) {
        r.start = 1000;
        r.static_end = 1000 + static_cast<aloe::runtime::ticks>(std::llround(t1_s * static_cast<double>(static_iterations) * tps));
        r.static_iterations = static_iterations;
    }
    loop::loop_outcome o;
    o.records = records;
    o.fork = 1000;
    o.join = 1000 + static_cast<aloe::runtime::ticks>(std::llround(loop_s * tps));
    o.iterations = static_iterations * static_cast<std::uint64_t>(threads);
    p.observe(o);
}

// The call after the loop: path row `row`, slack `slack_s` now, `next_s` predicted next.
void call_follows(std::size_t row, double slack_s, double next_s) {
    mpi::process_board().call_begins(row);
    mpi::process_board().call_ended(row, next_s, slack_s);
}

loop::loop_plan plan_of(loop::site_policy& p, const schedule& run, std::uint64_t n, int threads, bool measuring = false) {
    loop::loop_plan plan;
    plan.run = run;
    plan.threads = threads;
    plan.available = threads;
    plan.measuring = measuring;
    p.plan(n, plan);
    return plan;
}

class SlackPolicy : public ::testing::Test {
protected:
    void SetUp() override { mpi::process_board().clear(); }
};

TEST_F(SlackPolicy, ServesAdaptiveUnlessOffAndFixedSchedulesOnlyWhenAsked) {
    const loop::policy_kind& k = mpi::slack_policy_kind();
    EXPECT_TRUE(k.adaptive_only && k.slack_sites);
    const schedule adaptive("adaptive"), adaptive_off("adaptive,slack=off"), hybrid("hybrid,fs=0.5"),
        hybrid_on("hybrid,fs=0.5,slack=on"), tasklets_on("tasklets,n=8,fs=0.3,slack=on");
    EXPECT_TRUE(k.applies(site_of(adaptive)));
    EXPECT_FALSE(k.applies(site_of(adaptive_off)));
    EXPECT_FALSE(k.applies(site_of(hybrid)));
    EXPECT_TRUE(k.applies(site_of(hybrid_on)));
    EXPECT_TRUE(k.applies(site_of(tasklets_on)));
    EXPECT_TRUE(loop::chain_applies(loop::policy_scope::loop, &hybrid_on));
}

TEST_F(SlackPolicy, LowersTheDynamicFractionByEquation411) {
    const schedule spec("hybrid,fs=0.6,slack=on");
    auto p = mpi::slack_policy_kind().make(site_of(spec));
    // N = 10,000 on p = 4, t1 = 1 us, q = 60 ns (no adaptive probe in this process):
    // (p−1)·N·t1/p − N·q = 7.5 ms − 0.6 ms = 6.9 ms; S = 100 us → fd' = 0.4 − 0.1/6.9.
    observe_run(*p, 4, 1500, 1e-6, 3e-3);
    call_follows(7, 100e-6, 100e-6);
    const loop::loop_plan plan = plan_of(*p, spec, 10000, 4);
    EXPECT_EQ(plan.run.kind(), aloe::schedule_kind::hybrid);
    EXPECT_NEAR(1 - plan.run.static_fraction(), 0.4 - 0.1 / 6.9, 1e-6);
    const aloe::policy_status s = p->status();
    ASSERT_TRUE(s.slack.has_value());
    EXPECT_EQ(s.slack->lowered, 1u);
    EXPECT_NEAR(s.slack->fd_before_last, 0.4, 1e-12);
    EXPECT_NEAR(s.slack->fd_after_last, 0.4 - 0.1 / 6.9, 1e-6);
    EXPECT_NEAR(s.slack->predicted_last_s, 100e-6, 1e-12);
    EXPECT_EQ(s.state, aloe::policy_state::acting);
}

TEST_F(SlackPolicy, ComboKeepsTheStaggeredLayoutAndDynamicBecomesHybrid) {
    const schedule spec("adaptive");
    auto p = mpi::slack_policy_kind().make(site_of(spec));
    observe_run(*p, 2, 1000, 1e-6, 2e-3);
    call_follows(3, 1.0, 1.0);  // far more slack than the dynamic part: all static
    const loop::loop_plan staggered = plan_of(*p, schedule("staggered,fs=0.7,chunk=4,queue=mutex"), 2000, 2);
    EXPECT_EQ(staggered.run.kind(), aloe::schedule_kind::staggered);
    EXPECT_EQ(staggered.run.static_fraction(), 1.0);
    EXPECT_EQ(staggered.run.chunk(), 4);
    EXPECT_EQ(staggered.run.claim(), aloe::queue_claim::mutex);
    observe_run(*p, 2, 1000, 1e-6, 2e-3);
    call_follows(3, 1.0, 1.0);
    const loop::loop_plan dynamic = plan_of(*p, schedule("dynamic,chunk=8"), 2000, 2);
    EXPECT_EQ(dynamic.run.to_string(), "hybrid,fs=1,chunk=8");
}

TEST_F(SlackPolicy, TheGuardsLeaveTheFractionAlone) {
    const schedule spec("hybrid,fs=0.6,slack=on");
    const schedule run("hybrid,fs=0.6");
    auto p = mpi::slack_policy_kind().make(site_of(spec));
    // Nothing has followed the loop yet.
    EXPECT_EQ(plan_of(*p, run, 10000, 4).run, run);
    EXPECT_EQ(p->status().slack->guard, "no MPI call has followed the loop yet");
    observe_run(*p, 4, 1500, 1e-6, 3e-3);
    call_follows(9, 0, 0);  // the critical path: no slack
    EXPECT_EQ(plan_of(*p, run, 10000, 4).run, run);
    EXPECT_EQ(p->status().slack->guard, "no slack predicted (the critical path)");
    observe_run(*p, 4, 1500, 1e-6, 3e-3);
    call_follows(9, 100e-6, 100e-6);
    EXPECT_EQ(plan_of(*p, run, 10000, 4, /*measuring=*/true).run, run) << "adaptive is still measuring";
    observe_run(*p, 4, 1500, 1e-6, 3e-3);
    call_follows(9, 100e-6, 100e-6);
    const schedule guided("guided,chunk=2");
    EXPECT_EQ(plan_of(*p, guided, 10000, 4).run, guided) << "guided has no static fraction";
    EXPECT_EQ(p->status().slack->lowered, 0u);
}

TEST_F(SlackPolicy, LoopsSharingAGapShareItsSlackByTheirTime) {
    const schedule spec("hybrid,fs=0.6,slack=on");
    auto a = mpi::slack_policy_kind().make(site_of(spec));
    auto b = mpi::slack_policy_kind().make(site_of(spec));
    observe_run(*a, 4, 1500, 1e-6, 3e-3);  // 3 ms
    observe_run(*b, 4, 1500, 1e-6, 1e-3);  // 1 ms, same gap
    call_follows(11, 400e-6, 400e-6);
    (void)plan_of(*a, spec, 10000, 4);
    (void)plan_of(*b, spec, 10000, 4);
    EXPECT_NEAR(a->status().slack->predicted_last_s, 300e-6, 1e-9);
    EXPECT_NEAR(b->status().slack->predicted_last_s, 100e-6, 1e-9);
}

TEST_F(SlackPolicy, TheBoardForgetsCallsThatLeftItsRing) {
    mpi::slack_board& board = mpi::process_board();
    const std::uint64_t first = board.call_begins(5);
    EXPECT_EQ(board.row_of(first), std::optional<std::size_t>(5));
    for (std::size_t i = 0; i < mpi::slack_board::ring; ++i) board.call_begins(6);
    EXPECT_FALSE(board.row_of(first).has_value());
    EXPECT_FALSE(board.row_of(board.next_ordinal()).has_value()) << "a call that has not begun";
}

}  // namespace

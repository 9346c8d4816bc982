// The call table: rows per call path (call, site, depth), sums and maxima, the slack of each
// invocation beyond the call's communication cost, the predictors' scores on a recorded
// trace, the overflow rows past its capacity, and threads recording at once.
#include "mpi/call_table.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

namespace {

using aloe::mpi::call_path;
using aloe::mpi::call_site_record;
using aloe::mpi::call_table;
using aloe::mpi::invocation;
using aloe::mpi::mpi_call;

const void* site(std::uintptr_t a) { return reinterpret_cast<const void*>(a); }

aloe::mpi::recorded record(call_table& t, mpi_call call, std::uintptr_t at, std::uint32_t depth, double inside_s,
                           double model_cost_s = 0, double since_s = 0) {
    const std::size_t row = t.find(call_path{call, site(at), depth});
    return t.record(row, call, invocation{inside_s, since_s, model_cost_s});
}

const call_site_record* row_of(const std::vector<call_site_record>& rows, mpi_call call, std::uintptr_t at,
                               std::uint32_t depth) {
    for (const call_site_record& r : rows)
        if (r.path.call == call && r.path.site == site(at) && r.path.depth == depth) return &r;
    return nullptr;
}

TEST(MpiCallTable, KeepsOneRowPerCallPathWithSumAndMaximum) {
    auto t = std::make_unique<call_table>();
    record(*t, mpi_call::Allreduce, 0x401000, 10, 100e-6);
    record(*t, mpi_call::Allreduce, 0x401000, 10, 300e-6);
    record(*t, mpi_call::Allreduce, 0x401000, 14, 50e-6);  // same site, deeper caller: its own path
    record(*t, mpi_call::Barrier, 0x401000, 10, 50e-6);    // same site, another call: its own row
    const std::vector<call_site_record> rows = t->rows();
    ASSERT_EQ(rows.size(), 3u);
    const call_site_record* a = row_of(rows, mpi_call::Allreduce, 0x401000, 10);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->calls, 2u);
    EXPECT_NEAR(a->inside_s, 400e-6, 1e-15);
    EXPECT_NEAR(a->max_s, 300e-6, 1e-15);
    ASSERT_NE(row_of(rows, mpi_call::Allreduce, 0x401000, 14), nullptr);
    ASSERT_NE(row_of(rows, mpi_call::Barrier, 0x401000, 10), nullptr);
    t->clear();
    EXPECT_TRUE(t->rows().empty());
}

TEST(MpiCallTable, SlackIsTheTimeBeyondTheCalibratedCostEvenWhenTheRankAlwaysWaits) {
    // A rank that waits 5 ms at every step never sees the call's cost at its key: the
    // calibrated 10 us is what separates the wait from the communication.
    auto t = std::make_unique<call_table>();
    for (int i = 0; i < 5; ++i) {
        const auto r = record(*t, mpi_call::Allreduce, 0x1000, 1, 5010e-6, 10e-6);
        EXPECT_NEAR(r.slack_s, 5000e-6, 1e-12);
    }
    const call_site_record* a = row_of(t->rows(), mpi_call::Allreduce, 0x1000, 1);
    ASSERT_NE(a, nullptr);
    EXPECT_NEAR(a->slack_s, 5 * 5000e-6, 1e-12);
    EXPECT_NEAR(a->cost_s, 5 * 10e-6, 1e-12);
}

TEST(MpiCallTable, RecentSlacksAreThePathsOwnInvocations) {
    auto t = std::make_unique<call_table>();
    std::array<double, aloe::mpi::slack_predictor::window> out{};
    const std::size_t row = t->find(call_path{mpi_call::Allreduce, site(0x2000), 1});
    EXPECT_EQ(t->recent_slacks(row, out), 0u);  // none yet
    record(*t, mpi_call::Allreduce, 0x2000, 1, 3010e-6, 10e-6);
    record(*t, mpi_call::Allreduce, 0x2000, 1, 110e-6, 10e-6);
    record(*t, mpi_call::Barrier, 0x2000, 1, 9010e-6, 10e-6);  // another path: not in the row
    ASSERT_EQ(t->recent_slacks(row, out), 2u);
    std::vector<double> seen(out.begin(), out.begin() + 2);
    std::sort(seen.begin(), seen.end());
    EXPECT_NEAR(seen[0], 100e-6, 1e-12);
    EXPECT_NEAR(seen[1], 3000e-6, 1e-12);
}

TEST(MpiCallTable, AKeyThatOnceArrivedLastCorrectsAnOverestimatedCost) {
    auto t = std::make_unique<call_table>();
    // The calibration said 200 us; once this path took 6 us (nobody to wait for): its cost.
    EXPECT_NEAR(record(*t, mpi_call::Barrier, 0x2000, 1, 6e-6, 200e-6).slack_s, 0, 1e-15);
    EXPECT_NEAR(record(*t, mpi_call::Barrier, 0x2000, 1, 1006e-6, 200e-6).slack_s, 1000e-6, 1e-12);
    // Without the calibration (cost 0), the whole time beyond the least is slack.
    EXPECT_NEAR(record(*t, mpi_call::Barrier, 0x3000, 1, 40e-6, 0).slack_s, 40e-6, 1e-15);
}

TEST(MpiCallTable, ScoresEachPredictorBeforeItLearnsOnARecordedTrace) {
    auto t = std::make_unique<call_table>();
    t->set_naive(50e-6);
    // Slack 100, 100, 100, 400 (one late step), 100 us at one path; cost 0.
    const double trace[] = {100e-6, 100e-6, 100e-6, 400e-6, 100e-6};
    double next = 0;
    for (const double s : trace) next = record(*t, mpi_call::Allreduce, 0x5000, 2, s, 0, 1e-3).next_s;
    EXPECT_NEAR(next, 100e-6, 1e-12) << "the median ignores the one late step";
    const call_site_record* a = row_of(t->rows(), mpi_call::Allreduce, 0x5000, 2);
    ASSERT_NE(a, nullptr);
    // last value: |50−100| + 0 + 0 + |100−400| + |400−100| = 650 us over 800 us of slack.
    EXPECT_NEAR(a->path_last.abs_error_s, 650e-6, 1e-12);
    EXPECT_NEAR(a->path_last.relative_to_slack(), 650.0 / 800.0, 1e-9);
    EXPECT_NEAR(a->path_last.relative_to_interval(), 650e-6 / 5e-3, 1e-9);
    // median: the seed 50, then 100 three times, 100 against the late 400, then 100 again.
    EXPECT_NEAR(a->path_median.abs_error_s, 50e-6 + 300e-6, 1e-12);
    // naive: always 50 us.
    EXPECT_NEAR(a->naive.abs_error_s, 4 * 50e-6 + 350e-6, 1e-12);
    // per type: the same path is the type's only one here, so it scores as the last value.
    EXPECT_NEAR(a->type_last.abs_error_s, a->path_last.abs_error_s, 1e-12);
    const auto types = t->type_errors();
    ASSERT_EQ(types.size(), 1u);
    EXPECT_EQ(types[0].first, mpi_call::Allreduce);
    EXPECT_EQ(types[0].second.predictions, 5u);
}

TEST(MpiCallTable, MpiInitIsTimedButNeverSlack) {
    auto t = std::make_unique<call_table>();
    EXPECT_EQ(record(*t, mpi_call::Init, 0x6000, 1, 0.25).slack_s, 0);
    const call_site_record* r = row_of(t->rows(), mpi_call::Init, 0x6000, 1);
    ASSERT_NE(r, nullptr);
    EXPECT_NEAR(r->inside_s, 0.25, 1e-15);
    EXPECT_EQ(r->slack_s, 0);
    EXPECT_EQ(r->path_last.predictions, 0u) << "nothing to predict";
    EXPECT_TRUE(t->type_errors().empty());
}

TEST(MpiCallTable, PathsPastItsCapacityShareTheCallsOverflowRow) {
    auto t = std::make_unique<call_table>();
    const std::size_t sites = call_table::capacity + 500;
    for (std::size_t i = 0; i < sites; ++i) record(*t, mpi_call::Wait, 0x10000 + 16 * i, 3, 1e-6);
    std::uint64_t calls = 0, overflow = 0;
    for (const call_site_record& r : t->rows()) {
        EXPECT_EQ(r.path.call, mpi_call::Wait);
        calls += r.calls;
        if (r.path.site == nullptr) overflow += r.calls;
    }
    EXPECT_EQ(calls, sites) << "every call counted, in its own row or the overflow row";
    EXPECT_GE(overflow, 500u);
}

TEST(MpiCallTable, ThreadsRecordingAtOnceLoseNoCall) {
    auto t = std::make_unique<call_table>();
    constexpr int threads = 4, calls = 20000;
    std::vector<std::thread> pool;
    for (int k = 0; k < threads; ++k)
        pool.emplace_back([&t, k] {
            for (int i = 0; i < calls; ++i)
                record(*t, i % 2 ? mpi_call::Recv : mpi_call::Wait, 0x500000 + 64 * (i % 8), 5, (k + 1) * 1e-6);
        });
    for (std::thread& th : pool) th.join();
    std::uint64_t n = 0;
    double inside = 0, max = 0;
    for (const call_site_record& r : t->rows()) {
        n += r.calls;
        inside += r.inside_s;
        max = std::max(max, r.max_s);
    }
    EXPECT_EQ(n, static_cast<std::uint64_t>(threads) * calls);
    EXPECT_NEAR(inside, calls * (1 + 2 + 3 + 4) * 1e-6, 1e-6);
    EXPECT_NEAR(max, 4e-6, 1e-15);
}

}  // namespace

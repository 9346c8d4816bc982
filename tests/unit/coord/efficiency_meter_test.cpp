// coord/efficiency_meter: the efficiency a client of the node daemon reports, measured from
// serial samples and run times. A site's sampling rules and its E = T1 / (p·T) worked by
// hand (units, the baseline's running mean, the clamp, bad input); the process's rate limit,
// sample budget and report (time-weighted mean, serial time as the rest of the interval, a change of
// thread count, take() resetting); then a client's runs end to end through client_table,
// the daemon's reading of the report held against the arithmetic done here.
//
// No timing: every time is a number passed in, never read from a clock (monotonic_seconds()
// is only checked not to go back). Times in the process tests are binary fractions, so the
// sums are exact; the end-to-end test accumulates decimal times and compares to 1e-9.
#include "coord/client_table.hpp"
#include "coord/efficiency_filter.hpp"
#include "coord/efficiency_meter.hpp"
#include "coord/message.hpp"
#include "coord/speedup_model.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <limits>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

namespace {
using namespace aloe::coord;

constexpr double not_a_number = std::numeric_limits<double>::quiet_NaN();
constexpr double infinity = std::numeric_limits<double>::infinity();

// ---- site_efficiency ----

TEST(CoordEfficiencyMeter, NoSampleIsWantedBeforeAParallelRun) {
    site_efficiency s;
    EXPECT_FALSE(s.wants_sample(0));
    EXPECT_FALSE(s.wants_sample(1e6));
    EXPECT_EQ(s.serial_per_unit(), 0.0);
    // A run on one thread is a baseline, but with no parallel run there is nothing a sample
    // would be compared with: still none wanted, however long after.
    EXPECT_FALSE(s.observe(1, 1, 0.008, 10).has_value());
    EXPECT_DOUBLE_EQ(s.serial_per_unit(), 0.008);
    EXPECT_FALSE(s.wants_sample(10));
    EXPECT_FALSE(s.wants_sample(10 + 2 * resample_seconds));
}

TEST(CoordEfficiencyMeter, SampleIsWantedOnlyAfterShortParallelRuns) {
    site_efficiency s;
    // A parallel run with no baseline yet: no efficiency, and a sample is wanted.
    EXPECT_FALSE(s.observe(4, 1, 0.005, 100).has_value());
    EXPECT_EQ(s.serial_per_unit(), 0.0);
    EXPECT_TRUE(s.wants_sample(100));
    // At the bound still wanted (a sample costs about E·p times the run, on one thread).
    EXPECT_FALSE(s.observe(4, 1, most_sampled_seconds, 101).has_value());
    EXPECT_TRUE(s.wants_sample(101));
    // Longer: not wanted, not even much later.
    EXPECT_FALSE(s.observe(4, 1, 1.5 * most_sampled_seconds, 102).has_value());
    EXPECT_FALSE(s.wants_sample(102));
    EXPECT_FALSE(s.wants_sample(102 + 2 * resample_seconds));
    // It is the last run that counts: short again, wanted again (2 threads are parallel too).
    EXPECT_FALSE(s.observe(2, 1, 0.005, 103).has_value());
    EXPECT_TRUE(s.wants_sample(103));
}

TEST(CoordEfficiencyMeter, SampleIsNotWantedAgainWithinResampleSeconds) {
    site_efficiency s;
    EXPECT_FALSE(s.observe(4, 1, 0.0025, 60).has_value());
    ASSERT_TRUE(s.wants_sample(60));
    // The sample at 64: 8 ms on one thread.
    EXPECT_FALSE(s.observe(1, 1, 0.008, 64).has_value());
    EXPECT_FALSE(s.wants_sample(64));
    // Parallel runs are scored meanwhile, and do not bring the next sample forward.
    const auto e = s.observe(4, 1, 0.0025, 70);
    ASSERT_TRUE(e.has_value());
    EXPECT_DOUBLE_EQ(*e, 0.8);
    EXPECT_FALSE(s.wants_sample(70));
    EXPECT_FALSE(s.wants_sample(64 + resample_seconds - 0.5));
    EXPECT_TRUE(s.wants_sample(64 + resample_seconds));  // 84 − 64 = 20 exactly
    EXPECT_TRUE(s.wants_sample(100));
    // A run on one thread that was not asked for (say the daemon allowed 1) is a sample too:
    // the clock starts again from it.
    EXPECT_FALSE(s.observe(1, 1, 0.008, 90).has_value());
    EXPECT_FALSE(s.wants_sample(90 + resample_seconds - 0.5));
    EXPECT_TRUE(s.wants_sample(90 + resample_seconds));
}

TEST(CoordEfficiencyMeter, ParallelRunIsScoredAgainstTheSerialBaseline) {
    site_efficiency s;
    // T1 = 8 ms per unit; a one-thread run gives no efficiency of its own.
    EXPECT_FALSE(s.observe(1, 1, 0.008, 0).has_value());
    EXPECT_DOUBLE_EQ(s.serial_per_unit(), 0.008);
    // E = T1 / (p·T): 8 / (4 · 2.5) = 0.8.
    auto e = s.observe(4, 1, 0.0025, 1);
    ASSERT_TRUE(e.has_value());
    EXPECT_DOUBLE_EQ(*e, 0.8);
    // 8 / (2 · 5) = 0.8; 8 / (8 · 2) = 0.5; 8 / (4 · 8) = 0.25 (no speedup); 8 / (16 · 0.5) = 1.
    e = s.observe(2, 1, 0.005, 2);
    ASSERT_TRUE(e.has_value());
    EXPECT_DOUBLE_EQ(*e, 0.8);
    e = s.observe(8, 1, 0.002, 3);
    ASSERT_TRUE(e.has_value());
    EXPECT_DOUBLE_EQ(*e, 0.5);
    e = s.observe(4, 1, 0.008, 4);
    ASSERT_TRUE(e.has_value());
    EXPECT_DOUBLE_EQ(*e, 0.25);
    e = s.observe(16, 1, 0.0005, 5);
    ASSERT_TRUE(e.has_value());
    EXPECT_DOUBLE_EQ(*e, 1.0);
    // Parallel runs leave the baseline alone.
    EXPECT_DOUBLE_EQ(s.serial_per_unit(), 0.008);
}

TEST(CoordEfficiencyMeter, UnitsNormaliseRunsOfDifferentLengths) {
    site_efficiency s;
    // A loop of 1000 iterations on one thread in 8 ms: 8 µs per iteration.
    EXPECT_FALSE(s.observe(1, 1000, 0.008, 0).has_value());
    EXPECT_DOUBLE_EQ(s.serial_per_unit(), 8e-6);
    // 2000 iterations on 4 threads in 5 ms: 2.5 µs each, E = 8 / (4 · 2.5) = 0.8 (comparing
    // whole runs would give 8 / (4 · 5) = 0.4).
    auto e = s.observe(4, 2000, 0.005, 1);
    ASSERT_TRUE(e.has_value());
    EXPECT_DOUBLE_EQ(*e, 0.8);
    // 500 iterations in 1.25 ms: the same rate, the same efficiency.
    e = s.observe(4, 500, 0.00125, 2);
    ASSERT_TRUE(e.has_value());
    EXPECT_DOUBLE_EQ(*e, 0.8);
    // A second sample of 4000 iterations in 16 ms (4 µs each) averages per iteration: 6 µs.
    EXPECT_FALSE(s.observe(1, 4000, 0.016, 30).has_value());
    EXPECT_DOUBLE_EQ(s.serial_per_unit(), 6e-6);
    e = s.observe(4, 2000, 0.003, 31);  // 1.5 µs each: 6 / (4 · 1.5) = 1
    ASSERT_TRUE(e.has_value());
    EXPECT_DOUBLE_EQ(*e, 1.0);
}

TEST(CoordEfficiencyMeter, SerialBaselineIsAMeanWeightedOneHalf) {
    site_efficiency s;
    EXPECT_FALSE(s.observe(1, 1, 0.008, 0).has_value());
    EXPECT_FALSE(s.observe(1, 1, 0.004, 30).has_value());
    // 0.5 · 8 + 0.5 · 4 = 6 ms: neither the first nor the last alone.
    EXPECT_DOUBLE_EQ(s.serial_per_unit(), 0.006);
    auto e = s.observe(4, 1, 0.0025, 31);  // 6 / (4 · 2.5) = 0.6
    ASSERT_TRUE(e.has_value());
    EXPECT_DOUBLE_EQ(*e, 0.6);
    // A third of 12 ms: 0.5 · 6 + 0.5 · 12 = 9 ms (the mean of all three would be 8).
    EXPECT_FALSE(s.observe(1, 1, 0.012, 60).has_value());
    EXPECT_DOUBLE_EQ(s.serial_per_unit(), 0.009);
    e = s.observe(4, 1, 0.0025, 61);  // 9 / 10
    ASSERT_TRUE(e.has_value());
    EXPECT_DOUBLE_EQ(*e, 0.9);
}

TEST(CoordEfficiencyMeter, EfficiencyIsClampedAtTwo) {
    site_efficiency s;
    EXPECT_FALSE(s.observe(1, 1, 0.008, 0).has_value());
    // Above 1 is kept (superlinear speedups exist): 8 / (4 · 1.25) = 1.6.
    auto e = s.observe(4, 1, 0.00125, 1);
    ASSERT_TRUE(e.has_value());
    EXPECT_DOUBLE_EQ(*e, 1.6);
    // 8 / (4 · 0.8) = 2.5, 8 / (4 · 0.5) = 4 and 8 / (8 · 0.125) = 8: a glitch, capped at 2.
    for (const auto& [threads, seconds] : {std::pair{4u, 0.0008}, std::pair{4u, 0.0005}, std::pair{8u, 0.000125}}) {
        e = s.observe(threads, 1, seconds, 2);
        ASSERT_TRUE(e.has_value());
        EXPECT_EQ(*e, 2.0) << threads << " threads, " << seconds << " s";
    }
}

TEST(CoordEfficiencyMeter, InvalidRunsAreIgnored) {
    site_efficiency s;
    const double bad_seconds[] = {0.0, -0.008, not_a_number, infinity};
    const double bad_units[] = {0.0, -5.0, not_a_number};
    // Nothing sets a baseline or counts as a parallel run.
    for (const double b : bad_seconds) {
        EXPECT_FALSE(s.observe(1, 1, b, 10).has_value()) << b;
        EXPECT_FALSE(s.observe(4, 1, b, 11).has_value()) << b;
    }
    for (const double b : bad_units) {
        EXPECT_FALSE(s.observe(1, b, 0.008, 10).has_value()) << b;
        EXPECT_FALSE(s.observe(4, b, 0.0025, 11).has_value()) << b;
    }
    EXPECT_EQ(s.serial_per_unit(), 0.0);
    EXPECT_FALSE(s.wants_sample(11));

    // A valid baseline at 12 and a short parallel run at 13.
    EXPECT_FALSE(s.observe(1, 1, 0.008, 12).has_value());
    auto e = s.observe(4, 1, 0.0025, 13);
    ASSERT_TRUE(e.has_value());
    EXPECT_DOUBLE_EQ(*e, 0.8);
    // Bad one-thread runs at 25 neither move the baseline nor restart the resample clock;
    // bad long parallel runs at 26 do not stop the next sample.
    for (const double b : bad_seconds) EXPECT_FALSE(s.observe(1, 1, b, 25).has_value()) << b;
    for (const double b : bad_units) {
        EXPECT_FALSE(s.observe(1, b, 0.5, 25).has_value()) << b;
        EXPECT_FALSE(s.observe(4, b, 1.0, 26).has_value()) << b;
    }
    for (const double b : bad_seconds) {
        if (b > 0) {
            EXPECT_FALSE(s.observe(4, 1, b, 26).has_value()) << b;
        }
    }
    EXPECT_DOUBLE_EQ(s.serial_per_unit(), 0.008);
    EXPECT_TRUE(s.wants_sample(12 + resample_seconds));
    e = s.observe(4, 1, 0.0025, 33);
    ASSERT_TRUE(e.has_value());
    EXPECT_DOUBLE_EQ(*e, 0.8);
}

TEST(CoordEfficiencyMeter, ChangingThreadCountScoresEachRunAtItsOwnCount) {
    site_efficiency s;
    EXPECT_FALSE(s.observe(1, 1, 0.008, 0).has_value());
    // At 4 threads: 4 ms then 2 ms. Each run is its own: 0.5 then 1.0 (a mean of the two,
    // 3 ms, would give 0.667).
    auto e = s.observe(4, 1, 0.004, 1);
    ASSERT_TRUE(e.has_value());
    EXPECT_DOUBLE_EQ(*e, 0.5);
    e = s.observe(4, 1, 0.002, 2);
    ASSERT_TRUE(e.has_value());
    EXPECT_DOUBLE_EQ(*e, 1.0);
    // At 8 threads, 1.25 ms: 8 / (8 · 1.25) = 0.8, nothing of the 4-thread runs mixed in.
    e = s.observe(8, 1, 0.00125, 3);
    ASSERT_TRUE(e.has_value());
    EXPECT_DOUBLE_EQ(*e, 0.8);
    // Back to 4 threads at 2.5 ms: 0.8 again, not pulled towards the earlier 4-thread runs.
    e = s.observe(4, 1, 0.0025, 4);
    ASSERT_TRUE(e.has_value());
    EXPECT_DOUBLE_EQ(*e, 0.8);
    // Sampling follows the last run at whatever count: long at 8 threads, none wanted;
    // short at 2, wanted (once the resample time is over).
    EXPECT_TRUE(s.observe(8, 1, 0.05, 30).has_value());
    EXPECT_FALSE(s.wants_sample(30));
    EXPECT_TRUE(s.observe(2, 1, 0.005, 31).has_value());
    EXPECT_TRUE(s.wants_sample(31));
}

// ---- process_efficiency ----

TEST(CoordEfficiencyMeter, MaySampleIsRateLimitedAcrossTheProcess) {
    constexpr double gap = least_seconds_between_samples;
    process_efficiency m;
    EXPECT_TRUE(m.may_sample(100));  // the first ever
    EXPECT_FALSE(m.may_sample(100));
    EXPECT_FALSE(m.may_sample(100 + gap / 2));
    const double granted = 100 + 2 * gap;
    EXPECT_TRUE(m.may_sample(granted));
    // A refusal does not take the slot: refused 3/4 of a gap after the grant, granted at
    // 3/2 (had the refusal taken it, that would be 3/4 of a gap after it).
    EXPECT_FALSE(m.may_sample(granted + 0.75 * gap));
    EXPECT_TRUE(m.may_sample(granted + 1.5 * gap));
    EXPECT_FALSE(m.may_sample(granted + 1.75 * gap));
    // A whole gap after a grant is after: granted at 0 (so that the difference is exact),
    // granted again at the gap.
    process_efficiency z;
    EXPECT_TRUE(z.may_sample(0));
    EXPECT_TRUE(z.may_sample(gap));
}

TEST(CoordEfficiencyMeter, MaySampleKeepsSamplesWithinTheBudget) {
    // The calls below are 1/8 s apart or more: only the budget refuses them.
    ASSERT_LE(least_seconds_between_samples, 0.125);
    process_efficiency m;
    EXPECT_TRUE(m.may_sample(100));  // the budget's time starts here
    // Bad durations charge nothing.
    for (const double b : {0.0, -1.0, not_a_number, infinity}) m.sampled(b);
    EXPECT_TRUE(m.may_sample(100.25));
    // Samples that took the budget of half a second: refused before half a second has
    // passed since the first (at 3/8 s they are 4/3 of the budget), granted at 3/4 s.
    m.sampled(sample_budget * 0.5);
    EXPECT_FALSE(m.may_sample(100.375));
    EXPECT_FALSE(m.may_sample(100.4375));  // 100.5 is the edge
    EXPECT_TRUE(m.may_sample(100.75));
    // Another second's budget: 1.5 s' worth in all, refused until 101.5 has passed.
    m.sampled(sample_budget);
    EXPECT_FALSE(m.may_sample(101.25));
    EXPECT_TRUE(m.may_sample(102));
}

TEST(CoordEfficiencyMeter, TakeGivesNothingBeforeAQuarterSecond) {
    process_efficiency m;
    EXPECT_FALSE(m.take(100, efficiency_measure::loop_progress).has_value());  // no run yet
    // A run of 1/8 s ending at 100.125: the interval opens at its start, 100.
    m.add(0.8, 0.125, 4, 100.125);
    EXPECT_FALSE(m.take(100.125, efficiency_measure::loop_progress).has_value());
    EXPECT_FALSE(m.take(100.1875, efficiency_measure::loop_progress).has_value());
    // Those refusals closed nothing: at 100.25 the interval is 0.25 s, the run and as much
    // serial time.
    const auto r = m.take(100.25, efficiency_measure::loop_progress);
    ASSERT_TRUE(r.has_value());
    EXPECT_DOUBLE_EQ(r->efficiency, 0.8);
    EXPECT_EQ(r->parallel_seconds, 0.125);
    EXPECT_EQ(r->serial_seconds, 0.125);
    EXPECT_EQ(r->threads, 4u);
    EXPECT_EQ(r->measure, efficiency_measure::loop_progress);
}

TEST(CoordEfficiencyMeter, ReportIsTheTimeWeightedMeanOfItsRuns) {
    process_efficiency m;
    m.add(0.8, 0.125, 4, 100.125);                     // interval opens at 100
    m.add(std::nullopt, 0.0625, 4, 100.25);            // a site with no baseline yet
    m.add(0.5, 0.25, 4, 100.5);
    const auto r = m.take(100.75, efficiency_measure::region_time);
    ASSERT_TRUE(r.has_value());
    // (0.8 · 1/8 + 0.5 · 1/4) / (3/8) = 0.225 / 0.375 = 0.6 (the plain mean would be 0.65).
    EXPECT_DOUBLE_EQ(r->efficiency, 0.6);
    EXPECT_EQ(r->parallel_seconds, 0.375);
    // 0.75 s of interval less 0.375 measured and 0.0625 unmeasured.
    EXPECT_EQ(r->serial_seconds, 0.3125);
    EXPECT_EQ(r->threads, 4u);
    EXPECT_EQ(r->measure, efficiency_measure::region_time);
    EXPECT_EQ(r->flags, 0u);
}

TEST(CoordEfficiencyMeter, TakeStartsTheNextInterval) {
    process_efficiency m;
    m.add(0.8, 0.125, 4, 100.125);
    m.add(0.5, 0.25, 4, 100.5);
    ASSERT_TRUE(m.take(100.75, efficiency_measure::region_time).has_value());
    // Right after: nothing, the runs were reported.
    EXPECT_FALSE(m.take(100.75, efficiency_measure::region_time).has_value());
    EXPECT_FALSE(m.take(100.875, efficiency_measure::region_time).has_value());
    // The next interval opens at the take (100.75), not at the next run's start.
    m.add(1.0, 0.125, 4, 101.0);
    const auto r = m.take(101.0, efficiency_measure::region_time);
    ASSERT_TRUE(r.has_value());
    EXPECT_DOUBLE_EQ(r->efficiency, 1.0);   // the earlier runs' 0.6 is not mixed in
    EXPECT_EQ(r->parallel_seconds, 0.125);  // nor their 0.375 s
    EXPECT_EQ(r->serial_seconds, 0.125);
    EXPECT_FALSE(m.take(101.0, efficiency_measure::region_time).has_value());
}

TEST(CoordEfficiencyMeter, ChangeOfThreadCountStartsANewInterval) {
    process_efficiency m;
    m.add(0.8, 0.125, 4, 100.125);           // opens at 100
    m.add(std::nullopt, 0.0625, 4, 100.25);
    // At 8 threads: the 4-thread runs are dropped and the interval opens at this run's
    // start, 100.375.
    m.add(0.5, 0.125, 8, 100.5);
    // 0.5 s after the old start, but 0.125 s after the new one.
    EXPECT_FALSE(m.take(100.5, efficiency_measure::loop_progress).has_value());
    m.add(0.75, 0.125, 8, 100.75);
    const auto r = m.take(100.75, efficiency_measure::loop_progress);
    ASSERT_TRUE(r.has_value());
    // (0.5 + 0.75) / 2 = 0.625 over 0.25 s (with the old run mixed in: 0.683 over 0.375 s).
    EXPECT_DOUBLE_EQ(r->efficiency, 0.625);
    EXPECT_EQ(r->parallel_seconds, 0.25);
    EXPECT_EQ(r->serial_seconds, 0.125);  // 0.375 − 0.25, the old unmeasured 1/16 s gone too
    EXPECT_EQ(r->threads, 8u);
    // After a take the count may change with nothing to drop: the interval stays open from
    // the take (101 − 100.75 = 0.25 s with this 1/8 s run at 2 threads).
    m.add(1.0, 0.125, 2, 101.0);
    const auto r2 = m.take(101.0, efficiency_measure::loop_progress);
    ASSERT_TRUE(r2.has_value());
    EXPECT_EQ(r2->parallel_seconds, 0.125);
    EXPECT_EQ(r2->serial_seconds, 0.125);
    EXPECT_EQ(r2->threads, 2u);
}

TEST(CoordEfficiencyMeter, InvalidRunsAreLeftOutOfTheReport) {
    process_efficiency m;
    for (const double b : {0.0, -0.125, not_a_number, infinity}) {
        m.add(0.8, b, 4, 100);
        m.add(std::nullopt, b, 4, 100);
    }
    EXPECT_FALSE(m.take(200, efficiency_measure::loop_progress).has_value());
    // They opened no interval: this one opens at 200, the valid run's start.
    m.add(0.8, 0.125, 4, 200.125);
    const auto r = m.take(200.25, efficiency_measure::loop_progress);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->parallel_seconds, 0.125);
    EXPECT_EQ(r->serial_seconds, 0.125);

    // Only unmeasured runs: nothing to report, and their time stays out of the serial time
    // of the report that follows.
    process_efficiency u;
    u.add(std::nullopt, 0.25, 4, 300.25);  // opens at 300
    EXPECT_FALSE(u.take(301, efficiency_measure::loop_progress).has_value());
    u.add(0.5, 0.25, 4, 301.25);
    const auto r2 = u.take(301.5, efficiency_measure::loop_progress);
    ASSERT_TRUE(r2.has_value());
    EXPECT_DOUBLE_EQ(r2->efficiency, 0.5);
    EXPECT_EQ(r2->parallel_seconds, 0.25);
    EXPECT_EQ(r2->serial_seconds, 1.0);  // 1.5 − 0.25 − 0.25

    // A report is in the protocol's range: efficiency at most 64, threads at least 1.
    process_efficiency c;
    c.add(100.0, 0.25, 0, 400.25);
    const auto r3 = c.take(400.5, efficiency_measure::declared);
    ASSERT_TRUE(r3.has_value());
    EXPECT_EQ(r3->efficiency, 64.0);
    EXPECT_EQ(r3->threads, 1u);
}

TEST(CoordEfficiencyMeter, RunsAddedFromManyThreadsAreAllCounted) {
    process_efficiency m;
    constexpr int workers = 4;
    constexpr int runs = 25000;
    constexpr double seconds = 0x1.0p-12;  // every sum below is exact
    std::atomic<int> ready{0};
    std::vector<std::thread> threads;
    for (int w = 0; w < workers; ++w)
        threads.emplace_back([&m, &ready, w] {
            ready.fetch_add(1);
            while (ready.load() < workers) std::this_thread::yield();  // start together
            const double e = 0.25 * (w + 1);                            // 0.25, 0.5, 0.75, 1
            for (int i = 0; i < runs; ++i) m.add(e, seconds, 4, 200);
        });
    for (auto& t : threads) t.join();
    const auto r = m.take(400, efficiency_measure::loop_progress);
    ASSERT_TRUE(r.has_value());
    const double parallel = workers * runs * seconds;  // 24.4140625 s
    EXPECT_EQ(r->parallel_seconds, parallel);
    EXPECT_EQ(r->efficiency, 0.625);  // equal times: the plain mean
    // The interval opened at the first run's start, 200 − 2^-12.
    EXPECT_EQ(r->serial_seconds, 200 + seconds - parallel);
    EXPECT_EQ(r->threads, 4u);
}

TEST(CoordEfficiencyMeter, ProcessMeterIsOneAndTheClockDoesNotGoBack) {
    EXPECT_EQ(&process_meter(), &process_meter());
    double last = monotonic_seconds();
    ASSERT_TRUE(std::isfinite(last));
    for (int i = 0; i < 1000; ++i) {
        const double now = monotonic_seconds();
        ASSERT_GE(now, last);
        last = now;
    }
}

// ---- end to end: the client's report, the daemon's reading ----

hello_message hello(pid_t pid, unsigned own) { return {pid, client_native, own, make_text<48>("")}; }

TEST(CoordEfficiencyMeter, DaemonReadsTheReportAsTheClientMeasuredIt) {
    // One region site of a client, its meter and the daemon's table, driven as
    // node_share_policy.cpp drives them: observe(), add(), take() after every run.
    site_efficiency site;
    process_efficiency meter;
    client_table table(16);
    table.add(3, 300, 1000, hello(300, 16), "app", 99);
    const auto run = [&](unsigned threads, double seconds, double now) {
        const auto e = site.observe(threads, 1, seconds, now);
        meter.add(e, seconds, threads, now);
        return e;
    };
    constexpr auto measure = efficiency_measure::region_time;

    // First run at 4 threads, 2.5 ms ending at 100.0025: no baseline, so unmeasured. The
    // interval opens at 100.
    double now = 100.0025;
    EXPECT_FALSE(run(4, 0.0025, now).has_value());
    EXPECT_FALSE(meter.take(now, measure).has_value());
    ASSERT_TRUE(site.wants_sample(now));
    ASSERT_TRUE(meter.may_sample(now));
    // The sample: 8 ms on one thread, unmeasured too (1/100 + 1/2000 s left out in all).
    now += 0.008;
    meter.sampled(0.008);
    EXPECT_FALSE(run(1, 0.008, now).has_value());
    EXPECT_FALSE(meter.take(now, measure).has_value());
    // 10 runs of 5 ms (E = 8 / 20 = 0.4) and 19 of 2.5 ms (E = 0.8), each after 2.5 ms of
    // serial code; none reaches the quarter second.
    for (int i = 0; i < 29; ++i) {
        const double seconds = i < 10 ? 0.005 : 0.0025;
        now += 0.0025 + seconds;
        const auto e = run(4, seconds, now);
        ASSERT_TRUE(e.has_value());
        EXPECT_DOUBLE_EQ(*e, i < 10 ? 0.4 : 0.8);
        EXPECT_FALSE(meter.take(now, measure).has_value()) << i;
    }
    // Then 0.1275 s of serial code and a last 2.5 ms run, ending 0.3105 s after the start:
    // parallel 10·5 + 20·2.5 ms = 0.1 s at E = 0.6, serial 0.3105 − 0.1 − 0.0105 = 0.2 s.
    now += 0.1275 + 0.0025;
    ASSERT_TRUE(run(4, 0.0025, now).has_value());
    const auto r = meter.take(now, measure);
    ASSERT_TRUE(r.has_value());
    EXPECT_NEAR(r->efficiency, 0.6, 1e-9);
    EXPECT_NEAR(r->parallel_seconds, 0.1, 1e-9);
    EXPECT_NEAR(r->serial_seconds, 0.2, 1e-9);
    EXPECT_EQ(r->threads, 4u);

    // The daemon: E_recent = (0.6 · 0.1 + 0.2 / 4) / 0.3 = 11/30, taken as it is (the first
    // report), slope (4 · 11/30 − 1) / ln 4 = (7/15) / ln 4.
    ASSERT_TRUE(table.report(3, *r, now));
    const client_record& c = *table.find(3);
    const double recent = blended_efficiency(r->efficiency, r->parallel_seconds, r->serial_seconds, r->threads);
    EXPECT_NEAR(recent, 11.0 / 30, 1e-9);
    EXPECT_DOUBLE_EQ(c.efficiency.value(), recent);
    EXPECT_DOUBLE_EQ(c.slope, log_speedup_slope(recent, 4, 0));
    EXPECT_NEAR(c.slope, (7.0 / 15) / std::log(4.0), 1e-9);
    EXPECT_EQ(c.measure, measure);
    const double first_slope = c.slope;

    // The allocation becomes 8 threads. The interval opened at the take; the count changes
    // with nothing pending, so nothing is dropped. 39 runs of 2 ms (E = 8 / 16 = 0.5), each
    // after 0.5 ms of serial code, then 0.3005 s of serial code and a 40th run.
    const double opened = now;
    for (int i = 0; i < 39; ++i) {
        now += 0.0005 + 0.002;
        const auto e = run(8, 0.002, now);
        ASSERT_TRUE(e.has_value());
        EXPECT_DOUBLE_EQ(*e, 0.5);
        EXPECT_FALSE(meter.take(now, measure).has_value()) << i;
    }
    EXPECT_FALSE(site.wants_sample(now));  // 20 s have not passed since the sample
    now += 0.3005 + 0.002;
    ASSERT_TRUE(run(8, 0.002, now).has_value());
    EXPECT_NEAR(now - opened, 0.4, 1e-9);
    const auto r2 = meter.take(now, measure);
    ASSERT_TRUE(r2.has_value());
    EXPECT_NEAR(r2->efficiency, 0.5, 1e-9);
    EXPECT_NEAR(r2->parallel_seconds, 0.08, 1e-9);
    EXPECT_NEAR(r2->serial_seconds, 0.32, 1e-9);
    EXPECT_EQ(r2->threads, 8u);

    // E_recent = (0.5 · 0.08 + 0.32 / 8) / 0.4 = 0.2, smoothed over Δt = 0.4 s with RC = 4:
    // α = 1/11, E = 0.2/11 + (10/11)(11/30) = 58/165; slope (8 · 58/165 − 1) / ln 8.
    ASSERT_TRUE(table.report(3, *r2, now));
    const double recent2 = blended_efficiency(r2->efficiency, r2->parallel_seconds, r2->serial_seconds, r2->threads);
    EXPECT_NEAR(recent2, 0.2, 1e-9);
    const double dt = r2->parallel_seconds + r2->serial_seconds;
    const double alpha = dt / (efficiency_filter::default_time_constant_seconds + dt);
    const double smoothed = alpha * recent2 + (1 - alpha) * recent;
    EXPECT_NEAR(smoothed, 58.0 / 165, 1e-9);
    EXPECT_DOUBLE_EQ(c.efficiency.value(), smoothed);
    EXPECT_DOUBLE_EQ(c.slope, log_speedup_slope(smoothed, 8, first_slope));
    EXPECT_NEAR(c.slope, (299.0 / 165) / std::log(8.0), 1e-9);
    EXPECT_EQ(c.reports, 2u);
}

// Inputs no real program makes (units are iteration counts >= 1), found by reviewing the
// first version: they must leave the meter as they found it, never yield NaN or infinity.
TEST(CoordEfficiencyMeter, NonFiniteUnitsAndEfficienciesAreIgnored) {
    site_efficiency site;
    EXPECT_FALSE(site.observe(1, 1.0, 0.008, 1.0).has_value());  // baseline 8 ms
    EXPECT_FALSE(site.observe(4, INFINITY, 0.0025, 2.0).has_value());
    EXPECT_FALSE(site.observe(1, INFINITY, 0.008, 3.0).has_value());
    EXPECT_DOUBLE_EQ(site.serial_per_unit(), 0.008);
    EXPECT_FALSE(site.observe(1, 1e-310, 1.0, 4.0).has_value());  // per unit: infinite
    EXPECT_DOUBLE_EQ(site.serial_per_unit(), 0.008);
    EXPECT_DOUBLE_EQ(*site.observe(4, 1.0, 0.0025, 5.0), 0.8);
    process_efficiency meter;
    meter.add(std::nan(""), 0.25, 4, 10.0);  // counts as unmeasured
    meter.add(0.5, 0.25, 4, 10.25);
    const auto r = meter.take(10.5, efficiency_measure::declared);
    ASSERT_TRUE(r.has_value());
    EXPECT_DOUBLE_EQ(r->efficiency, 0.5);
    EXPECT_DOUBLE_EQ(r->serial_seconds, 0.75 - 0.25 - 0.25);  // the interval opened at 9.75
}

TEST(CoordEfficiencyMeter, ARunSpanningATakeCountsOnlyItsPartInTheNewInterval) {
    process_efficiency meter;
    meter.add(0.5, 0.25, 4, 100.25);  // interval opens at 100.0
    ASSERT_TRUE(meter.take(100.5, efficiency_measure::declared).has_value());
    // 0.5 s long, ended at 100.875: only the 0.375 s after the take are this interval's.
    meter.add(0.8, 0.5, 4, 100.875);
    const auto r = meter.take(100.875, efficiency_measure::declared);
    ASSERT_TRUE(r.has_value());
    EXPECT_DOUBLE_EQ(r->parallel_seconds, 0.375);
    EXPECT_DOUBLE_EQ(r->serial_seconds, 0.0);
}

}  // namespace

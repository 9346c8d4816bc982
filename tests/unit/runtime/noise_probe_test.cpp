// runtime/noise_probe: the FWQ/FTQ arithmetic on hand-made traces with hand-computed answers,
// and the measuring loops' shape (not their speed).
#include "runtime/noise_probe.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace {
using namespace aloe::runtime;

TEST(NoiseProbe, FwqQuietTraceHasNoEvents) {
    const std::vector<double> trace(200, 10'000.0);  // 10 µs every time
    const noise_summary s = summarize_fwq(trace, 3);
    EXPECT_EQ(s.method, "fwq");
    EXPECT_EQ(s.cpu, 3);
    EXPECT_EQ(s.samples, 200u);
    EXPECT_DOUBLE_EQ(s.quantum_us, 10.0);
    EXPECT_EQ(s.events, 0u);
    EXPECT_DOUBLE_EQ(s.lost_fraction, 0.0);
    EXPECT_DOUBLE_EQ(s.measured_s, 200 * 10e-6);
}

TEST(NoiseProbe, FwqCountsDelayedQuantaAndTheirLength) {
    // 990 quanta of 10 µs and 10 of 60 µs: 10 events of 50 µs each.
    std::vector<double> trace(990, 10'000.0);
    trace.insert(trace.begin() + 500, 10, 60'000.0);
    const noise_summary s = summarize_fwq(trace, 0);
    EXPECT_DOUBLE_EQ(s.quantum_us, 10.0);
    EXPECT_EQ(s.events, 10u);
    EXPECT_DOUBLE_EQ(s.event_mean_us, 50.0);
    EXPECT_DOUBLE_EQ(s.event_max_us, 50.0);
    EXPECT_DOUBLE_EQ(s.max_us, 60.0);
    const double measured_us = 990 * 10.0 + 10 * 60.0;  // 10500
    EXPECT_DOUBLE_EQ(s.lost_fraction, 500.0 / measured_us);
    EXPECT_DOUBLE_EQ(s.events_per_s, 10 / (measured_us * 1e-6));
}

TEST(NoiseProbe, FwqThresholdIgnoresJitterBelowHalfAQuantum) {
    // 4 µs over a 10 µs quantum is below the 5 µs threshold: lost time, but no event.
    std::vector<double> trace(100, 10'000.0);
    trace[7] = 14'000.0;
    const noise_summary s = summarize_fwq(trace, 0);
    EXPECT_EQ(s.events, 0u);
    EXPECT_GT(s.lost_fraction, 0.0);
}

TEST(NoiseProbe, FwqBaselineIsNotOneLuckySample) {
    // One sample far below the rest must not become the quantum (5th percentile is used).
    std::vector<double> trace(100, 10'000.0);
    trace[0] = 1'000.0;
    EXPECT_DOUBLE_EQ(summarize_fwq(trace, 0).quantum_us, 10.0);
}

TEST(NoiseProbe, FtqConvertsMissingWorkToTime) {
    // Slices of 100 µs; the best did 1000 units. A slice with 250 units lost 75 µs.
    std::vector<std::uint64_t> trace(99, 1000);
    trace.push_back(250);
    const noise_summary s = summarize_ftq(trace, 100.0, 1);
    EXPECT_EQ(s.method, "ftq");
    EXPECT_EQ(s.events, 1u);
    EXPECT_DOUBLE_EQ(s.event_mean_us, 75.0);
    EXPECT_DOUBLE_EQ(s.max_us, 75.0);
    EXPECT_DOUBLE_EQ(s.lost_fraction, 75.0 / (100 * 100.0));
    EXPECT_DOUBLE_EQ(s.measured_s, 100 * 100e-6);
}

// The event list (`aloe noise --json --trace`, the input of `aloe sim`): each delayed sample
// once, where it began in the CPU's measurement and how late it was, in order.
TEST(NoiseProbe, FwqListsEachEventWithItsStartAndLength) {
    // 100 quanta of 10 µs; sample 20 took 35 µs and sample 70 took 110 µs. A 4 µs jitter
    // (sample 40, under the 5 µs threshold) is lost time but no event.
    std::vector<double> trace(100, 10'000.0);
    trace[20] = 35'000.0;
    trace[40] = 14'000.0;
    trace[70] = 110'000.0;
    const noise_summary s = summarize_fwq(trace, 2);
    ASSERT_DOUBLE_EQ(s.quantum_us, 10.0);
    ASSERT_EQ(s.events, 2u);
    ASSERT_EQ(s.event_list.size(), 2u);
    // Starts: the durations before the sample. 20 × 10 = 200 µs; 68 × 10 + 35 + 14 = 729 µs.
    EXPECT_DOUBLE_EQ(s.event_list[0].start_us, 200.0);
    EXPECT_DOUBLE_EQ(s.event_list[0].length_us, 25.0);
    EXPECT_DOUBLE_EQ(s.event_list[1].start_us, 729.0);
    EXPECT_DOUBLE_EQ(s.event_list[1].length_us, 100.0);
    // The same events the summary counts.
    EXPECT_DOUBLE_EQ(s.event_mean_us, (25.0 + 100.0) / 2);
    EXPECT_DOUBLE_EQ(s.event_max_us, 100.0);
}

TEST(NoiseProbe, FtqListsEachEventAtItsSlice) {
    // Slices of 100 µs, best 1000 units. Slice 3 did 400 (lost 60 µs), slice 8 did 900
    // (lost 10 µs: over the 5 µs threshold), slice 5 did 970 (3 µs: not an event).
    std::vector<std::uint64_t> trace(10, 1000);
    trace[3] = 400;
    trace[5] = 970;
    trace[8] = 900;
    const noise_summary s = summarize_ftq(trace, 100.0, 0);
    ASSERT_EQ(s.events, 2u);
    ASSERT_EQ(s.event_list.size(), 2u);
    EXPECT_DOUBLE_EQ(s.event_list[0].start_us, 300.0);
    EXPECT_DOUBLE_EQ(s.event_list[0].length_us, 60.0);
    EXPECT_DOUBLE_EQ(s.event_list[1].start_us, 800.0);
    EXPECT_DOUBLE_EQ(s.event_list[1].length_us, 10.0);
}

TEST(NoiseProbe, QuietTraceListsNoEvents) {
    EXPECT_TRUE(summarize_fwq(std::vector<double>(50, 10'000.0), 0).event_list.empty());
    EXPECT_TRUE(summarize_ftq(std::vector<std::uint64_t>(50, 1000), 100.0, 0).event_list.empty());
}

TEST(NoiseProbe, RejectsEmptyTracesAndBadSlices) {
    EXPECT_THROW(summarize_fwq({}, 0), std::invalid_argument);
    EXPECT_THROW(summarize_ftq({}, 10.0, 0), std::invalid_argument);
    EXPECT_THROW(summarize_ftq({1, 2}, 0.0, 0), std::invalid_argument);
    EXPECT_THROW(calibrate_work_units(0.0), std::invalid_argument);
}

// `aloe noise` refuses a plan whose count is 0 (the summaries throw on an empty trace) or
// above max_samples_per_cpu, so the count must be exact at the edges.
TEST(NoiseProbe, SamplesInCountsWholeQuanta) {
    EXPECT_EQ(samples_in(2, 10), 200'000u);
    EXPECT_EQ(samples_in(0.0005, 1000), 0u);     // half a slice: none
    EXPECT_EQ(samples_in(0.1, 1'000'000), 0u);   // a 1 s slice in 0.1 s
    EXPECT_EQ(samples_in(0.5, 1'000'000), 0u);
    EXPECT_EQ(samples_in(1, 1'000'000), 1u);
    EXPECT_EQ(samples_in(0.0157, 10), 1570u);    // 1569.9999… in binary
    EXPECT_EQ(samples_in(0.003, 1000), 3u);
    EXPECT_EQ(samples_in(600, 1), 600'000'000u);
    EXPECT_EQ(samples_in(0, 10), 0u);
    EXPECT_EQ(samples_in(-1, 10), 0u);
    EXPECT_EQ(samples_in(1, 0), 0u);
    EXPECT_EQ(samples_in(std::numeric_limits<double>::quiet_NaN(), 10), 0u);
    EXPECT_EQ(samples_in(std::numeric_limits<double>::infinity(), 10), 0u);
    EXPECT_EQ(samples_in(1e300, 1e-300), std::numeric_limits<std::size_t>::max());
}

TEST(NoiseProbe, MeasuringLoopsReturnOneValuePerSample) {
    const std::uint64_t units = calibrate_work_units(5.0);
    EXPECT_GE(units, 1u);
    const std::vector<double> fwq = run_fwq(units, 50);
    ASSERT_EQ(fwq.size(), 50u);
    for (const double ns : fwq) EXPECT_GT(ns, 0.0);
    const std::vector<std::uint64_t> ftq = run_ftq(50.0, 20);
    ASSERT_EQ(ftq.size(), 20u);
    // Some slice did work (a slice can be empty when the whole slice was preempted).
    EXPECT_GT(*std::max_element(ftq.begin(), ftq.end()), 0u);
}

}  // namespace

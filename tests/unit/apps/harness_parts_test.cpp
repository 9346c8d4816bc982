// apps/common: schedules per runtime, the background-load spec, the noise draws and the
// record writer — the pieces of the driver that do not need a whole workload (those are run
// end to end by tests/apps).
#include "common/background_load.hpp"
#include "common/harness.hpp"
#include "common/json_writer.hpp"
#include "common/noise_injector.hpp"

#include <gtest/gtest.h>

#include <random>
#include <stdexcept>

namespace {
using namespace aloe_apps;

TEST(AppsSchedules, EachRuntimeAcceptsItsOwnForms) {
    EXPECT_EQ(parse_run_schedule(runtime_kind::aloe, "hybrid,fs=0.8").text, "hybrid,fs=0.8");  // as given
    EXPECT_TRUE(parse_run_schedule(runtime_kind::aloe, "staggered,fs=0.5").aloe_schedule.has_value());

    const run_schedule st = parse_run_schedule(runtime_kind::libgomp, "static");
    EXPECT_EQ(st.omp, omp_kind::static_block);
    const run_schedule sc = parse_run_schedule(runtime_kind::libgomp, "static,4");
    EXPECT_EQ(sc.omp, omp_kind::static_chunk);
    EXPECT_EQ(sc.chunk, 4);
    const run_schedule nm = parse_run_schedule(runtime_kind::libomp, "nonmonotonic:dynamic,8");
    EXPECT_EQ(nm.omp, omp_kind::nonmonotonic_dynamic);
    EXPECT_EQ(nm.chunk, 8);
    EXPECT_EQ(parse_run_schedule(runtime_kind::libomp, "guided").omp, omp_kind::guided);
    EXPECT_EQ(parse_run_schedule(runtime_kind::libomp, "guided").chunk, 1);

    EXPECT_EQ(parse_run_schedule(runtime_kind::tbb, "simple,16").tbb, tbb_kind::simple);
    EXPECT_EQ(parse_run_schedule(runtime_kind::tbb, "simple,16").chunk, 16);
    EXPECT_EQ(parse_run_schedule(runtime_kind::tbb, "affinity").tbb, tbb_kind::affinity);
    EXPECT_EQ(parse_run_schedule(runtime_kind::tbb, "static").tbb, tbb_kind::static_part);
    EXPECT_EQ(parse_run_schedule(runtime_kind::serial, "").text, "serial");
    EXPECT_EQ(parse_run_schedule(runtime_kind::taskflow, "").text, "default");
    EXPECT_EQ(parse_run_schedule(runtime_kind::taskflow, "default").text, "default");
    EXPECT_EQ(to_string(runtime_kind::taskflow), "taskflow");
}

TEST(AppsSchedules, WrongFormsAreNamed) {
    const auto message = [](runtime_kind r, std::string_view s) {
        try {
            parse_run_schedule(r, s);
        } catch (const usage_error& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    EXPECT_NE(message(runtime_kind::libgomp, "hybrid,fs=0.5").find("is not a libgomp schedule"), std::string::npos);
    EXPECT_NE(message(runtime_kind::libgomp, "dynamic,0").find("'0' is not a positive chunk size"), std::string::npos);
    EXPECT_NE(message(runtime_kind::libgomp, "dynamic,x").find("'x'"), std::string::npos);
    EXPECT_NE(message(runtime_kind::tbb, "guided").find("is not a tbb schedule"), std::string::npos);
    EXPECT_NE(message(runtime_kind::tbb, "static,4").find("is not a tbb schedule"), std::string::npos);
    EXPECT_NE(message(runtime_kind::aloe, "hybrid,fs=1.5").find("fs=1.5"), std::string::npos);
    EXPECT_NE(message(runtime_kind::serial, "static").find("is not a serial schedule"), std::string::npos);
    EXPECT_NE(message(runtime_kind::taskflow, "static").find("is not a taskflow schedule"), std::string::npos);
}

TEST(AppsBackground, ParsesAndRejects) {
    const background_options o = parse_background("1:0.25:5000");
    EXPECT_EQ(o.cpu, 1);
    EXPECT_DOUBLE_EQ(o.duty, 0.25);
    EXPECT_DOUBLE_EQ(o.period_us, 5000);
    EXPECT_DOUBLE_EQ(parse_background("0:1").period_us, 10000);
    for (const char* bad : {"1", "x:0.5", "1:0", "1:1.5", "1:0.5:10", "-1:0.5", "1.5:0.5", "1:0.5:abc"}) {
        EXPECT_THROW(parse_background(bad), std::invalid_argument) << bad;
    }
}

// The same draws as noise_injector::at_step_start, written out again: two per step.
std::vector<int> expected_events(double p, std::uint64_t seed, int steps, std::size_t cpus) {
    std::mt19937_64 rng(seed);
    std::vector<int> hits;
    for (int s = 0; s < steps; ++s) {
        const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;
        const std::uint64_t pick = rng();
        if (u < p) hits.push_back(static_cast<int>(pick % cpus));
    }
    return hits;
}

TEST(AppsNoise, DrawsAreSeededAndMatchTheDocumentedStream) {
    const std::vector<int> cpus{0, 0};  // two injectors, both on CPU 0: fine for counting
    for (const std::uint64_t seed : {1u, 7u, 12345u}) {
        noise_injector inj({0.3, 1.0, -1, seed, 5.0}, cpus);
        for (int s = 0; s < 200; ++s) inj.at_step_start();
        const auto expected = expected_events(0.3, seed, 200, cpus.size());
        EXPECT_EQ(inj.events(), static_cast<std::int64_t>(expected.size())) << "seed " << seed;
        // Each event spins at least its δ (1 µs), so the total is at least events × δ.
        EXPECT_GE(inj.injected_seconds(), static_cast<double>(expected.size()) * 1e-6);
    }
}

TEST(AppsNoise, ProbabilityZeroAndOne) {
    noise_injector never({0.0, 1.0, -1, 3}, {0});
    noise_injector always({1.0, 1.0, 0, 3}, {0});
    for (int s = 0; s < 50; ++s) {
        never.at_step_start();
        always.at_step_start();
    }
    EXPECT_EQ(never.events(), 0);
    EXPECT_EQ(always.events(), 50);
}

TEST(AppsNoise, BadOptionsAreRejected) {
    EXPECT_THROW(noise_injector({1.5, 10.0, -1, 1}, {0}), std::invalid_argument);
    EXPECT_THROW(noise_injector({0.5, 0.0, -1, 1}, {0}), std::invalid_argument);
    EXPECT_THROW(noise_injector({0.5, 2e6, -1, 1}, {0}), std::invalid_argument);
    EXPECT_THROW(noise_injector({0.5, 10.0, 2, 1}, {0, 1}), std::invalid_argument);
    EXPECT_THROW(noise_injector({0.5, 10.0, -1, 1, -1.0}, {0}), std::invalid_argument);
    EXPECT_THROW(noise_injector({0.5, 10.0, -1, 1, 2e6}, {0}), std::invalid_argument);
}

TEST(AppsJson, WriterPlacesCommasAndEscapes) {
    json_writer j;
    j.begin_object().key("a").value(1).key("b").begin_array().value(0.5).value("x\"y").null().end_array();
    j.key("c").begin_object().end_object().key("d").value(true).end_object();
    EXPECT_EQ(j.text(), R"({"a": 1, "b": [0.5, "x\"y", null], "c": {}, "d": true})");
}

}  // namespace

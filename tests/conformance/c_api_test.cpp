// Conformance of the C API (include/aloe/aloe.h), exercised by the C11 code in c_api_test.c:
// aloe_parallel_for with C bodies, status codes and aloe_last_error() for bad schedules and
// bad arguments, aloe_loop_* driven by pthreads, aloe_stats_write.
#include "conformance/c_api_test.h"
#include "conformance/coverage.hpp"

#include <aloe/aloe.h>
#include <aloe/aloe.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

namespace {

using namespace aloe_conformance;

// The sum of the loop's indices modulo 2^64, computed here independently.
std::uint64_t reference_sum(std::int64_t first, std::int64_t last, std::int64_t step) {
    std::uint64_t sum = 0;
    const std::uint64_t n = reference_count(first, last, step);
    for (std::uint64_t k = 0; k < n; ++k) sum += static_cast<std::uint64_t>(reference_index(first, step, k));
    return sum;
}

::testing::AssertionResult ran_exactly_once(const aloe_ct_result& r, std::int64_t first, std::int64_t last,
                                            std::int64_t step) {
    const auto want = static_cast<std::int64_t>(reference_count(first, last, step));
    const std::uint64_t want_sum = reference_sum(first, last, step);
    if (r.count == want && r.missed == 0 && r.repeated == 0 && r.strays == 0 && r.bad_threads == 0 &&
        r.bad_chunks == 0 && r.sum == want_sum)
        return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "status " << r.status << ", count " << r.count << " (want " << want
                                         << "), missed " << r.missed << ", repeated " << r.repeated << ", strays "
                                         << r.strays << ", bad threads " << r.bad_threads << ", bad chunks "
                                         << r.bad_chunks << ", sum " << r.sum << " (want " << want_sum
                                         << "), message '" << r.message << "'";
}

struct c_loop {
    std::int64_t first, last, step;
};

const std::vector<c_loop> ordinary_loops{
    {0, 10000, 1}, {0, 10000, 3}, {-7, 9001, 3}, {5000, -5000, -3}, {100, 0, -1}, {0, 1, 1}, {3, 3, 1}, {9, 3, 1},
};

TEST(ConformanceCApi, ParallelForWithCBodyCoversStepThreeAndNegativeStep) {
    ASSERT_GE(aloe_num_threads(), 1);
    EXPECT_EQ(aloe_num_threads(), aloe::team::global().size());
    for (const std::string& spec : all_schedule_specs()) {
        for (const c_loop& l : ordinary_loops) {
            SCOPED_TRACE(::testing::Message() << "schedule '" << spec << "', first=" << l.first << " last=" << l.last
                                              << " step=" << l.step);
            const aloe_ct_result r =
                aloe_ct_parallel_for(l.first, l.last, l.step, spec.c_str(), nullptr, ALOE_CT_WALK_CHUNK_FOR);
            EXPECT_EQ(r.status, ALOE_OK) << r.message;
            EXPECT_TRUE(ran_exactly_once(r, l.first, l.last, l.step));
        }
    }
}

TEST(ConformanceCApi, ParallelForWithCBodyCoversRangesTouchingTheInt64Limits) {
    // The body walks each chunk by its own iteration count: lo and hi must be exact.
    const std::vector<c_loop> extreme{
        {i64_max - 50, i64_max, 7},
        {i64_min + 40, i64_min, -3},
        {i64_min, i64_max, std::int64_t{1} << 60},
        {i64_max, i64_min, i64_min},
    };
    for (const std::string& spec : all_schedule_specs()) {
        for (const c_loop& l : extreme) {
            SCOPED_TRACE(::testing::Message() << "schedule '" << spec << "', first=" << l.first << " last=" << l.last
                                              << " step=" << l.step);
            const aloe_ct_result r =
                aloe_ct_parallel_for(l.first, l.last, l.step, spec.c_str(), nullptr, ALOE_CT_WALK_COUNT);
            EXPECT_EQ(r.status, ALOE_OK) << r.message;
            EXPECT_TRUE(ran_exactly_once(r, l.first, l.last, l.step));
        }
    }
}

TEST(ConformanceCApi, DocumentedChunkLoopsWorkNextToTheInt64Limits) {
    // aloe.h documents two ways to walk a chunk in C: ALOE_CHUNK_FOR for any step, and
    // `for (i = lo; i < hi; ++i)` for step 1; both must cover loops that end at INT64_MAX or
    // INT64_MIN without overflowing (UBSan, in the address build, aborts on overflow).
    const std::vector<c_loop> any_step{
        {i64_max - 50, i64_max, 7},
        {i64_min + 40, i64_min, -3},
        {i64_min, i64_max, std::int64_t{1} << 60},
        {i64_max, i64_min, i64_min},
    };
    const std::vector<c_loop> step_one{{i64_max - 5000, i64_max, 1}, {i64_min, i64_min + 5000, 1}};
    for (const std::string& spec : all_schedule_specs()) {
        for (const c_loop& l : any_step) {
            SCOPED_TRACE(::testing::Message() << "ALOE_CHUNK_FOR, schedule '" << spec << "', first=" << l.first
                                              << " last=" << l.last << " step=" << l.step);
            const aloe_ct_result r =
                aloe_ct_parallel_for(l.first, l.last, l.step, spec.c_str(), nullptr, ALOE_CT_WALK_CHUNK_FOR);
            EXPECT_EQ(r.status, ALOE_OK) << r.message;
            EXPECT_TRUE(ran_exactly_once(r, l.first, l.last, l.step));
        }
        for (const c_loop& l : step_one) {
            SCOPED_TRACE(::testing::Message() << "step-1 loop, schedule '" << spec << "', first=" << l.first
                                              << " last=" << l.last);
            const aloe_ct_result r =
                aloe_ct_parallel_for(l.first, l.last, l.step, spec.c_str(), nullptr, ALOE_CT_WALK_STEP_ONE);
            EXPECT_EQ(r.status, ALOE_OK) << r.message;
            EXPECT_TRUE(ran_exactly_once(r, l.first, l.last, l.step));
        }
    }
}

TEST(ConformanceCApi, ExplicitSiteAndNullScheduleAreAccepted) {
    const aloe_ct_result r = aloe_ct_parallel_for(0, 3000, 1, nullptr, "conformance/c/site", ALOE_CT_WALK_STEP_ONE);
    EXPECT_EQ(r.status, ALOE_OK) << r.message;
    EXPECT_TRUE(ran_exactly_once(r, 0, 3000, 1));
    const auto st = aloe::stats_of(aloe::loop_site("conformance/c/site"));
    ASSERT_TRUE(st.has_value());
    EXPECT_EQ(st->invocations + st->serial_invocations, 1u);
    EXPECT_EQ(st->iterations, 3000u);
}

TEST(ConformanceCApi, BadScheduleReturnsScheduleErrorNamingTheBadPart) {
    const std::vector<std::pair<std::string, std::string>> bad{
        {"hybrid,fs=1.5", "fs=1.5"}, {"hybird", "hybird"}, {"dynamic,chunk=0", "chunk=0"}, {"tasklets", "n="}};
    for (const auto& [spec, part] : bad) {
        SCOPED_TRACE(spec);
        const aloe_ct_result r = aloe_ct_parallel_for(0, 100, 1, spec.c_str(), nullptr, ALOE_CT_WALK_COUNT);
        EXPECT_EQ(r.status, ALOE_ERROR_SCHEDULE);
        EXPECT_NE(std::string(r.message).find(part), std::string::npos) << "message: " << r.message;
        EXPECT_EQ(r.missed, 100) << "the body ran although the schedule was refused";
        char message[512] = {0};
        EXPECT_EQ(aloe_ct_loop_create_fails(spec.c_str(), 1, message, sizeof message), 1);
        EXPECT_NE(std::string(message).find(part), std::string::npos) << "aloe_loop_create message: " << message;
    }
}

TEST(ConformanceCApi, NullBodyAndStepZeroReturnArgumentError) {
    int null_status = -1, step_status = -1;
    char null_message[512] = {0}, step_message[512] = {0};
    aloe_ct_bad_arguments(&null_status, null_message, &step_status, step_message, 512);
    EXPECT_EQ(null_status, ALOE_ERROR_ARGUMENT);
    EXPECT_NE(std::string(null_message).find("body"), std::string::npos) << null_message;
    EXPECT_EQ(step_status, ALOE_ERROR_ARGUMENT);
    EXPECT_NE(std::string(step_message).find("step"), std::string::npos) << step_message;
    char create_message[512] = {0};
    EXPECT_EQ(aloe_ct_loop_create_fails("dynamic", 0, create_message, sizeof create_message), 1);
    EXPECT_NE(std::string(create_message).find("step"), std::string::npos) << create_message;
}

TEST(ConformanceCApi, LoopHandleDrivenByPthreadsCoversEveryIteration) {
    const std::vector<c_loop> loops{
        {0, 5000, 1}, {-9000, 9000, 3}, {4000, -4000, -7}, {i64_max - 50, i64_max, 7}, {i64_min + 40, i64_min, -3},
        {5, 5, 1},    {10, 3, 1},
    };
    for (int threads = 1; threads <= 4; ++threads) {
        for (const std::string& spec : all_schedule_specs()) {
            for (const c_loop& l : loops) {
                SCOPED_TRACE(::testing::Message() << threads << " pthreads, schedule '" << spec << "', first=" << l.first
                                                  << " last=" << l.last << " step=" << l.step);
                const aloe_ct_result r = aloe_ct_loop_pthreads(l.first, l.last, l.step, spec.c_str(),
                                                               "conformance/c/pthreads", threads,
                                                               ALOE_CT_WALK_CHUNK_FOR);
                ASSERT_EQ(r.status, 1) << r.message;
                EXPECT_TRUE(ran_exactly_once(r, l.first, l.last, l.step));
            }
        }
    }
}

TEST(ConformanceCApi, LoopNextWithInconsistentThreadCountReturnsMinusOne) {
    int results[4] = {0, 0, 0, 0};
    char message[512] = {0};
    aloe_ct_loop_inconsistent(results, message, sizeof message);
    EXPECT_EQ(results[0], 1) << "thread 0 of 2 gets the first chunk";
    EXPECT_EQ(results[1], -1) << "nthreads 3 after nthreads 2";
    EXPECT_NE(std::string(message).find('3'), std::string::npos) << "the message names the bad count: " << message;
    EXPECT_EQ(results[2], -1) << "thread 2 of 2";
    EXPECT_EQ(results[3], -1) << "NULL loop";
}

TEST(ConformanceCApi, StatsWriteReportsSuccessAndFailure) {
    ASSERT_EQ(aloe_ct_parallel_for(0, 100, 1, "static", "conformance/c/stats-write", ALOE_CT_WALK_COUNT).status, ALOE_OK);
    const std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("aloe-conformance-c-" + std::to_string(::getpid()) + ".json");
    EXPECT_EQ(aloe_stats_write(path.c_str()), ALOE_OK) << aloe_last_error();
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_NE(text.str().find("conformance/c/stats-write"), std::string::npos);
    std::filesystem::remove(path);

    EXPECT_NE(aloe_stats_write("/nonexistent-dir/x.json"), ALOE_OK);
    EXPECT_NE(std::string(aloe_last_error()).find("/nonexistent-dir/x.json"), std::string::npos) << aloe_last_error();
    EXPECT_EQ(aloe_stats_write(nullptr), ALOE_ERROR_ARGUMENT);
}

}  // namespace

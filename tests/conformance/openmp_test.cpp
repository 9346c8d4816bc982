// Conformance of aloe::loop_handle and the C FORALL macros (include/aloe/aloe.h) inside
// `#pragma omp parallel` regions, the use they were made for: every iteration exactly once
// for every schedule and 1-4 OpenMP threads, and a handle per execution of a loop inside a
// timestep loop.
//
// Under ThreadSanitizer these tests are skipped (visibly): libgomp is not built with TSan,
// so its barriers and thread pool look like unsynchronised accesses and TSan would report
// races that are not there.
#include "conformance/coverage.hpp"

#include <aloe/aloe.h>
#include <aloe/aloe.hpp>

#include <gtest/gtest.h>
#include <omp.h>

#include <atomic>
#include <string>

namespace {

using namespace aloe_conformance;

#define ALOE_CONFORMANCE_SKIP_UNDER_TSAN()                                                                        \
    do {                                                                                                         \
        if (under_tsan)                                                                                          \
            GTEST_SKIP() << "skipped under ThreadSanitizer: libgomp is not TSan-instrumented, so TSan would "     \
                            "report false races in OpenMP's own synchronisation";                                \
    } while (0)

TEST(ConformanceOpenMP, LoopHandleInsideParallelRegionCoversEveryIteration) {
    ALOE_CONFORMANCE_SKIP_UNDER_TSAN();
    for (int k = 1; k <= 4; ++k) {
        for (const std::string& spec : all_schedule_specs()) {
            for (const range_shape& r : range_shapes()) {
                SCOPED_TRACE(::testing::Message() << "num_threads(" << k << "), schedule '" << spec << "', range " << r);
                coverage c(r, k);
                aloe::loop_handle loop(r.first, r.last, r.step, aloe::schedule(spec));
                std::atomic<int> errors{0};
                std::atomic<int> team_size{0};
#pragma omp parallel num_threads(k)
                {
                    const int tid = omp_get_thread_num(), nt = omp_get_num_threads();
                    if (tid == 0) team_size.store(nt);
                    try {
                        for (aloe::subrange sub; loop.next(tid, nt, sub);) c.check_subrange(sub, tid);
                    } catch (...) {
                        errors.fetch_add(1);
                    }
                }
                EXPECT_EQ(errors.load(), 0);
                EXPECT_TRUE(c.exactly_once()) << "the region had " << team_size.load() << " threads";
            }
        }
    }
}

TEST(ConformanceOpenMP, ForallMacrosInsideParallelRegionCoverEveryIteration) {
    ALOE_CONFORMANCE_SKIP_UNDER_TSAN();
    for (int k = 1; k <= 4; ++k) {
        for (const std::string& spec : all_schedule_specs()) {
            SCOPED_TRACE(::testing::Message() << "num_threads(" << k << "), schedule '" << spec << "'");
            constexpr std::int64_t first = -5000, last = 7003, step = 3;
            coverage c(first, last, step, k);
            aloe_loop* loop = aloe_loop_create(first, last, step, spec.c_str(), "conformance/openmp/forall");
            ASSERT_NE(loop, nullptr) << aloe_last_error();
            std::atomic<int> bad_thread{0};
#pragma omp parallel num_threads(k)
            {
                const int tid = omp_get_thread_num();
                ALOE_FORALL_BEGIN(loop, tid, omp_get_num_threads(), lo, hi)
                    for (std::int64_t i = lo; i < hi; i += step) c.hit(i);
                    if (tid < 0 || tid >= k) bad_thread.fetch_add(1);
                ALOE_FORALL_END
            }
            aloe_loop_destroy(loop);
            EXPECT_TRUE(c.exactly_once());
            EXPECT_EQ(bad_thread.load(), 0);
        }
    }
}

TEST(ConformanceOpenMP, OneHandlePerTimestepLearnsThroughTheSite) {
    ALOE_CONFORMANCE_SKIP_UNDER_TSAN();
    const aloe::loop_site site("conformance/openmp/timestep");
    constexpr int steps = 20, k = 3;
    constexpr std::int64_t n = 4000;
    for (const char* spec : {"weighted,fs=0.8,chunk=8", "tasklets,n=32,fs=0.25,skew=2,locality=1"}) {
        aloe::reset_site_history();
        for (int step = 0; step < steps; ++step) {
            SCOPED_TRACE(::testing::Message() << spec << ", timestep " << step);
            coverage c(0, n, 1, k);
            aloe::loop_handle loop(0, n, spec, site);
#pragma omp parallel num_threads(k)
            {
                const int tid = omp_get_thread_num(), nt = omp_get_num_threads();
                loop.for_each(tid, nt, [&](aloe::subrange r) { c.check_subrange(r, tid); });
            }
            EXPECT_TRUE(c.exactly_once());
        }
        const auto st = aloe::stats_of(site);
        ASSERT_TRUE(st.has_value());
        EXPECT_EQ(st->invocations, static_cast<std::uint64_t>(steps));
        EXPECT_EQ(st->iterations, static_cast<std::uint64_t>(steps) * n);
    }
}

}  // namespace

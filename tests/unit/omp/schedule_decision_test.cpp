// The interposer's schedule decision without libgomp: how a loop's own schedule is read from
// its entry point, GOMP_loop_start's `sched` and omp_get_schedule()'s values (libgomp's
// monotonic flag, every kind, chunk extremes), which loops are monotonic, when the loop's own
// schedule runs instead of the chosen one (static always keeps OpenMP's mapping), what it
// translates to, and the "asked" text of the summary.
#include "omp/loop_takeover.hpp"
#include "unit/loop/schedule_driver.hpp"

#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <string>
#include <vector>

namespace aloe::omp {
namespace {

// omp_sched_t values as omp_get_schedule() returns them (an int: the flag makes it negative).
constexpr int omp_static = 1, omp_dynamic = 2, omp_guided = 3, omp_auto = 4;
constexpr int with_flag(int kind) { return static_cast<int>(static_cast<unsigned>(kind) | 0x80000000U); }

loop_request chunked(loop_form form, long chunk) { return {form, chunk, gfs_runtime, nullptr, 1000}; }
loop_request runtime_form(loop_form form) { return {form, 0, gfs_runtime, nullptr, 1000}; }
loop_request generic(long sched, long chunk) { return {loop_form::generic, chunk, sched, nullptr, 1000}; }

loop_choice choose(const char* text) {
    std::string error;
    const auto c = parse_loop_choice(text, error);
    EXPECT_TRUE(c.has_value()) << text << ": " << error;
    return c.value_or(loop_choice{});
}

TEST(OmpScheduleDecision, KindsAreSplitFromTheirLow32BitsWithoutSignExtension) {
    // OMP_SCHEDULE=static,1 gives 0x80000001 from omp_get_schedule: a negative int.
    const gomp_kind a = split_kind(with_flag(omp_static));
    EXPECT_EQ(a.base, gfs_static);
    EXPECT_TRUE(a.monotonic);
    // GOMP_loop_start's sched as GCC passes it (positive long), and the same value sign-extended.
    const gomp_kind b = split_kind(0x80000002L);
    EXPECT_EQ(b.base, gfs_dynamic);
    EXPECT_TRUE(b.monotonic);
    const gomp_kind c = split_kind(static_cast<long>(with_flag(omp_guided)));
    EXPECT_EQ(c.base, gfs_guided);
    EXPECT_TRUE(c.monotonic);
    const gomp_kind d = split_kind(gfs_dynamic);
    EXPECT_EQ(d.base, gfs_dynamic);
    EXPECT_FALSE(d.monotonic);
    for (long k = gfs_runtime; k <= gfs_auto; ++k) EXPECT_TRUE(known_kind(split_kind(k).base)) << k;
    EXPECT_FALSE(known_kind(split_kind(5).base));
    EXPECT_FALSE(known_kind(split_kind(-1).base));  // 0xFFFFFFFF: the flag and 0x7FFFFFFF
}

TEST(OmpScheduleDecision, UllChunksSaturateAtLongMaxInsteadOfWrapping) {
    EXPECT_EQ(chunk_from_ull(0), 0);
    EXPECT_EQ(chunk_from_ull(7), 7);
    EXPECT_EQ(chunk_from_ull(static_cast<unsigned long long>(LONG_MAX)), LONG_MAX);
    EXPECT_EQ(chunk_from_ull(static_cast<unsigned long long>(LONG_MAX) + 1), LONG_MAX);
    EXPECT_EQ(chunk_from_ull(ULLONG_MAX), LONG_MAX);
}

TEST(OmpScheduleDecision, ChunkedFormsResolveToTheirKindChunkAndMonotonicity) {
    struct row {
        loop_form form;
        long chunk;
        long kind, want_chunk;
        bool monotonic;
    };
    const std::vector<row> rows = {
        {loop_form::static_, 0, gfs_static, 0, true},
        {loop_form::static_, 7, gfs_static, 7, true},
        {loop_form::static_, -3, gfs_static, 0, true},  // no chunk, as libgomp normalises it
        {loop_form::dynamic, 4, gfs_dynamic, 4, true},
        {loop_form::dynamic, 0, gfs_dynamic, 1, true},
        {loop_form::dynamic, LONG_MIN, gfs_dynamic, 1, true},
        {loop_form::dynamic, LONG_MAX, gfs_dynamic, LONG_MAX, true},
        {loop_form::guided, 8, gfs_guided, 8, true},
        {loop_form::nonmonotonic_dynamic, 2, gfs_dynamic, 2, false},
        {loop_form::nonmonotonic_guided, INT_MAX, gfs_guided, INT_MAX, false},
    };
    for (const row& r : rows) {
        SCOPED_TRACE(std::string(to_string(r.form)) + "," + std::to_string(r.chunk));
        const loop_request req = chunked(r.form, r.chunk);
        EXPECT_FALSE(reads_runtime_schedule(req));
        const program_schedule p = resolve_program_schedule(req, 0, 0);
        EXPECT_EQ(p.unknown, nullptr);
        EXPECT_EQ(p.kind, r.kind);
        EXPECT_EQ(p.chunk, r.want_chunk);
        EXPECT_EQ(p.monotonic, r.monotonic);
        EXPECT_FALSE(p.from_runtime);
    }
}

TEST(OmpScheduleDecision, RuntimeFormsReadTheKindWithItsMonotonicFlag) {
    struct row {
        loop_form form;
        int kind, chunk;
        long want_kind, want_chunk;
        bool monotonic;
    };
    const std::vector<row> rows = {
        // OMP_SCHEDULE=static,1 (libgomp sets the flag on static)
        {loop_form::maybe_nonmonotonic_runtime, with_flag(omp_static), 1, gfs_static, 1, true},
        {loop_form::nonmonotonic_runtime, with_flag(omp_static), 1, gfs_static, 1, false},
        {loop_form::runtime, with_flag(omp_static), 1, gfs_static, 1, true},
        // omp_set_schedule(omp_sched_static, 0): no flag, still static, hence monotonic
        {loop_form::maybe_nonmonotonic_runtime, omp_static, 0, gfs_static, 0, true},
        {loop_form::maybe_nonmonotonic_runtime, omp_static, -5, gfs_static, 0, true},
        // monotonic:dynamic,4
        {loop_form::maybe_nonmonotonic_runtime, with_flag(omp_dynamic), 4, gfs_dynamic, 4, true},
        {loop_form::runtime, with_flag(omp_dynamic), 4, gfs_dynamic, 4, true},
        {loop_form::nonmonotonic_runtime, with_flag(omp_dynamic), 4, gfs_dynamic, 4, false},
        // dynamic,2 without the flag
        {loop_form::maybe_nonmonotonic_runtime, omp_dynamic, 2, gfs_dynamic, 2, false},
        {loop_form::runtime, omp_dynamic, 2, gfs_dynamic, 2, true},
        // monotonic:guided, and chunk extremes
        {loop_form::maybe_nonmonotonic_runtime, with_flag(omp_guided), 1, gfs_guided, 1, true},
        {loop_form::maybe_nonmonotonic_runtime, omp_guided, INT_MAX, gfs_guided, INT_MAX, false},
        {loop_form::maybe_nonmonotonic_runtime, omp_dynamic, 0, gfs_dynamic, 1, false},
        {loop_form::maybe_nonmonotonic_runtime, omp_dynamic, INT_MIN, gfs_dynamic, 1, false},
        // auto: libgomp runs it as static blocks
        {loop_form::maybe_nonmonotonic_runtime, omp_auto, 5, gfs_auto, 0, false},
    };
    for (const row& r : rows) {
        SCOPED_TRACE(std::string(to_string(r.form)) + " kind=" + std::to_string(r.kind) +
                     " chunk=" + std::to_string(r.chunk));
        const loop_request req = runtime_form(r.form);
        EXPECT_TRUE(reads_runtime_schedule(req));
        const program_schedule p = resolve_program_schedule(req, r.kind, r.chunk);
        EXPECT_EQ(p.unknown, nullptr);
        EXPECT_EQ(p.kind, r.want_kind);
        EXPECT_EQ(p.chunk, r.want_chunk);
        EXPECT_EQ(p.monotonic, r.monotonic);
        EXPECT_TRUE(p.from_runtime);
    }
    for (int bad : {0, 5, with_flag(0), with_flag(9), -1}) {
        SCOPED_TRACE(bad);
        EXPECT_NE(resolve_program_schedule(runtime_form(loop_form::runtime), bad, 1).unknown, nullptr);
    }
}

TEST(OmpScheduleDecision, GenericStartDecodesEveryKindGccPasses) {
    struct row {
        long sched, chunk;
        int runtime_kind, runtime_chunk;
        bool reads_runtime;
        long kind, want_chunk;
        bool monotonic;
    };
    const long flag = 0x80000000L;
    const std::vector<row> rows = {
        {gfs_static | flag, 0, 0, 0, false, gfs_static, 0, true},          // ordered static (GCC)
        {gfs_static, 5, 0, 0, false, gfs_static, 5, true},                  // static is monotonic anyway
        {gfs_dynamic, 4, 0, 0, false, gfs_dynamic, 4, false},               // dynamic,4
        {gfs_dynamic | flag, 4, 0, 0, false, gfs_dynamic, 4, true},         // monotonic:dynamic,4
        {gfs_guided | flag, 8, 0, 0, false, gfs_guided, 8, true},           // monotonic:guided,8
        {static_cast<long>(with_flag(omp_guided)), 8, 0, 0, false, gfs_guided, 8, true},  // sign-extended
        {gfs_guided, 0, 0, 0, false, gfs_guided, 1, false},
        // runtime without a modifier: as maybe_nonmonotonic_runtime
        {gfs_runtime, 0, omp_dynamic, 3, true, gfs_dynamic, 3, false},
        {gfs_runtime, 0, with_flag(omp_dynamic), 3, true, gfs_dynamic, 3, true},
        {gfs_runtime, 0, omp_static, 2, true, gfs_static, 2, true},
        // monotonic:runtime
        {gfs_runtime | flag, 0, omp_guided, 6, true, gfs_guided, 6, true},
        // gfs_auto is nonmonotonic:runtime in GOMP_loop_start
        {gfs_auto, 0, with_flag(omp_dynamic), 4, true, gfs_dynamic, 4, false},
        {gfs_auto, 0, with_flag(omp_static), 1, true, gfs_static, 1, false},
    };
    for (const row& r : rows) {
        SCOPED_TRACE("sched=" + std::to_string(r.sched) + " chunk=" + std::to_string(r.chunk));
        const loop_request req = generic(r.sched, r.chunk);
        EXPECT_EQ(reads_runtime_schedule(req), r.reads_runtime);
        const program_schedule p = resolve_program_schedule(req, r.runtime_kind, r.runtime_chunk);
        EXPECT_EQ(p.unknown, nullptr);
        EXPECT_EQ(p.kind, r.kind);
        EXPECT_EQ(p.chunk, r.want_chunk);
        EXPECT_EQ(p.monotonic, r.monotonic);
        EXPECT_EQ(p.from_runtime, r.reads_runtime);
    }
    for (long bad : {5L, 0x7FFFFFFFL, -1L, flag | 9}) {
        SCOPED_TRACE(bad);
        EXPECT_NE(resolve_program_schedule(generic(bad, 1), omp_dynamic, 1).unknown, nullptr);
    }
}

TEST(OmpScheduleDecision, TranslationKeepsEveryKindAndBoundsTheChunk) {
    EXPECT_EQ(translate(gfs_static, 0), aloe::schedule::static_blocks());
    EXPECT_EQ(translate(gfs_static, 1), aloe::schedule::static_cyclic(1));
    EXPECT_EQ(translate(gfs_static, 7), aloe::schedule::static_cyclic(7));
    EXPECT_EQ(translate(gfs_dynamic, 4), aloe::schedule::dynamic(4));
    EXPECT_EQ(translate(gfs_dynamic, 0), aloe::schedule::dynamic(1));
    EXPECT_EQ(translate(gfs_guided, 8), aloe::schedule::guided(8));
    EXPECT_EQ(translate(gfs_auto, 0), aloe::schedule::static_blocks());
    EXPECT_EQ(translate(gfs_static, LONG_MAX), aloe::schedule::static_cyclic(max_aloe_chunk));
    EXPECT_EQ(translate(gfs_dynamic, LONG_MAX), aloe::schedule::dynamic(max_aloe_chunk));
    // The bound is the parser's own: it accepts max_aloe_chunk and refuses one more.
    aloe::schedule s;
    std::string error;
    EXPECT_TRUE(aloe::schedule::try_parse("dynamic,chunk=" + std::to_string(max_aloe_chunk), s, error)) << error;
    EXPECT_FALSE(aloe::schedule::try_parse("dynamic,chunk=" + std::to_string(max_aloe_chunk + 1), s, error));
}

TEST(OmpScheduleDecision, TranslatedStaticRunsOpenMpsExactMapping) {
    // libgomp's static: without a chunk q = n/p, r = n%p, thread t < r runs q+1 iterations from
    // t(q+1), the others q from tq+r; with chunk c, chunk k runs on thread k mod p.
    for (long chunk : {0L, 1L, 7L})
        for (std::uint64_t n : {0ULL, 1ULL, 2ULL, 10ULL, 1009ULL})
            for (int p : {1, 2, 3, 7}) {
                SCOPED_TRACE("chunk=" + std::to_string(chunk) + " n=" + std::to_string(n) + " p=" + std::to_string(p));
                runtime::arena arena;
                loop::site_history history;
                loop::any_schedule state;
                loop::make_schedule(state, loop::loop_setup{n, p, translate(gfs_static, chunk), history, arena});
                const auto r = std::visit(
                    [&](auto& s) {
                        if constexpr (std::is_same_v<std::decay_t<decltype(s)>, std::monostate>) {
                            ADD_FAILURE() << "not built";
                            return loop::testing::drive_result{};
                        } else {
                            return loop::testing::drive(s, n, p);
                        }
                    },
                    state);
                ASSERT_EQ(r.owner.size(), n);
                const std::uint64_t q = n / static_cast<std::uint64_t>(p), rem = n % static_cast<std::uint64_t>(p);
                for (std::uint64_t i = 0; i < n; ++i) {
                    std::uint64_t want = 0;
                    if (chunk > 0) {
                        want = (i / static_cast<std::uint64_t>(chunk)) % static_cast<std::uint64_t>(p);
                    } else {
                        want = i < rem * (q + 1) ? i / (q + 1) : rem + (i - rem * (q + 1)) / q;
                    }
                    ASSERT_EQ(r.owner[i], static_cast<int>(want)) << "iteration " << i;
                }
            }
}

TEST(OmpScheduleDecision, MonotonicSafeSchedulesNeverStealOrReorder) {
    EXPECT_TRUE(monotonic_safe(schedule_kind::static_block));
    EXPECT_TRUE(monotonic_safe(schedule_kind::dynamic));
    EXPECT_TRUE(monotonic_safe(schedule_kind::guided));
    EXPECT_TRUE(monotonic_safe(schedule_kind::hybrid));
    EXPECT_FALSE(monotonic_safe(schedule_kind::staggered));
    EXPECT_FALSE(monotonic_safe(schedule_kind::weighted));
    EXPECT_FALSE(monotonic_safe(schedule_kind::tasklets));
    EXPECT_FALSE(monotonic_safe(schedule_kind::adaptive));
}

TEST(OmpScheduleDecision, StaticIsKeptUnderEveryChosenSchedule) {
    const program_schedule static_clause = resolve_program_schedule(chunked(loop_form::static_, 0), 0, 0);
    const program_schedule runtime_static =
        resolve_program_schedule(runtime_form(loop_form::nonmonotonic_runtime), with_flag(omp_static), 1);
    const program_schedule generic_static = resolve_program_schedule(generic(gfs_static | 0x80000000L, 3), 0, 0);
    for (const char* text : {"static", "static,chunk=3", "dynamic,chunk=4", "guided", "hybrid,fs=0.5",
                             "staggered,fs=0.5,chunk=2", "weighted", "tasklets,n=8", "adaptive",
                             "adaptive,search=sweep"}) {
        SCOPED_TRACE(text);
        const loop_choice c = choose(text);
        for (bool set_by_program : {false, true}) {
            const schedule_pick a = pick_schedule(c, static_clause, set_by_program);
            EXPECT_TRUE(a.program);
            EXPECT_STREQ(a.note, "static schedule: OpenMP's static mapping kept");
            const schedule_pick b = pick_schedule(c, runtime_static, set_by_program);
            EXPECT_TRUE(b.program);
            EXPECT_STREQ(b.note, "runtime schedule is static: OpenMP's static mapping kept");
            EXPECT_TRUE(pick_schedule(c, generic_static, set_by_program).program);
        }
    }
    const schedule_pick own = pick_schedule(choose("program"), runtime_static, false);
    EXPECT_TRUE(own.program);
    EXPECT_EQ(own.note, nullptr);
}

TEST(OmpScheduleDecision, MonotonicLoopsRunTheirOwnScheduleWhenTheChoiceSteals) {
    const program_schedule mono_dynamic =
        resolve_program_schedule(runtime_form(loop_form::maybe_nonmonotonic_runtime), with_flag(omp_dynamic), 4);
    const program_schedule plain_dynamic =
        resolve_program_schedule(runtime_form(loop_form::maybe_nonmonotonic_runtime), omp_dynamic, 4);
    const program_schedule mono_guided = resolve_program_schedule(generic(gfs_guided | 0x80000000L, 8), 0, 0);
    for (const char* text : {"staggered,fs=0.5,chunk=2", "weighted", "tasklets,n=8", "adaptive"}) {
        SCOPED_TRACE(text);
        const loop_choice c = choose(text);
        const schedule_pick a = pick_schedule(c, mono_dynamic, false);
        EXPECT_TRUE(a.program);
        EXPECT_STREQ(a.note, "monotonic loop: the chosen schedule steals, so the loop's own schedule ran");
        EXPECT_TRUE(pick_schedule(c, mono_guided, false).program);
        EXPECT_FALSE(pick_schedule(c, plain_dynamic, false).program);
    }
    for (const char* text : {"static", "dynamic,chunk=4", "guided", "hybrid,fs=0.5"}) {
        SCOPED_TRACE(text);
        const loop_choice c = choose(text);
        EXPECT_FALSE(pick_schedule(c, mono_dynamic, false).program);
        EXPECT_FALSE(pick_schedule(c, mono_guided, false).program);
    }
    // omp_set_schedule: runtime loops keep what the program set, other loops do not.
    const schedule_pick set = pick_schedule(choose("dynamic,chunk=4"), plain_dynamic, true);
    EXPECT_TRUE(set.program);
    EXPECT_STREQ(set.note, "the program sets its own schedule (omp_set_schedule)");
    EXPECT_FALSE(pick_schedule(choose("dynamic,chunk=4"), mono_guided, true).program);
}

// A site as decide() leaves it after the loop's start call.
struct asked {
    loop_form form;
    long chunk = 0;
    long sched = 0;
    int runtime_kind = 0, runtime_chunk = 0;
};
std::string text_of(const asked& a) {
    omp_site s;
    s.kind = site_kind::loop;
    s.form.store(a.form);
    s.program_chunk.store(a.chunk);
    s.generic_sched.store(static_cast<std::uint32_t>(static_cast<unsigned long>(a.sched)));
    s.runtime_kind.store(static_cast<std::uint32_t>(a.runtime_kind));
    s.runtime_chunk.store(a.runtime_chunk);
    return asked_schedule_text(s);
}

TEST(OmpScheduleDecision, AskedTextSaysWhatTheProgramAskedFor) {
    EXPECT_EQ(text_of({loop_form::dynamic, 4}), "dynamic,4");
    EXPECT_EQ(text_of({loop_form::static_, 0}), "static");
    EXPECT_EQ(text_of({loop_form::static_, 7}), "static,7");
    EXPECT_EQ(text_of({loop_form::nonmonotonic_guided, 2}), "nonmonotonic_guided,2");
    EXPECT_EQ(text_of({loop_form::runtime, 0, 0, with_flag(omp_dynamic), 4}), "runtime (monotonic:dynamic,4)");
    EXPECT_EQ(text_of({loop_form::maybe_nonmonotonic_runtime, 0, 0, with_flag(omp_static), 1}),
              "maybe_nonmonotonic_runtime (static,1)");
    EXPECT_EQ(text_of({loop_form::maybe_nonmonotonic_runtime, 0, 0, omp_static, 0}),
              "maybe_nonmonotonic_runtime (static)");
    EXPECT_EQ(text_of({loop_form::runtime, 0, 0, omp_static, 1}), "runtime (static,1)");
    EXPECT_EQ(text_of({loop_form::nonmonotonic_runtime, 0, 0, with_flag(omp_guided), 1}),
              "nonmonotonic_runtime (monotonic:guided,1)");
    EXPECT_EQ(text_of({loop_form::runtime, 0, 0, omp_auto, 0}), "runtime (auto)");
    EXPECT_EQ(text_of({loop_form::generic, 8, gfs_guided}), "generic (guided,8)");
    EXPECT_EQ(text_of({loop_form::generic, 4, gfs_dynamic | 0x80000000L}), "generic (monotonic:dynamic,4)");
    EXPECT_EQ(text_of({loop_form::generic, 0, gfs_static | 0x80000000L}), "generic (static)");
    EXPECT_EQ(text_of({loop_form::generic, 0, gfs_runtime, omp_dynamic, 2}), "generic (runtime: dynamic,2)");
    EXPECT_EQ(text_of({loop_form::generic, 0, gfs_runtime | 0x80000000L, with_flag(omp_static), 1}),
              "generic (monotonic:runtime: static,1)");
    EXPECT_EQ(text_of({loop_form::generic, 0, gfs_auto, omp_dynamic, 2}), "generic (nonmonotonic:runtime: dynamic,2)");
    EXPECT_EQ(text_of({loop_form::generic, 1, 9}), "generic (kind 9)");
    EXPECT_EQ(text_of({loop_form::ordered, 4}), "ordered");
    EXPECT_EQ(text_of({loop_form::doacross, 0}), "doacross");
}

}  // namespace
}  // namespace aloe::omp

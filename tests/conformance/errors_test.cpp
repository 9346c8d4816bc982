// Conformance of argument checking (include/aloe/schedule.hpp, parallel_for.hpp, team.hpp,
// error.hpp): malformed schedule strings throw aloe::error naming the bad part, accepted
// spellings parse to the documented values and print back to themselves, step 0 and a
// team of 0 threads are refused.
#include "conformance/coverage.hpp"

#include <aloe/aloe.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using namespace aloe_conformance;

struct malformed {
    const char* spec;
    const char* part;  ///< what the message must name besides echoing the whole string
};

std::ostream& operator<<(std::ostream& o, const malformed& m) { return o << "'" << m.spec << "'"; }

const std::vector<malformed> malformed_specs{
    {"hybrid,fs=1.5", "fs=1.5"},
    {"hybird", "hybird"},
    {"dynamic,fs=0.5", "fs"},
    {"tasklets", "n="},
    {"dynamic,chunk=0", "chunk=0"},
    {"dynamic,chunk=4x", "chunk=4x"},
    {"static,chunk=2,chunk=3", "chunk"},
    {"hybrid,fs=0.5,,", "empty"},
    {"", "kind"},
    {",dynamic", "kind"},
    {"hybrid", "fs"},
    {"staggered,chunk=2", "fs"},
    {"guided,chunk=", "chunk"},
    {"static,chunk=-1", "chunk=-1"},
    {"static,chunk=2,fs=0.5", "fs"},
    {"dynamic,4,chunk=5", "chunk"},
    {"hybrid,0.5", "0.5"},
    {"dynamic,chunk=1e3", "chunk=1e3"},
    {"dynamic,chunk=99999999999999999999", "chunk=99999999999999999999"},
    {"dynamic,chunk=1099511627777", "chunk=1099511627777"},
    {"weighted,fs=nan", "fs=nan"},
    {"weighted,fs=-0.1", "fs=-0.1"},
    {"tasklets,n=0", "n=0"},
    {"tasklets,n=16777217", "n=16777217"},
    {"tasklets,n=4,skew=0.5", "skew=0.5"},
    {"tasklets,n=4,skew=1000001", "skew=1000001"},
    {"tasklets,n=4,locality=2", "locality=2"},
    {"staggered,fs=0.5,queue=spin", "queue=spin"},
    {"guided,chunk=3,queue=mutex", "queue"},
};

// The message must name `part` outside its echo of the whole string: with the first copy
// of the spec removed, `part` must still appear (for an unknown kind, the spec is the part).
::testing::AssertionResult names_bad_part(const std::string& message, const malformed& m) {
    std::string rest = message;
    const std::string spec = m.spec;
    if (!spec.empty() && spec != m.part)
        if (const auto at = rest.find("'" + spec + "'"); at != std::string::npos) rest.erase(at, spec.size() + 2);
    if (rest.find(m.part) != std::string::npos) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "message \"" << message << "\" does not name \"" << m.part << "\"";
}

TEST(ConformanceScheduleStrings, MalformedStringsThrowErrorNamingTheBadPart) {
    for (const malformed& m : malformed_specs) {
        SCOPED_TRACE(::testing::Message() << "schedule " << m);
        try {
            const aloe::schedule s(m.spec);
            ADD_FAILURE() << "accepted, as '" << s.to_string() << "'";
        } catch (const aloe::error& e) {
            EXPECT_TRUE(names_bad_part(e.what(), m));
        }
    }
}

TEST(ConformanceScheduleStrings, TryParseRefusesMalformedStringsWithTheSameMessage) {
    for (const malformed& m : malformed_specs) {
        SCOPED_TRACE(::testing::Message() << "schedule " << m);
        aloe::schedule out = aloe::schedule::dynamic(7);
        std::string message;
        EXPECT_FALSE(aloe::schedule::try_parse(m.spec, out, message));
        EXPECT_EQ(out, aloe::schedule::dynamic(7)) << "a failed parse changed its output";
        EXPECT_TRUE(names_bad_part(message, m));
        std::string thrown;
        try {
            (void)aloe::schedule(m.spec);
        } catch (const aloe::error& e) {
            thrown = e.what();
        }
        EXPECT_EQ(message, thrown);
    }
}

TEST(ConformanceScheduleStrings, MalformedStringPassedToParallelForThrowsBeforeRunning) {
    aloe::team t(2);
    std::atomic<int> ran{0};
    EXPECT_THROW(aloe::parallel_for(t, 0, 10, 1, "hybird", [&](std::int64_t) { ran.fetch_add(1); }), aloe::error);
    EXPECT_THROW(aloe::parallel_for(0, 10, "dynamic,chunk=0", [&](std::int64_t) { ran.fetch_add(1); }), aloe::error);
    EXPECT_EQ(ran.load(), 0);
}

TEST(ConformanceScheduleStrings, BuildersValidateLikeTheParser) {
    EXPECT_THROW(aloe::schedule::hybrid(1.5), aloe::error);
    EXPECT_THROW(aloe::schedule::hybrid(-0.5), aloe::error);
    EXPECT_THROW(aloe::schedule::dynamic(0), aloe::error);
    EXPECT_THROW(aloe::schedule::guided(-3), aloe::error);
    EXPECT_THROW(aloe::schedule::static_cyclic(0), aloe::error);
    EXPECT_THROW(aloe::schedule::staggered(2.0), aloe::error);
    EXPECT_THROW(aloe::schedule::weighted(1.0, 0), aloe::error);
    EXPECT_THROW(aloe::schedule::tasklets(0), aloe::error);
    EXPECT_THROW(aloe::schedule::tasklets(4, 0.0, 0.5), aloe::error);
}

TEST(ConformanceScheduleStrings, AcceptedSpellingsParseToTheDocumentedValues) {
    EXPECT_EQ(aloe::schedule("static"), aloe::schedule());
    EXPECT_EQ(aloe::schedule("static,4"), aloe::schedule::static_cyclic(4));
    EXPECT_EQ(aloe::schedule("dynamic,4"), aloe::schedule::dynamic(4));
    EXPECT_EQ(aloe::schedule("guided,4"), aloe::schedule::guided(4));
    EXPECT_EQ(aloe::schedule("  GUIDED , Chunk = 3 "), aloe::schedule::guided(3));
    EXPECT_EQ(aloe::schedule("hybrid,chunk=2,fs=0.25"), aloe::schedule::hybrid(0.25, 2));
    EXPECT_EQ(aloe::schedule("Staggered,fs=0.5,queue=MUTEX"),
              aloe::schedule::staggered(0.5, 1, aloe::queue_claim::mutex));
    EXPECT_EQ(aloe::schedule("tasklets,locality=false,n=3"), aloe::schedule::tasklets(3, 0.0, 1.0, false));

    // Defaults (schedule.hpp): chunk=1, fs=1 for weighted, fs=0 for tasklets, skew=1,
    // locality=1, queue=atomic; static blocks report chunk 0.
    const aloe::schedule st;
    EXPECT_EQ(st.kind(), aloe::schedule_kind::static_block);
    EXPECT_EQ(st.chunk(), 0);
    const aloe::schedule dy("dynamic");
    EXPECT_EQ(dy.kind(), aloe::schedule_kind::dynamic);
    EXPECT_EQ(dy.chunk(), 1);
    const aloe::schedule we("weighted");
    EXPECT_EQ(we.kind(), aloe::schedule_kind::weighted);
    EXPECT_EQ(we.static_fraction(), 1.0);
    EXPECT_EQ(we.chunk(), 1);
    const aloe::schedule ta("tasklets,n=5");
    EXPECT_EQ(ta.kind(), aloe::schedule_kind::tasklets);
    EXPECT_EQ(ta.tasklet_count(), 5);
    EXPECT_EQ(ta.static_fraction(), 0.0);
    EXPECT_EQ(ta.skew(), 1.0);
    EXPECT_TRUE(ta.locality());
    const aloe::schedule sg("staggered,fs=0.75");
    EXPECT_EQ(sg.kind(), aloe::schedule_kind::staggered);
    EXPECT_EQ(sg.static_fraction(), 0.75);
    EXPECT_EQ(sg.chunk(), 1);
    EXPECT_EQ(sg.claim(), aloe::queue_claim::atomic);
    const aloe::schedule hy("hybrid,fs=0,chunk=1099511627776");
    EXPECT_EQ(hy.static_fraction(), 0.0);
    EXPECT_EQ(hy.chunk(), std::int64_t{1} << 40);
}

TEST(ConformanceScheduleStrings, EverySweepScheduleRoundTripsThroughToString) {
    for (const std::string& spec : all_schedule_specs()) {
        const aloe::schedule s(spec);
        const std::string printed = s.to_string();
        EXPECT_EQ(aloe::schedule(printed), s) << spec << " printed as " << printed;
        EXPECT_EQ(aloe::schedule(printed).to_string(), printed) << "to_string is not canonical for " << spec;
    }
}

TEST(ConformanceScheduleStrings, EnvironmentScheduleIsStaticWhenUnset) {
    if (std::getenv("ALOE_SCHEDULE") != nullptr) GTEST_SKIP() << "ALOE_SCHEDULE is set in this environment";
    EXPECT_EQ(aloe::schedule_from_environment(), aloe::schedule());
}

TEST(ConformanceArguments, StepZeroThrowsErrorAndRunsNothing) {
    aloe::team t(2);
    std::atomic<int> ran{0};
    auto index_body = [&](std::int64_t) { ran.fetch_add(1); };
    auto subrange_body = [&](aloe::subrange, int) { ran.fetch_add(1); };
    EXPECT_THROW(aloe::parallel_for(t, 0, 10, 0, "dynamic", index_body), aloe::error);
    EXPECT_THROW(aloe::parallel_for(t, 0, 10, 0, "static", subrange_body), aloe::error);
    EXPECT_THROW(aloe::parallel_for(t, 5, 5, 0, "static", index_body), aloe::error) << "even for an empty range";
    EXPECT_THROW(aloe::parallel_for(0, 10, 0, "guided", index_body), aloe::error);
    EXPECT_THROW(aloe::loop_handle(0, 10, 0, "dynamic"), aloe::error);
    EXPECT_EQ(ran.load(), 0);
    try {
        aloe::parallel_for(t, 0, 10, 0, "static", index_body);
    } catch (const aloe::error& e) {
        EXPECT_NE(std::string(e.what()).find("step"), std::string::npos) << e.what();
    }
}

TEST(ConformanceArguments, TeamOfZeroOrNegativeThreadsThrowsError) {
    EXPECT_THROW(aloe::team(0), aloe::error);
    EXPECT_THROW(aloe::team(-1), aloe::error);
    EXPECT_THROW(aloe::team(-2147483647 - 1), aloe::error);
    try {
        aloe::team t(0);
    } catch (const aloe::error& e) {
        EXPECT_NE(std::string(e.what()).find('0'), std::string::npos) << "names the count: " << e.what();
    }
}

}  // namespace

TEST(ConformanceSchedules, StdStringConvertsWhereAScheduleIsExpected) {
    const std::string spec = "hybrid,fs=0.5,chunk=2";
    std::atomic<int> runs{0};
    aloe::team t(2);
    aloe::parallel_for(t, 0, 10, spec, [&](std::int64_t) { runs.fetch_add(1); });
    EXPECT_EQ(runs.load(), 10);
    EXPECT_EQ(aloe::schedule(spec).to_string(), spec);
}

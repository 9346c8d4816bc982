// The schedule string syntax: round trips, defaults, and errors that name the bad part.
#include <aloe/error.hpp>
#include <aloe/schedule.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>

namespace aloe {
namespace {

TEST(LoopScheduleSpec, CanonicalStringsRoundTrip) {
    for (const char* text : {"static", "static,chunk=4", "dynamic,chunk=1", "guided,chunk=16", "hybrid,fs=0.8,chunk=1",
                             "staggered,fs=0.25,chunk=8,queue=mutex", "staggered,fs=1,chunk=1,queue=atomic",
                             "weighted,fs=1,chunk=1", "tasklets,n=32,fs=0.5,skew=4,locality=0",
                             "adaptive,search=race,chunk=auto,delay=optimistic",
                             "adaptive,search=nlopt,chunk=16,delay=pessimistic",
                             "adaptive,search=sweep,chunk=auto,delay=optimistic"}) {
        const schedule s(text);
        EXPECT_EQ(s.to_string(), text);
        EXPECT_EQ(schedule(s.to_string()), s);
    }
}

TEST(LoopScheduleSpec, RandomValuesRoundTrip) {
    std::mt19937_64 rng(20261121);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    for (int i = 0; i < 2000; ++i) {
        const double fs = unit(rng);
        const auto chunk = static_cast<std::int64_t>(rng() % 1000 + 1);
        for (const schedule& s : {schedule::hybrid(fs, chunk), schedule::staggered(fs, chunk, queue_claim::mutex),
                                  schedule::weighted(fs, chunk),
                                  schedule::tasklets(chunk, fs, 1.0 + unit(rng) * 50, (rng() & 1) != 0),
                                  schedule::dynamic(chunk), schedule::guided(chunk), schedule::static_cyclic(chunk)}) {
            EXPECT_EQ(schedule(s.to_string()), s) << s.to_string();
        }
    }
}

TEST(LoopScheduleSpec, DefaultsAndLeniency) {
    EXPECT_EQ(schedule("dynamic").chunk(), 1);
    EXPECT_EQ(schedule("static").chunk(), 0);
    EXPECT_EQ(schedule(" Dynamic , 4 ").chunk(), 4);  // OpenMP's "dynamic,4", any case, spaces
    EXPECT_EQ(schedule("GUIDED,CHUNK=2"), schedule::guided(2));
    EXPECT_DOUBLE_EQ(schedule("weighted").static_fraction(), 1.0);
    EXPECT_DOUBLE_EQ(schedule("tasklets,n=4").static_fraction(), 0.0);
    EXPECT_TRUE(schedule("tasklets,n=4").locality());
    EXPECT_EQ(schedule("staggered,fs=0.5").claim(), queue_claim::atomic);
    EXPECT_EQ(schedule(), schedule("static"));
    const schedule a("adaptive");
    EXPECT_EQ(a.kind(), schedule_kind::adaptive);
    EXPECT_EQ(a.search(), adaptive_search::race);
    EXPECT_EQ(a.chunk(), 0);  // auto
    EXPECT_EQ(a.delay(), delay_model::optimistic);
    EXPECT_EQ(schedule("Adaptive, Search=NLOPT, chunk=AUTO"), schedule::adaptive(adaptive_search::nlopt));
    EXPECT_EQ(schedule("adaptive,chunk=8,delay=pessimistic"),
              schedule::adaptive(adaptive_search::race, 8, delay_model::pessimistic));
}

struct bad_case {
    const char* text;
    const char* must_mention;
};

TEST(LoopScheduleSpec, MalformedStringsNameTheBadPart) {
    const bad_case cases[] = {
        {"", "kind is missing"},
        {"hybird", "unknown kind 'hybird'"},
        {"hybrid", "needs fs="},
        {"hybrid,fs=1.5", "fs=1.5 is outside [0, 1]"},
        {"hybrid,fs=-0.1", "fs=-0.1"},
        {"hybrid,fs=abc", "fs=abc is not a number"},
        {"hybrid,fs=0.5x", "fs=0.5x"},
        {"dynamic,chunk=0", "chunk=0 is outside"},
        {"dynamic,chunk=4x", "chunk=4x is not an integer"},
        {"dynamic,chunk=-3", "chunk=-3"},
        {"dynamic,chunk=99999999999999999999", "chunk=99999999999999999999 is outside [1, 1099511627776]"},
        {"dynamic,chunk=0x10", "chunk=0x10 is not an integer"},
        {"dynamic,chunk=1e3", "chunk=1e3 is not an integer"},
        {"dynamic,chunk=4.0", "chunk=4.0 is not an integer"},
        {"dynamic,chunk=+-4", "chunk=+-4 is not an integer"},
        {"hybrid,fs=1e400", "fs=1e400 is outside [0, 1]"},
        {"hybrid,fs=-1e400", "fs=-1e400 is outside [0, 1]"},
        {"hybrid,fs=inf", "fs=inf is outside [0, 1]"},
        {"hybrid,fs=nan", "fs=nan is not a number"},
        {"hybrid,fs=0x1p-1", "fs=0x1p-1 is not a number"},
        {"hybrid,fs=0. 5", "fs=0. 5 is not a number"},
        {"static,slack=on", "static takes no key 'slack' (keys: chunk)"},
        {"guided,slack=off", "guided takes no key 'slack'"},
        {"hybrid,fs=0.5,slack=maybe", "slack=maybe is not auto, on or off"},
        {"adaptive,slack=on,slack=off", "key 'slack' is given twice"},
        {"hybrid,=0.5", "'=0.5' has no key before '='"},
        {"tasklets,n=4,skew=1e-400", "skew=1e-400 is outside [1, 1e+06]"},
        {"tasklets,n=16777217", "n=16777217 is outside [1, 16777216]"},
        {"dynamic,fs=0.5", "dynamic takes no key 'fs'"},
        {"static,chunk=2,chunk=3", "key 'chunk' is given twice"},
        {"hybrid,fs=0.5,,", "empty item"},
        {"hybrid,fs=", "key 'fs' has no value"},
        {"hybrid,0.5", "'0.5' is not key=value"},
        {"tasklets", "needs n="},
        {"tasklets,n=4,skew=0.5", "skew=0.5 is outside"},
        {"tasklets,n=4,locality=2", "locality=2 is not 0 or 1"},
        {"staggered,fs=0.5,queue=spin", "queue=spin is not atomic or mutex"},
        {"staggered,fs=0.5,n=3", "staggered takes no key 'n'"},
        {"dynamic,c=3", "takes no key 'c'"},
        {"adaptive,search=grid", "search=grid is not local, nlopt, sweep or race"},
        {"adaptive,delay=max", "delay=max is not optimistic or pessimistic"},
        {"adaptive,fs=0.5", "adaptive takes no key 'fs'"},
        {"adaptive,chunk=0", "chunk=0 is outside"},
        {"dynamic,chunk=auto", "chunk=auto is not an integer"},
    };
    for (const bad_case& c : cases) {
        SCOPED_TRACE(c.text);
        try {
            schedule s(c.text);
            ADD_FAILURE() << "accepted: " << s.to_string();
        } catch (const error& e) {
            const std::string what = e.what();
            EXPECT_NE(what.find(c.must_mention), std::string::npos) << what;
            EXPECT_NE(what.find(std::string("'") + c.text + "'"), std::string::npos) << what;
        }
        schedule out = schedule::dynamic(9);
        std::string message;
        EXPECT_FALSE(schedule::try_parse(c.text, out, message));
        EXPECT_EQ(out, schedule::dynamic(9)) << "a failed parse must leave the output untouched";
        EXPECT_FALSE(message.empty());
    }
}

// Reals are the nearest double: an underflow is 0 (accepted where 0 is), -0 is 0 and prints
// as 0, so every accepted value prints and parses back identically. A sign is accepted.
TEST(LoopScheduleSpec, SlackIsAKnobOfTheKindsWithAStaticFraction) {
    const schedule h("hybrid,fs=0.5,slack=on");
    EXPECT_EQ(h.slack(), aloe::slack_mode::on);
    EXPECT_EQ(h.to_string(), "hybrid,fs=0.5,chunk=1,slack=on");
    EXPECT_EQ(schedule(h.to_string()), h);
    EXPECT_EQ(schedule("ADAPTIVE,SLACK=OFF").to_string(), "adaptive,search=race,chunk=auto,delay=optimistic,slack=off");
    EXPECT_EQ(schedule("staggered,fs=0.7,slack=auto"), schedule("staggered,fs=0.7")) << "auto is unset: not printed";
    EXPECT_EQ(schedule("tasklets,n=4,slack=on").with_slack(aloe::slack_mode::off).slack(), aloe::slack_mode::off);
    EXPECT_EQ(schedule("weighted,slack=on").slack(), aloe::slack_mode::on);
    EXPECT_NE(schedule("hybrid,fs=0.5,slack=on"), schedule("hybrid,fs=0.5"));
    EXPECT_FALSE(schedule("dynamic").takes_slack());
    EXPECT_THROW((void)schedule("static").with_slack(aloe::slack_mode::on), error);
}

TEST(LoopScheduleSpec, RealsAreTheNearestDoubleAndMinusZeroIsZero) {
    const schedule tiny("hybrid,fs=1e-400");
    EXPECT_EQ(tiny.static_fraction(), 0.0);
    EXPECT_EQ(tiny.to_string(), "hybrid,fs=0,chunk=1");
    EXPECT_EQ(schedule("hybrid,fs=0.000000000000000000000000000000000000000000000000000000000000000000000000000000"
                       "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
                       "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
                       "0000000000000000000000000000000000000000000000000000000000000000000000000000000001")
                  .static_fraction(),
              0.0);
    const schedule minus_zero("staggered,fs=-0");
    EXPECT_FALSE(std::signbit(minus_zero.static_fraction()));
    EXPECT_EQ(minus_zero.to_string(), "staggered,fs=0,chunk=1,queue=atomic");
    EXPECT_EQ(schedule::hybrid(-0.0).to_string(), "hybrid,fs=0,chunk=1");
    EXPECT_EQ(schedule("tasklets,n=+8,fs=-0.0,skew=+2").to_string(), "tasklets,n=8,fs=0,skew=2,locality=1");
    EXPECT_EQ(schedule("dynamic,chunk=+4"), schedule::dynamic(4));
    EXPECT_EQ(schedule("dynamic,chunk=0004"), schedule::dynamic(4));
    EXPECT_EQ(schedule("hybrid,fs=5e-1").static_fraction(), 0.5);
    EXPECT_EQ(schedule("hybrid,fs=.5").static_fraction(), 0.5);
    EXPECT_EQ(schedule("hybrid,fs=4.9e-324").to_string(), "hybrid,fs=5e-324,chunk=1");  // subnormal, kept
    EXPECT_THROW(schedule::hybrid(std::numeric_limits<double>::quiet_NaN()), error);
    EXPECT_THROW(schedule::hybrid(std::numeric_limits<double>::infinity()), error);
}

// A value from the environment may hold any bytes: the message escapes them, and a huge
// value is quoted, not copied.
TEST(LoopScheduleSpec, MessagesEscapeControlBytesAndInvalidUtf8) {
    std::string message;
    schedule out;
    EXPECT_FALSE(schedule::try_parse(std::string_view("hybrid,fs=0.5\0", 14), out, message));
    EXPECT_NE(message.find("fs=0.5\\x00 is not a number"), std::string::npos) << message;
    EXPECT_FALSE(schedule::try_parse("dyn\x1b[2Jamic", out, message));
    EXPECT_NE(message.find("unknown kind 'dyn\\x1b[2Jamic'"), std::string::npos) << message;
    EXPECT_FALSE(schedule::try_parse("static,q\xff=1", out, message));
    EXPECT_NE(message.find("static takes no key 'q\\xff'"), std::string::npos) << message;
    EXPECT_FALSE(schedule::try_parse("hybrid,fs=" + std::string(10000, '7'), out, message));
    EXPECT_LT(message.size(), 400u) << message;
    EXPECT_NE(message.find("fs=777"), std::string::npos) << message;
    EXPECT_NE(message.find("is outside [0, 1]"), std::string::npos) << message;
}

TEST(LoopScheduleSpec, BuildersValidateLikeTheParser) {
    EXPECT_THROW(schedule::hybrid(2.0), error);
    EXPECT_THROW(schedule::dynamic(0), error);
    EXPECT_THROW(schedule::tasklets(0), error);
    EXPECT_NO_THROW(schedule::hybrid(0.0));
    EXPECT_THROW(schedule::adaptive(adaptive_search::local, -1), error);
}

}  // namespace
}  // namespace aloe

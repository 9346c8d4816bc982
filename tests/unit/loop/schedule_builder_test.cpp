// The builders (schedule::dynamic(4), ::hybrid(fs, chunk), …) set the fields directly; each
// must still behave exactly as parsing the string it stands for (the builders used to print
// that string and parse it back). For every kind, over every parameter's edges (limits, one
// past them, the extremes of the type, -0, subnormals, infinities, NaN), the builder and the
// parse of that string give equal values and equal canonical strings, or both fail with the
// same message.
#include "loop/schedules/spec_text.hpp"

#include <aloe/error.hpp>
#include <aloe/schedule.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace aloe {
namespace {

using limits = std::numeric_limits<double>;
constexpr std::int64_t int64_min = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t int64_max = std::numeric_limits<std::int64_t>::max();

// What a call gave: the canonical string of the value, or the message it threw.
struct outcome {
    bool ok = false;
    schedule value;
    std::string text;  // to_string() when ok (tells -0 from 0), else the message
};

outcome run(const std::function<schedule()>& make) {
    outcome o;
    try {
        o.value = make();
        o.ok = true;
        o.text = o.value.to_string();
    } catch (const error& e) {
        o.text = e.what();
    }
    return o;
}

// The builder against the parse of `spec`, the string the builder used to print.
void expect_same(const std::function<schedule()>& builder, const std::string& spec) {
    SCOPED_TRACE(spec);
    const outcome built = run(builder);
    const outcome parsed = run([&] { return schedule(spec); });
    ASSERT_EQ(built.ok, parsed.ok) << "builder: " << built.text << "\nparser:  " << parsed.text;
    EXPECT_EQ(built.text, parsed.text);
    if (built.ok) {
        EXPECT_EQ(built.value, parsed.value);
    }
}

std::string num(double x) { return loop::number(x); }
std::string num(std::int64_t x) { return std::to_string(x); }

const std::vector<std::int64_t> chunks{int64_min, -1, 0, 1, 2, 1000, loop::max_chunk - 1, loop::max_chunk,
                                       loop::max_chunk + 1, int64_max};
// Not 1: the builder then prints no divisor, as guided(c) above.
const std::vector<std::int64_t> divisors{int64_min, -1, 0, 2, 64, 65, int64_max};
const std::vector<double> fractions{-limits::infinity(), -1.0, -limits::denorm_min(), -0.0, 0.0,
                                    limits::denorm_min(), limits::min(), 1e-300, 0.1, 0.5, 0.8,
                                    std::nextafter(1.0, 0.0), 1.0, std::nextafter(1.0, 2.0), 2.0,
                                    limits::max(), limits::infinity(), limits::quiet_NaN(), -limits::quiet_NaN()};
const std::vector<double> skews{-0.0, 0.0, std::nextafter(1.0, 0.0), 1.0, std::nextafter(1.0, 2.0), 4.0, 1e6,
                                std::nextafter(1e6, 2e6), limits::infinity(), limits::quiet_NaN()};
const std::vector<std::int64_t> counts{int64_min, -1, 0, 1, 2, 32, loop::max_tasklets, loop::max_tasklets + 1,
                                       int64_max};

TEST(LoopScheduleBuilder, ChunkKindsEqualTheirParse) {
    for (const std::int64_t c : chunks) {
        expect_same([c] { return schedule::static_cyclic(c); }, "static,chunk=" + num(c));
        expect_same([c] { return schedule::dynamic(c); }, "dynamic,chunk=" + num(c));
        expect_same([c] { return schedule::guided(c); }, "guided,chunk=" + num(c));
        for (const std::int64_t k : divisors)
            expect_same([c, k] { return schedule::guided(c, k); }, "guided,chunk=" + num(c) + ",divisor=" + num(k));
    }
    EXPECT_EQ(schedule::static_blocks(), schedule("static"));
    EXPECT_EQ(schedule::static_blocks().to_string(), "static");
    EXPECT_EQ(schedule::dynamic(), schedule("dynamic"));
    EXPECT_EQ(schedule::guided(), schedule("guided"));
}

TEST(LoopScheduleBuilder, FractionKindsEqualTheirParse) {
    for (const double fs : fractions) {
        for (const std::int64_t c : chunks) {
            const std::string tail = "fs=" + num(fs) + ",chunk=" + num(c);
            expect_same([=] { return schedule::hybrid(fs, c); }, "hybrid," + tail);
            expect_same([=] { return schedule::weighted(fs, c); }, "weighted," + tail);
            expect_same([=] { return schedule::staggered(fs, c); }, "staggered," + tail);
            expect_same([=] { return schedule::staggered(fs, c, queue_claim::atomic); }, "staggered," + tail);
            expect_same([=] { return schedule::staggered(fs, c, queue_claim::mutex); },
                        "staggered," + tail + ",queue=mutex");
        }
    }
    EXPECT_EQ(schedule::hybrid(0.5), schedule("hybrid,fs=0.5"));
    EXPECT_EQ(schedule::weighted(), schedule("weighted"));
    EXPECT_EQ(schedule::staggered(0.5), schedule("staggered,fs=0.5"));
}

TEST(LoopScheduleBuilder, TaskletsEqualTheirParse) {
    for (const std::int64_t n : counts)
        for (const double fs : fractions)
            for (const double skew : skews)
                for (const bool locality : {true, false})
                    expect_same([=] { return schedule::tasklets(n, fs, skew, locality); },
                                "tasklets,n=" + num(n) + ",fs=" + num(fs) + ",skew=" + num(skew) +
                                    ",locality=" + (locality ? "1" : "0"));
    EXPECT_EQ(schedule::tasklets(8), schedule("tasklets,n=8"));
}

TEST(LoopScheduleBuilder, AdaptiveEqualsItsParse) {
    const char* searches[] = {"local", "nlopt", "sweep", "race"};
    const char* delays[] = {"optimistic", "pessimistic"};
    for (int search = 0; search < 4; ++search) {
        for (int delay = 0; delay < 2; ++delay) {
            for (const std::int64_t c : chunks) {
                const auto make = [=] {
                    return schedule::adaptive(static_cast<adaptive_search>(search), c, static_cast<delay_model>(delay));
                };
                // The builder stood for "adaptive[,chunk=c]" and set search and delay after
                // the parse: its errors quote that string, its values equal the full one's.
                if (c < 1 || c > loop::max_chunk) {
                    if (c == 0) continue;
                    expect_same(make, "adaptive,chunk=" + num(c));
                    continue;
                }
                expect_same(make, std::string("adaptive,search=") + searches[search] + ",chunk=" + num(c) +
                                      ",delay=" + delays[delay]);
            }
            expect_same([=] { return schedule::adaptive(static_cast<adaptive_search>(search), 0,
                                                        static_cast<delay_model>(delay)); },
                        std::string("adaptive,search=") + searches[search] + ",chunk=auto,delay=" + delays[delay]);
        }
    }
    EXPECT_EQ(schedule::adaptive(), schedule("adaptive"));
}

// Spot checks of the exact messages (the sweep above compares them with the parser's).
TEST(LoopScheduleBuilder, ErrorsQuoteTheStringTheBuilderStandsFor) {
    const auto message = [](const std::function<schedule()>& make) { return run(make).text; };
    EXPECT_EQ(message([] { return schedule::dynamic(0); }),
              "schedule 'dynamic,chunk=0': chunk=0 is outside [1, 1099511627776]");
    EXPECT_EQ(message([] { return schedule::hybrid(1.5, 0); }),
              "schedule 'hybrid,fs=1.5,chunk=0': fs=1.5 is outside [0, 1]");  // the first bad key
    EXPECT_EQ(message([] { return schedule::hybrid(limits::quiet_NaN()); }),
              "schedule 'hybrid,fs=nan,chunk=1': fs=nan is not a number");
    EXPECT_EQ(message([] { return schedule::staggered(0.5, -2, queue_claim::mutex); }),
              "schedule 'staggered,fs=0.5,chunk=-2,queue=mutex': chunk=-2 is outside [1, 1099511627776]");
    EXPECT_EQ(message([] { return schedule::tasklets(0, 2.0, 0.5); }),
              "schedule 'tasklets,n=0,fs=2,skew=0.5,locality=1': n=0 is outside [1, 16777216]");
    EXPECT_EQ(message([] { return schedule::tasklets(4, 0.5, 0.5, false); }),
              "schedule 'tasklets,n=4,fs=0.5,skew=0.5,locality=0': skew=0.5 is outside [1, 1e+06]");
    EXPECT_EQ(message([] { return schedule::adaptive(adaptive_search::nlopt, -1); }),
              "schedule 'adaptive,chunk=-1': chunk=-1 is outside [1, 1099511627776]");
    // -0 is 0, and prints so.
    EXPECT_EQ(schedule::weighted(-0.0).to_string(), "weighted,fs=0,chunk=1");
    EXPECT_FALSE(std::signbit(schedule::tasklets(2, -0.0).static_fraction()));
}

// Kinds share fields: a builder leaves the ones its kind does not use at the parse's defaults.
TEST(LoopScheduleBuilder, UnusedFieldsKeepTheKindsDefaults) {
    EXPECT_EQ(schedule::dynamic(3).static_fraction(), 0.0);
    EXPECT_EQ(schedule::guided(3).static_fraction(), 0.0);
    EXPECT_EQ(schedule::static_cyclic(3).static_fraction(), 1.0);
    EXPECT_EQ(schedule::tasklets(3).chunk(), 1);
    EXPECT_EQ(schedule::adaptive().static_fraction(), 1.0);
    EXPECT_EQ(schedule::hybrid(0.5).tasklet_count(), 0);
    EXPECT_EQ(schedule::hybrid(0.5).claim(), queue_claim::atomic);
}

}  // namespace
}  // namespace aloe

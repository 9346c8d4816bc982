// Property test of aloe::parallel_for and the schedule syntax: thousands of seeded random
// cases, each a random schedule (built from random parameters, printed with to_string and
// parsed back), a random loop (first, last, step, extremes included) and a team of 1 to 4
// threads from a pool reused by every case. Property: every iteration runs exactly once.
//
// Deterministic: case c uses the generator seeded with base_seed + c; the trace of a
// failure prints both, and ALOE_CONFORMANCE_SEED=<n> replays with another base seed.
#include "conformance/coverage.hpp"

#include <aloe/aloe.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace aloe_conformance;

constexpr std::uint64_t default_base_seed = 0xa10e5eedull;
// Cases of the exactly-once property: 20,000 in a normal build (about 2 s on 2 cores, well
// under the 20 s budget), a fifth under sanitizers.
const int property_cases = under_sanitizer ? 4000 : 20000;
// Larger loops cost coverage memory and time without finding more; the property still
// sees every shape (they are about the ends of the range, not its length).
constexpr std::uint64_t max_case_count = 20000;

std::uint64_t base_seed() {
    if (const char* s = std::getenv("ALOE_CONFORMANCE_SEED")) return std::strtoull(s, nullptr, 0);
    return default_base_seed;
}

std::string number(double x) {
    char buf[64];
    const auto end = std::to_chars(buf, buf + sizeof buf, x).ptr;
    return std::string(buf, end);
}

class case_generator {
public:
    explicit case_generator(std::uint64_t seed) : rng_(seed) {}

    int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
    std::int64_t pick64(std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng_); }
    bool coin() { return pick(0, 1) == 1; }

    std::int64_t chunk() {
        const int r = pick(0, 99);
        if (r < 50) return pick(1, 8);
        if (r < 80) return pick(9, 300);
        if (r < 95) return pick64(301, 1'000'000);
        return std::int64_t{1} << 40;  // the largest chunk accepted
    }
    double fraction() {
        const int r = pick(0, 99);
        if (r < 15) return 0.0;
        if (r < 30) return 1.0;
        if (r < 45) return pick(0, 20) / 20.0;
        return std::uniform_real_distribution<double>(0.0, 1.0)(rng_);  // arbitrary bits: print must be exact
    }
    double skew() {
        const int r = pick(0, 99);
        if (r < 40) return 1.0;
        if (r < 50) return 1e6;
        return std::uniform_real_distribution<double>(1.0, 1000.0)(rng_);
    }

    /// A random schedule from random parameters, built through a builder; `text` gets an
    /// equivalent hand-written string (random key order, case and spaces).
    aloe::schedule schedule(std::string& text) {
        const int kind = pick(0, 7);
        std::vector<std::string> keys;
        std::string name;
        aloe::schedule s;
        switch (kind) {
            case 0: name = "static"; s = aloe::schedule::static_blocks(); break;
            case 1: {
                const auto c = chunk();
                name = "static";
                keys.push_back("chunk=" + std::to_string(c));
                s = aloe::schedule::static_cyclic(c);
                break;
            }
            case 2: {
                const auto c = chunk();
                name = "dynamic";
                keys.push_back("chunk=" + std::to_string(c));
                s = aloe::schedule::dynamic(c);
                break;
            }
            case 3: {
                const auto c = chunk();
                name = "guided";
                keys.push_back("chunk=" + std::to_string(c));
                s = aloe::schedule::guided(c);
                break;
            }
            case 4: {
                const auto c = chunk();
                const double fs = fraction();
                name = "hybrid";
                keys = {"fs=" + number(fs), "chunk=" + std::to_string(c)};
                s = aloe::schedule::hybrid(fs, c);
                break;
            }
            case 5: {
                const auto c = chunk();
                const double fs = fraction();
                const bool mutex = coin();
                name = "staggered";
                keys = {"fs=" + number(fs), "chunk=" + std::to_string(c)};
                if (mutex || coin()) keys.push_back(mutex ? "queue=mutex" : "queue=atomic");
                s = aloe::schedule::staggered(fs, c, mutex ? aloe::queue_claim::mutex : aloe::queue_claim::atomic);
                break;
            }
            case 6: {
                const auto c = chunk();
                const double fs = fraction();
                name = "weighted";
                keys = {"fs=" + number(fs), "chunk=" + std::to_string(c)};
                s = aloe::schedule::weighted(fs, c);
                break;
            }
            default: {
                const int r = pick(0, 99);
                const std::int64_t n = r < 60 ? pick(1, 64) : r < 95 ? pick(65, 2000) : pick(2001, 20000);
                const double fs = fraction();
                const double sk = skew();
                const bool loc = coin();
                name = "tasklets";
                keys = {"n=" + std::to_string(n), "fs=" + number(fs), "skew=" + number(sk),
                        std::string("locality=") + (loc ? "1" : "0")};
                s = aloe::schedule::tasklets(n, fs, sk, loc);
                break;
            }
        }
        std::shuffle(keys.begin(), keys.end(), rng_);
        text = decorate(name);
        for (const std::string& k : keys) text += "," + decorate(k);
        return s;
    }

    /// A random loop whose iteration count is at most max_case_count.
    range_shape loop() {
        for (;;) {
            const std::int64_t step = pick_step();
            const std::int64_t first = pick_first();
            const int mode = pick(0, 99);
            std::int64_t last;
            if (mode < 70) {
                // A target count, then clamped into int64 and jittered off the lattice.
                const std::uint64_t want = pick(0, 99) < 90 ? static_cast<std::uint64_t>(pick(0, 400))
                                                            : static_cast<std::uint64_t>(pick(401, 20000));
                int128 l = static_cast<int128>(first) + static_cast<int128>(want) * step;
                if (coin()) {
                    const std::int64_t off_lattice = step > 0 ? step - 1 : -(step + 1);  // exact even for INT64_MIN
                    const std::int64_t jitter = pick64(0, std::min<std::int64_t>(off_lattice, std::int64_t{1} << 30));
                    l += step > 0 ? -jitter : jitter;
                }
                if (l > i64_max) l = i64_max;
                if (l < i64_min) l = i64_min;
                last = static_cast<std::int64_t>(l);
            } else if (mode < 85) {
                last = pick_first();  // anything: often empty, sometimes huge (retried)
            } else if (mode < 95) {
                last = first;  // empty
            } else {
                // The wrong side of first: empty whatever the distance.
                const std::int64_t d = pick64(1, 1'000'000);
                last = step > 0 ? (first > i64_min + d ? first - d : i64_min) : (first < i64_max - d ? first + d : i64_max);
            }
            if (reference_count(first, last, step) <= max_case_count) return {"random", first, last, step};
        }
    }

private:
    std::int64_t pick_step() {
        const int r = pick(0, 99);
        const std::int64_t sign = coin() ? 1 : -1;
        if (r < 30) return sign;
        if (r < 55) return sign * pick(2, 20);
        if (r < 70) return sign * pick64(21, 1'000'000);
        if (r < 82) return sign * ((std::int64_t{1} << pick(20, 62)) + pick(-3, 3));
        if (r < 90) {
            const int which = pick(0, 2);
            return which == 0 ? i64_max : which == 1 ? i64_min : -i64_max;
        }
        for (;;)
            if (const std::int64_t s = pick64(i64_min, i64_max); s != 0) return s;
    }
    std::int64_t pick_first() {
        const int r = pick(0, 99);
        if (r < 25) return pick(-1000, 1000);
        if (r < 45) return i64_max - pick(0, 1000);
        if (r < 65) return i64_min + pick(0, 1000);
        if (r < 85) return pick64(i64_min, i64_max);
        return 0;
    }
    // Random case and spaces around the token, as the parser allows.
    std::string decorate(const std::string& token) {
        std::string out;
        if (pick(0, 4) == 0) out += ' ';
        for (const char c : token) {
            if (c == '=' && pick(0, 4) == 0) {
                out += " = ";
                continue;
            }
            const bool upper = std::isalpha(static_cast<unsigned char>(c)) && token.find('=') > out.size() && pick(0, 3) == 0;
            out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
        }
        if (pick(0, 4) == 0) out += ' ';
        return out;
    }

    std::mt19937_64 rng_;
};

TEST(ConformanceProperty, RandomSchedulesPrintAndParseBackEqual) {
    const std::uint64_t base = base_seed();
    const int cases = under_sanitizer ? 10000 : 50000;
    for (int c = 0; c < cases && !HasFailure(); ++c) {
        case_generator gen(base + static_cast<std::uint64_t>(c));
        std::string text;
        const aloe::schedule built = gen.schedule(text);
        SCOPED_TRACE(::testing::Message() << "base seed " << base << ", case " << c << ", schedule '"
                                          << built.to_string() << "', hand-written '" << text << "'");
        const std::string printed = built.to_string();
        aloe::schedule parsed;
        std::string message;
        ASSERT_TRUE(aloe::schedule::try_parse(printed, parsed, message)) << message;
        EXPECT_EQ(parsed, built);
        EXPECT_EQ(parsed.to_string(), printed);
        aloe::schedule from_text;
        ASSERT_TRUE(aloe::schedule::try_parse(text, from_text, message)) << message;
        EXPECT_EQ(from_text, built);
    }
}

TEST(ConformanceProperty, RandomLoopsRunEveryIterationExactlyOnce) {
    std::array<std::unique_ptr<aloe::team>, 4> pool;
    for (int k = 1; k <= 4; ++k) pool[static_cast<std::size_t>(k - 1)] = std::make_unique<aloe::team>(k);
    const std::uint64_t base = base_seed();
    std::uint64_t total_iterations = 0;
    for (int c = 0; c < property_cases && !HasFailure(); ++c) {
        const std::uint64_t seed = base + static_cast<std::uint64_t>(c);
        case_generator gen(seed);
        std::string text;
        const aloe::schedule built = gen.schedule(text);
        const range_shape r = gen.loop();
        aloe::team& t = *pool[static_cast<std::size_t>(gen.pick(0, 3))];
        const bool subrange_body = gen.coin();
        SCOPED_TRACE(::testing::Message() << "base seed " << base << ", case " << c << " (seed " << seed << "): schedule '"
                                          << built.to_string() << "', first=" << r.first << ", last=" << r.last
                                          << ", step=" << r.step << ", team " << t.size() << ", "
                                          << (subrange_body ? "subrange" : "index") << " body");
        // The schedule the loop runs is the one parsed back from its printed form.
        const aloe::schedule s(built.to_string());
        ASSERT_EQ(s, built);
        coverage cov(r, t.size());
        total_iterations += cov.count();
        if (subrange_body)
            aloe::parallel_for(t, r.first, r.last, r.step, s, [&](aloe::subrange sub, int thread) {
                cov.check_subrange(sub, thread);
            });
        else
            aloe::parallel_for(t, r.first, r.last, r.step, s, [&](std::int64_t i) { cov.hit(i); });
        ASSERT_TRUE(cov.exactly_once());
    }
    RecordProperty("iterations", std::to_string(total_iterations));
}

}  // namespace

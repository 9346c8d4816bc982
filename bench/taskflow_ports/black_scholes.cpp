// black_scholes (taskflow/benchmarks/black_scholes, after PARSEC's blackscholes): prices N
// European options by the Black–Scholes formula, N times over (N loops of N options, one
// parallel loop each), for N = 1000, 2000, … 10000; a row's size is N. The options are drawn
// with rand() in the order their generator draws them (spot and strike in [0, 200), rate 0.1,
// volatility and time in [0, 1) by hundredths, put or call, and an unused reference value),
// untimed, into one 64-byte-aligned block of five float arrays plus an int array of types.
//
// The formula, in float with double constants as in PARSEC: d1 = (ln(S/K) + (r + σ²/2)·t) /
// (σ·√t), d2 = d1 − σ·√t, N(x) by the Abramowitz–Stegun polynomial (26.2.17); a call costs
// S·N(d1) − K·e^(−rt)·N(d2), a put K·e^(−rt)·(1 − N(d2)) − S·(1 − N(d1)).
//
// The schedule is `guided,divisor=4` by default: the options cost about the same, but 10,000
// short loops on a shared machine meet a slow thread often, and a static block cannot give
// its excess away (static: 1.09× oneTBB on the 2-vCPU VM, guided 0.88–0.98×; see
// bench/results/taskflow-ports-20261126-quiet/schedules.md). --schedule names another.
#include "ports.hpp"

#include <aloe/parallel_for.hpp>
#include <aloe/schedule.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

namespace taskflow_ports {
namespace {

constexpr double inv_sqrt_2pi = 0.39894228040143270286;

// The standard normal distribution function by Abramowitz & Stegun 26.2.17, each step rounded
// to float as PARSEC's code rounds it (k's three steps included). Computing k in double and
// rounding once cost 2-3% of the whole benchmark on one thread (measured against the
// benchmark's own formula on the same data, 2026-11-28). The sign is an int set in if/else,
// as PARSEC keeps it: GCC 12 then branches, where a bool and `if (negative) x = -x` became
// five select instructions a call and 3-5% of the benchmark on one thread (13.30-13.34 s
// against 12.54-12.72, the libgomp binary 12.61-12.88).
inline float normal_cdf(float x) {
    int negative;
    if (x < 0.0f) {
        x = -x;
        negative = 1;
    } else {
        negative = 0;
    }
    const float density = static_cast<float>(std::exp(-0.5f * x * x) * inv_sqrt_2pi);
    float k = static_cast<float>(0.2316419 * x);
    k = static_cast<float>(1.0 + k);
    k = static_cast<float>(1.0 / k);
    const float k2 = k * k, k3 = k2 * k, k4 = k3 * k, k5 = k4 * k;
    float tail = static_cast<float>(k2 * -0.356563782);
    tail = tail + static_cast<float>(k3 * 1.781477937);
    tail = tail + static_cast<float>(k4 * -1.821255978);
    tail = tail + static_cast<float>(k5 * 1.330274429);
    tail = tail + static_cast<float>(k * 0.319381530);
    float cdf = static_cast<float>(1.0 - tail * density);
    if (negative) cdf = static_cast<float>(1.0 - cdf);
    return cdf;
}

inline float option_price(float spot, float strike, float rate, float volatility, float time, int is_put) {
    const float sqrt_time = std::sqrt(time);
    const float log_ratio = std::log(spot / strike);
    const float half_variance = static_cast<float>(volatility * volatility * 0.5);
    const float spread = volatility * sqrt_time;
    const float d1 = ((rate + half_variance) * time + log_ratio) / spread;
    const float d2 = d1 - spread;
    const float n1 = normal_cdf(d1);
    const float n2 = normal_cdf(d2);
    const float discounted_strike = strike * std::exp(-rate * time);
    if (is_put == 0) return spot * n1 - discounted_strike * n2;
    const auto not_n1 = static_cast<float>(1.0 - n1);
    const auto not_n2 = static_cast<float>(1.0 - n2);
    return discounted_strike * not_n2 - spot * not_n1;
}

struct free_deleter {
    void operator()(void* p) const noexcept { std::free(p); }
};

// The options in structure-of-arrays form, as the benchmark's generator lays them out.
struct option_set {
    int count = 0;
    std::unique_ptr<float, free_deleter> floats;  // spot, strike, rate, volatility, time
    std::unique_ptr<int, free_deleter> types;     // 1 put, 0 call
    std::unique_ptr<float, free_deleter> prices;
    float* spot() const { return floats.get(); }
    float* strike() const { return floats.get() + count; }
    float* rate() const { return floats.get() + 2 * count; }
    float* volatility() const { return floats.get() + 3 * count; }
    float* time() const { return floats.get() + 4 * count; }
};

constexpr std::size_t line = 64;

std::size_t rounded_to_line(std::size_t bytes) { return (bytes + line - 1) / line * line; }

option_set generate(int count) {
    option_set o;
    o.count = count;
    const auto n = static_cast<std::size_t>(count);
    o.floats.reset(static_cast<float*>(std::aligned_alloc(line, rounded_to_line(5 * n * sizeof(float)))));
    o.types.reset(static_cast<int*>(std::aligned_alloc(line, rounded_to_line(n * sizeof(int)))));
    o.prices.reset(static_cast<float*>(std::malloc(n * sizeof(float))));
    if (!o.floats || !o.types || !o.prices) fail("black_scholes", "out of memory");
    for (std::size_t i = 0; i < n; ++i) {
        o.spot()[i] = static_cast<float>(std::rand() % 200);
        o.strike()[i] = static_cast<float>(std::rand() % 200);
        o.rate()[i] = 0.1f;
        o.volatility()[i] = static_cast<float>(std::rand() % 100) / 100.0f;
        o.time()[i] = static_cast<float>(std::rand() % 100) / 100.0f;
        o.types.get()[i] = std::rand() % 2 ? 1 : 0;
        (void)std::rand();  // the generator's reference price, never used
    }
    return o;
}

}  // namespace

void run_black_scholes(const options& opts) {
    const std::string text = opts.schedule.empty() ? "guided,divisor=4" : opts.schedule;
    aloe::schedule s;
    std::string why;
    if (!aloe::schedule::try_parse(text, s, why)) bad_choice("black_scholes", "schedule", text, why);

    print_header();
    for (int n = 1000; n <= 10000; n += 1000) {
        const option_set o = generate(n);
        double total_us = 0;
        for (unsigned round = 0; round < opts.num_rounds; ++round) {
            total_us += static_cast<double>(time_us([&] {
                            const float* spot = o.spot();
                            const float* strike = o.strike();
                            const float* rate = o.rate();
                            const float* volatility = o.volatility();
                            const float* time = o.time();
                            const int* types = o.types.get();
                            float* prices = o.prices.get();
                            for (int run = 0; run < n; ++run) {
                                aloe::parallel_for(0, n, s, [=](aloe::subrange r, int) {
                                    for (std::int64_t i = r.first(); i < r.bound(); ++i)
                                        prices[i] = option_price(spot[i], strike[i], rate[i], volatility[i], time[i],
                                                                 types[i]);
                                });
                            }
                        }).count());
        }
        // Every price is the formula's (the loops wrote each option, the last write wins).
        for (int i = 0; i < n; ++i) {
            const float expected =
                option_price(o.spot()[i], o.strike()[i], o.rate()[i], o.volatility()[i], o.time()[i], o.types.get()[i]);
            const float got = o.prices.get()[i];
            if (!(got == expected || (std::isnan(got) && std::isnan(expected))))
                fail("black_scholes", "option " + std::to_string(i) + " priced " + std::to_string(got) + ", expected " +
                                          std::to_string(expected));
        }
        print_row(static_cast<std::size_t>(n), total_us, opts.num_rounds);
    }
}

}  // namespace taskflow_ports

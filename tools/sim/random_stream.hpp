// One deterministic random stream per (seed, node, core, purpose): splitmix64 over a key
// mixed from those numbers. A node's draws depend on nothing but its key, so a simulation
// gives the same bits whatever the number of threads simulating it and in whatever order
// the nodes are visited. splitmix64 passes BigCrush and costs a few instructions a draw.
#pragma once

#include <cmath>
#include <cstdint>

namespace aloe::sim {

/// The purpose of the stream that picks which nodes are slow (shared by the one-rank and the
/// ranks-per-node engines, so that a seed slows the same nodes in both).
inline constexpr std::uint64_t slow_node_purpose = 0xfd;

class random_stream {
public:
    random_stream() = default;
    /// The stream of `seed` for one purpose of one core of one node.
    random_stream(std::uint64_t seed, std::uint64_t node, std::uint64_t core, std::uint64_t purpose) noexcept
        : state_(mix(mix(mix(seed ^ 0x6a09e667f3bcc909ull) + node) + (core << 8 | purpose))) {}

    std::uint64_t next() noexcept { return mix(state_ += 0x9e3779b97f4a7c15ull); }
    /// Uniform in [0, 1).
    double uniform() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
    /// Uniform in (0, 1]: safe under a logarithm.
    double open_uniform() noexcept { return static_cast<double>((next() >> 11) + 1) * 0x1.0p-53; }
    /// Exponential with the given mean: Marsaglia and Tsang's ziggurat (256 layers), one
    /// draw and a compare 98.9% of the time. The noise streams draw two per event, which
    /// by logarithms was a third of a noisy simulation's instructions.
    double exponential(double mean) noexcept {
        const ziggurat& z = exponential_table();
        while (true) {
            const std::uint64_t bits = next();
            const auto layer = static_cast<std::size_t>(bits & 0xff);
            const auto u = static_cast<std::uint32_t>(bits >> 32);
            const double x = u * z.w[layer];
            if (u < z.k[layer]) return mean * x;
            if (layer == 0) return mean * (z.r - fast_log(open_uniform()));  // the tail beyond r
            if (z.f[layer] + uniform() * (z.f[layer - 1] - z.f[layer]) < std::exp(-x)) return mean * x;
        }
    }

    /// ln(x) for x > 0 finite, to about 1e-9 relative: the exponent, then atanh's series on
    /// the mantissa m in [sqrt(1/2), sqrt(2)) (|t| ≤ 0.172, so t^15/15 is below 1e-12).
    /// A quarter of libm's time, which was a fifth of a noisy simulation's.
    static double fast_log(double x) noexcept {
        std::uint64_t bits;
        static_assert(sizeof bits == sizeof x);
        __builtin_memcpy(&bits, &x, sizeof bits);
        int e = static_cast<int>((bits >> 52) & 0x7ff) - 1023;
        bits = (bits & 0x000fffffffffffffull) | 0x3ff0000000000000ull;  // m in [1, 2)
        double m;
        __builtin_memcpy(&m, &bits, sizeof m);
        if (m > 1.4142135623730951) {
            m *= 0.5;
            ++e;
        }
        const double t = (m - 1) / (m + 1), t2 = t * t;
        const double series = t * (2 + t2 * (2.0 / 3 + t2 * (2.0 / 5 + t2 * (2.0 / 7 + t2 * (2.0 / 9 + t2 * (2.0 / 11 + t2 * (2.0 / 13)))))));
        return e * 0.6931471805599453 + series;
    }
    /// Standard normal (Box–Muller, one of the pair).
    double normal() noexcept {
        return std::sqrt(-2.0 * std::log(open_uniform())) * std::cos(6.283185307179586 * uniform());
    }
    /// An index in [0, n).
    std::uint64_t below(std::uint64_t n) noexcept {
        __extension__ using wide = unsigned __int128;  // Lemire's multiply-shift: no modulo bias
        return static_cast<std::uint64_t>((static_cast<wide>(next()) * n) >> 64);
    }

private:
    struct ziggurat {
        double r = 7.69711747013104972;  // where the last layer starts
        std::uint32_t k[256];
        double w[256], f[256];
        ziggurat() noexcept {
            const double m = 4294967296.0, v = 3.949659822581572e-3;  // 2^32; each layer's area
            double d = r, t = r;
            const double q = v / std::exp(-d);
            k[0] = static_cast<std::uint32_t>(d / q * m);
            k[1] = 0;
            w[0] = q / m;
            w[255] = d / m;
            f[0] = 1;
            f[255] = std::exp(-d);
            for (int i = 254; i >= 1; --i) {
                d = -std::log(v / d + std::exp(-d));
                k[i + 1] = static_cast<std::uint32_t>(d / t * m);
                t = d;
                f[i] = std::exp(-d);
                w[i] = d / m;
            }
        }
    };
    static const ziggurat& exponential_table() noexcept {
        static const ziggurat z;
        return z;
    }
    static std::uint64_t mix(std::uint64_t z) noexcept {
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    std::uint64_t state_ = 0;
};

}  // namespace aloe::sim

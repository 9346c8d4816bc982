#include "adapt/grain_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

namespace aloe::adapt {
namespace {

constexpr int max_terms = 3;  // a, b/h, c·h

// Solves the k×k system m·s = r in place (Gaussian elimination, partial pivoting); false
// when it is singular.
bool solve(std::array<std::array<double, max_terms>, max_terms>& m, std::array<double, max_terms>& r, int k) {
    for (int col = 0; col < k; ++col) {
        int pivot = col;
        for (int i = col + 1; i < k; ++i)
            if (std::abs(m[i][col]) > std::abs(m[pivot][col])) pivot = i;
        if (!(std::abs(m[pivot][col]) > 1e-300)) return false;
        std::swap(m[col], m[pivot]);
        std::swap(r[col], r[pivot]);
        for (int i = 0; i < k; ++i) {
            if (i == col) continue;
            const double f = m[i][col] / m[col][col];
            for (int j = col; j < k; ++j) m[i][j] -= f * m[col][j];
            r[i] -= f * r[col];
        }
    }
    for (int i = 0; i < k; ++i) r[i] /= m[i][i];
    return true;
}

// The value at t of the line through (x[i], y[i]) and (x[j], y[j]).
double chord_at(std::span<const double> x, std::span<const double> y, std::size_t i, std::size_t j, double t) {
    return y[i] + (y[j] - y[i]) / (x[j] - x[i]) * (t - x[i]);
}

}  // namespace

double grain_model::argmin() const noexcept {
    if (b > 0 && c > 0) return std::sqrt(b / c);
    if (b > 0) return std::numeric_limits<double>::infinity();
    if (c > 0) return 0;
    return std::numeric_limits<double>::quiet_NaN();
}

std::optional<grain_fit> fit_grain_model(std::span<const grain_point> points) {
    std::vector<grain_point> p;
    for (const grain_point& q : points)
        if (q.grain > 0 && q.cost > 0 && q.weight > 0 && std::isfinite(q.grain) && std::isfinite(q.cost))
            p.push_back(q);
    if (p.size() < 3) return std::nullopt;
    // Grains relative to their geometric mean keep 1/h and h near 1 (grains span 1 to 1e9).
    double log_sum = 0;
    for (const grain_point& q : p) log_sum += std::log(q.grain);
    const double reference = std::exp(log_sum / static_cast<double>(p.size()));

    std::optional<grain_fit> best;
    double weight_sum = 0;
    for (const grain_point& q : p) weight_sum += q.weight;
    for (const bool use_b : {true, false}) {
        for (const bool use_c : {true, false}) {
            const int k = 1 + (use_b ? 1 : 0) + (use_c ? 1 : 0);
            const auto terms = [&](double h) {
                std::array<double, max_terms> t{1.0, 0.0, 0.0};
                int n = 1;
                if (use_b) t[n++] = 1.0 / h;
                if (use_c) t[n++] = h;
                return t;
            };
            std::array<std::array<double, max_terms>, max_terms> m{};
            std::array<double, max_terms> r{};
            for (const grain_point& q : p) {
                const double w = q.weight / (q.cost * q.cost);
                const auto t = terms(q.grain / reference);
                for (int i = 0; i < k; ++i) {
                    r[i] += w * t[i] * q.cost;
                    for (int j = 0; j < k; ++j) m[i][j] += w * t[i] * t[j];
                }
            }
            if (!solve(m, r, k)) continue;
            grain_model model;
            int n = 0;
            model.a = r[n++];
            if (use_b) model.b = r[n++] * reference;
            if (use_c) model.c = r[n++] / reference;
            if (model.b < 0 || model.c < 0 || !std::isfinite(model.a)) continue;
            double sum = 0;
            for (const grain_point& q : p) {
                const double rel = (model(q.grain) - q.cost) / q.cost;
                sum += q.weight * rel * rel;
            }
            const double residual = std::sqrt(sum / weight_sum);
            if (!best || residual < best->relative_residual) best = grain_fit{model, residual};
        }
    }
    return best;
}

double convex_lower_bound(std::span<const double> x, std::span<const double> y, double domain_lo,
                          double domain_hi) {
    const std::size_t n = std::min(x.size(), y.size());
    if (n < 3) return -std::numeric_limits<double>::infinity();
    double bound = *std::min_element(y.begin(), y.begin() + static_cast<std::ptrdiff_t>(n));
    // Each gap [x[j], x[j+1]]: the chord on its left extended rightwards, the chord on its
    // right extended leftwards; the bound there is their upper envelope's least value, at an
    // end of the gap or where the two lines cross.
    for (std::size_t j = 0; j + 1 < n; ++j) {
        const bool left = j >= 1, right = j + 2 < n;
        const auto envelope = [&](double t) {
            double v = -std::numeric_limits<double>::infinity();
            if (left) v = std::max(v, chord_at(x, y, j - 1, j, t));
            if (right) v = std::max(v, chord_at(x, y, j + 1, j + 2, t));
            return v;
        };
        double least = std::min(envelope(x[j]), envelope(x[j + 1]));
        if (left && right) {
            const double s1 = (y[j] - y[j - 1]) / (x[j] - x[j - 1]);
            const double s2 = (y[j + 2] - y[j + 1]) / (x[j + 2] - x[j + 1]);
            if (s1 != s2) {
                const double t = (y[j + 1] - s2 * x[j + 1] - y[j] + s1 * x[j]) / (s1 - s2);
                if (t > x[j] && t < x[j + 1]) least = std::min(least, envelope(t));
            }
        }
        bound = std::min(bound, least);
    }
    // Beyond the outermost points: the outermost chord extended to the domain's edge.
    if (domain_lo < x[0]) bound = std::min(bound, chord_at(x, y, 0, 1, domain_lo));
    if (domain_hi > x[n - 1]) bound = std::min(bound, chord_at(x, y, n - 2, n - 1, domain_hi));
    return bound;
}

}  // namespace aloe::adapt

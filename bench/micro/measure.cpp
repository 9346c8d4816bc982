// The interleaved measurement loop (EPCC's batches, sized to --target-ms, every variant once
// per repetition in a rotated order) and the statistics over its repetitions.
#include "measure.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>

namespace aloe_overhead {

double quantile(std::vector<double> v, double q) {
    if (v.empty()) return std::nan("");
    std::sort(v.begin(), v.end());
    const double pos = q * static_cast<double>(v.size() - 1);
    const auto lo = static_cast<std::size_t>(pos);
    const std::size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}
double median(const std::vector<double>& v) { return quantile(v, 0.5); }

void runner::run(group& g) const {
    const std::size_t k = g.v.size();
    // Warm-up and batch size: each variant gets enough constructs per batch for about
    // target_us (EPCC sizes innerreps the same way).
    for (variant& v : g.v) {
        std::vector<double> t;
        for (int i = 0; i < 3; ++i) {
            t.push_back(time_batch(v, 1));
            settle();
        }
        v.inner = static_cast<int>(std::clamp(std::ceil(opt.target_us / std::max(median(t), 0.01)), 1.0, 1e7));
    }
    std::cerr << "  " << g.test << ": " << k << " variants x " << opt.reps << " reps " << std::flush;
    const double t0 = now_us();
    for (int r = 0; r < opt.reps; ++r) {
        for (std::size_t j = 0; j < k; ++j) {
            variant& v = g.v[(j + static_cast<std::size_t>(r)) % k];
            v.us.push_back(time_batch(v, v.inner));
            settle();
        }
        std::cerr << '.' << std::flush;
    }
    std::cerr << " " << std::lround((now_us() - t0) / 1e6) << " s\n";
}

summary_row summarise(const group& g, const variant& v) {
    const variant& ref = g.v.front();
    std::vector<double> per_unit;
    for (std::size_t r = 0; r < v.us.size(); ++r) per_unit.push_back((v.us[r] - ref.us[r]) / v.units);
    const double m = median(v.us);
    return {&v, m, *std::min_element(v.us.begin(), v.us.end()), *std::max_element(v.us.begin(), v.us.end()),
            (quantile(v.us, 0.9) - quantile(v.us, 0.1)) / m, &v == &ref ? 0.0 : median(per_unit)};
}

const variant* find(const group& g, const std::string& name) {
    for (const variant& v : g.v)
        if (v.name == name) return &v;
    return nullptr;
}

int wins(const group& g, const variant& a, const variant& b) {
    const variant& ref = g.v.front();
    int w = 0;
    for (std::size_t r = 0; r < a.us.size(); ++r)
        w += (a.us[r] - ref.us[r]) / a.units <= (b.us[r] - ref.us[r]) / b.units ? 1 : 0;
    return w;
}

}  // namespace aloe_overhead

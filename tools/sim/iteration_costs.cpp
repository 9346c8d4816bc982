#include "sim/iteration_costs.hpp"

#include "sim/random_stream.hpp"

#include <cmath>
#include <stdexcept>

namespace aloe::sim {

iteration_costs::iteration_costs(const iteration_costs_spec& spec, std::int64_t iterations, double iteration_s,
                                 std::uint64_t seed)
    : n_(iterations), mean_(iteration_s) {
    if (iterations < 1) throw std::invalid_argument("the loop needs at least one iteration");
    if (spec.shape == iteration_costs_spec::kind::uniform) return;
    constexpr std::int64_t most = std::int64_t{1} << 27;
    if (iterations > most)
        throw std::invalid_argument("a loop of " + std::to_string(iterations) +
                                    " iterations with non-uniform costs needs more than 1 GiB; use at most 2^27");
    const auto n = static_cast<std::size_t>(iterations);
    std::vector<double> cost(n);
    switch (spec.shape) {
        case iteration_costs_spec::kind::uniform: break;
        case iteration_costs_spec::kind::ramp: {
            // Linear from a to ratio·a, mean iteration_s.
            const double a = 2 * iteration_s / (1 + spec.ratio);
            for (std::size_t j = 0; j < n; ++j)
                cost[j] = n == 1 ? iteration_s : a + (spec.ratio - 1) * a * static_cast<double>(j) / static_cast<double>(n - 1);
            break;
        }
        case iteration_costs_spec::kind::heavy_tail: {
            random_stream r(seed, ~0ull, 0, 0xc0);
            const double xm = iteration_s * (spec.alpha - 1) / spec.alpha;  // Pareto mean = α·xm/(α−1)
            for (double& c : cost) c = xm * std::pow(r.open_uniform(), -1.0 / spec.alpha);
            break;
        }
        case iteration_costs_spec::kind::replay: {
            const auto& rec = spec.replay_s;
            double rec_sum = 0;
            for (double c : rec) rec_sum += c;
            const double rec_mean = rec_sum / static_cast<double>(rec.size());
            const double scale = rec_mean > 0 ? iteration_s / rec_mean : 0;
            for (std::size_t j = 0; j < n; ++j) {
                const std::size_t k = j * rec.size() / n;  // nearest recorded iteration below
                cost[j] = rec_mean > 0 ? rec[k] * scale : iteration_s;
            }
            break;
        }
    }
    prefix_.resize(n + 1);
    double run = 0, carry = 0;  // Kahan: 2^27 additions keep their digits
    for (std::size_t j = 0; j < n; ++j) {
        const double y = cost[j] - carry;
        const double t = run + y;
        carry = (t - run) - y;
        run = t;
        prefix_[j + 1] = run;
    }
    mean_ = run / static_cast<double>(n);
}

}  // namespace aloe::sim

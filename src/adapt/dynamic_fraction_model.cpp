#include "adapt/dynamic_fraction_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace aloe::adapt {
namespace {

double non_negative(double x) noexcept { return std::isfinite(x) && x > 0 ? x : 0.0; }

}  // namespace

double combined_delay(const loop_measures& m, delay_combination how) noexcept {
    const double noise = non_negative(m.noise_s);
    const double app = non_negative(m.app_imbalance_s);
    return how == delay_combination::pessimistic ? noise + app : std::max(noise, app);
}

fraction_decision model_dynamic_fraction(const loop_measures& m, delay_combination how) {
    fraction_decision d;
    d.delay_s = combined_delay(m, how);
    if (m.threads <= 1 || m.iterations == 0) {
        d.reason = "one thread or no iterations: nothing to balance";
        return d;
    }
    if (d.delay_s == 0) {
        d.reason = "no delay measured: static";
        return d;
    }
    const double per_iteration = m.iteration_s + non_negative(m.dequeue_s);
    if (!std::isfinite(per_iteration) || per_iteration <= 0) {
        d.dynamic_fraction = first_invocation_fraction;
        d.reason = "no iteration time yet: first-invocation fraction";
        return d;
    }
    const double fd = static_cast<double>(m.threads) * d.delay_s / (static_cast<double>(m.iterations) * per_iteration);
    if (fd >= 1) {
        d.dynamic_fraction = 1;
        d.reason = "delay longer than the loop: all dynamic";
        return d;
    }
    d.dynamic_fraction = fd;
    d.reason = "model";
    return d;
}

double noisy_node_delay(const loop_measures& m, double fd, double delay_s) noexcept {
    if (m.threads <= 1) return std::numeric_limits<double>::infinity();
    const double p = m.threads;
    return delay_s / (p - 1) + fd * static_cast<double>(m.iterations) * non_negative(m.dequeue_s) / p;
}

double slack_adjusted_fraction(const loop_measures& m, double fd, double slack_s) noexcept {
    const double slack = non_negative(slack_s);
    if (slack == 0) return fd;  // on the critical path: the full fraction
    const double p = m.threads;
    const double n = static_cast<double>(m.iterations);
    const double saved_per_fraction = (p - 1) * n * m.iteration_s / p - n * non_negative(m.dequeue_s);
    if (m.threads <= 1 || !(saved_per_fraction > 0)) return 0.0;
    return std::max(fd - slack / saved_per_fraction, 0.0);
}

}  // namespace aloe::adapt

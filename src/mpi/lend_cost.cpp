#include "mpi/lend_cost.hpp"

#include <algorithm>

namespace aloe::mpi {
namespace {

void average_in(double& average, double sample) noexcept {
    constexpr double weight = 0.25;
    average = average < 0 ? sample : average + weight * (sample - average);
}

}  // namespace

void lend_cost::phase_ended(bool after_lend, double wall_s, double cpu_s) noexcept {
    if (!(wall_s >= 0) || !(cpu_s >= 0)) return;  // NaN or a clock that went wrong
    average_in(after_lend ? after_lend_s_ : after_keep_s_, std::max(0.0, wall_s - cpu_s));
}

double lend_cost::cost_s() const noexcept {
    if (after_lend_s_ < 0) return 0;
    return std::max(0.0, after_lend_s_ - std::max(0.0, after_keep_s_));
}

bool lend_cost::probe_instead_of_refusing() noexcept {
    if (++considered_ % probe_every == 0) return true;
    ++refused_;
    return false;
}

}  // namespace aloe::mpi

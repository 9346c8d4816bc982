#include "omp/guest_payoff.hpp"

namespace aloe::omp {
namespace {

void average_in(std::atomic<double>& average, double sample) noexcept {
    constexpr double weight = 1.0 / 32;
    double old = average.load(std::memory_order_relaxed);
    while (!average.compare_exchange_weak(old, old < 0 ? sample : old + weight * (sample - old), std::memory_order_relaxed)) {
    }
}

}  // namespace

void guest_payoff::region_ran(bool with_guests, double seconds) noexcept {
    if (!(seconds >= 0)) return;
    average_in(with_guests ? with_ : without_, seconds);
}

bool guest_payoff::take_guests() noexcept {
    const double with = with_guests_s(), without = without_guests_s();
    if (with < 0) return true;
    if (without >= 0 && with <= (1 + most_loss) * without) return true;
    // Either guests cost, and every probe_every-th region takes them anyway, or no region ran
    // without them yet, and every probe_every-th runs without, to have the comparison.
    const bool probe = considered_.fetch_add(1, std::memory_order_relaxed) % probe_every == probe_every - 1;
    if (probe == (without >= 0)) return true;
    refused_.fetch_add(1, std::memory_order_relaxed);
    return false;
}

}  // namespace aloe::omp

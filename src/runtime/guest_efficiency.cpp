#include "runtime/guest_efficiency.hpp"

#include <algorithm>

namespace aloe::runtime {

void guest_efficiency::seat_ended(double wall_s, double cpu_s) noexcept {
    if (!(wall_s >= shortest_seat_s) || !(cpu_s >= 0)) return;  // too short, NaN, or no CPU clock
    const double e = std::min(1.0, cpu_s / wall_s);
    constexpr double weight = 0.25;
    double old = average_.load(std::memory_order_relaxed);
    while (!average_.compare_exchange_weak(old, old < 0 ? e : old + weight * (e - old), std::memory_order_relaxed)) {
    }
}

bool guest_efficiency::worth_a_guest(int own) noexcept {
    const double e = average();
    const double bound = static_cast<double>(own) / static_cast<double>(own + 1);
    if (e < 0 || e > bound) return true;
    if (considered_.fetch_add(1, std::memory_order_relaxed) % probe_every == probe_every - 1) return true;
    refused_.fetch_add(1, std::memory_order_relaxed);
    return false;
}

guest_efficiency& process_guest_efficiency() noexcept {
    static guest_efficiency g;
    return g;
}

}  // namespace aloe::runtime

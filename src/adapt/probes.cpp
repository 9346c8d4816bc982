#include "adapt/probes.hpp"

#include "adapt/median.hpp"
#include "loop/site_registry.hpp"
#include "runtime/noise_probe.hpp"

#include <aloe/parallel_for.hpp>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <vector>

namespace aloe::adapt {
namespace {

template <class F>
double seconds_of(F&& f) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

double measure_dequeue_cost(team& t, int repetitions, std::int64_t iterations) {
    if (repetitions < 1 || iterations < 1)
        throw std::invalid_argument("measure_dequeue_cost: repetitions and iterations must be >= 1");
    const schedule fixed("static");
    const schedule shared("dynamic,chunk=1");
    const loop_site static_site("aloe.probe.static");
    const loop_site dynamic_site("aloe.probe.dynamic");
    // Internal: counted like any site (stats_of finds them), left out of the user's listings.
    loop::site_registry& sites = loop::site_registry::instance();
    sites.pin(static_site, loop::site_visibility::internal);
    sites.pin(dynamic_site, loop::site_visibility::internal);
    std::vector<double> static_s, dynamic_s;
    const auto empty = [](std::int64_t) {};
    for (int r = 0; r < repetitions; ++r) {  // interleaved, so drift hits both alike
        static_s.push_back(seconds_of([&] { parallel_for(t, 0, iterations, fixed, empty, static_site); }));
        dynamic_s.push_back(seconds_of([&] { parallel_for(t, 0, iterations, shared, empty, dynamic_site); }));
    }
    const auto threads = static_cast<double>(t.size());
    const double extra = median(dynamic_s) - median(static_s);
    return std::max(0.0, extra * threads / static_cast<double>(iterations));
}

double measure_noise_length(double quantum_us, double seconds) {
    if (!(quantum_us > 0) || !(seconds > 0))
        throw std::invalid_argument("measure_noise_length: quantum and duration must be positive");
    const std::uint64_t units = runtime::calibrate_work_units(quantum_us);
    const auto samples = std::max<std::size_t>(1, static_cast<std::size_t>(seconds * 1e6 / quantum_us));
    const runtime::noise_summary s = runtime::summarize_fwq(runtime::run_fwq(units, samples), -1);
    return s.event_mean_us * 1e-6;
}

std::optional<double> iteration_time(const site_stats& s) {
    std::optional<double> best;
    for (const thread_loop_stats& t : s.last) {
        if (t.iterations == 0) continue;
        const double per = (t.static_s + t.dynamic_s) / static_cast<double>(t.iterations);
        if (!best || per < *best) best = per;
    }
    return best;
}

}  // namespace aloe::adapt

// The machine's load from /proc/stat, the runtimes' idle spin and the placement check; see
// checks.hpp and README.md ("Fairness", "Placement").
#include "checks.hpp"

#include "measure.hpp"
#include "runtime/cpu_mask.hpp"

#include <algorithm>
#include <fstream>
#include <string>

#include <unistd.h>

namespace aloe_overhead {
namespace {

/// Distinct CPUs among cpu[0..p).
int distinct_cpus(const std::vector<int>& cpu) {
    std::vector<int> c = cpu;
    std::sort(c.begin(), c.end());
    return static_cast<int>(std::unique(c.begin(), c.end()) - c.begin());
}

}  // namespace

cpu_times read_cpu_times() {
    cpu_times t;
    std::ifstream f("/proc/stat");
    std::string cpu;
    double v[8] = {0, 0, 0, 0, 0, 0, 0, 0};  // user nice system idle iowait irq softirq steal
    if (!(f >> cpu) || cpu != "cpu") return t;
    for (double& x : v) f >> x;
    const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
    t.steal = v[7] / tick;
    t.busy = (v[0] + v[1] + v[2] + v[5] + v[6]) / tick;
    t.total = (v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7]) / tick;
    return t;
}

other_load load_between(const cpu_times& a, const cpu_times& b, double own_s) {
    const double total = b.total - a.total;
    if (total <= 0) return {};
    return {std::max(0.0, (b.busy - a.busy - own_s) / total), (b.steal - a.steal) / total};
}

double idle_spin_us(const std::function<void()>& construct, int threads, double window_us, int tries) {
    if (threads < 2) return 0;
    std::vector<double> v;
    for (int k = 0; k < tries; ++k) {
        construct();
        const double c0 = process_cpu_us();
        sleep_us(window_us);
        v.push_back((process_cpu_us() - c0) / (threads - 1));
    }
    return median(v);
}

double shared_cpu_share(const std::function<void(std::vector<int>&)>& loop, int threads, double pause_us, int rounds,
                        int loops) {
    const int ncpu = std::max(1, static_cast<int>(aloe::runtime::cpus_in_affinity_mask().size()));
    const int want = std::min(threads, ncpu);
    std::vector<int> cpu(static_cast<std::size_t>(threads), -1);
    int shared = 0;
    for (int r = 0; r < rounds; ++r) {
        sleep_us(pause_us);
        for (int k = 0; k < loops; ++k) {
            loop(cpu);
            shared += distinct_cpus(cpu) < want ? 1 : 0;
        }
    }
    return static_cast<double>(shared) / (rounds * loops);
}

}  // namespace aloe_overhead

// Seeded OS-noise injection: in each timed step, with probability p, one CPU of the team is
// taken for δ (starting a fixed delay after the step starts) by an injector thread pinned there. Injectors run SCHED_FIFO when
// the process may (then the worker on that CPU stops for the whole δ, like a kernel daemon or
// an interrupt storm); otherwise at normal priority, where the kernel shares the CPU and a
// worker loses about half of δ — the record says which one happened.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <random>
#include <semaphore>
#include <string>
#include <thread>
#include <vector>

namespace aloe_apps {

struct noise_options {
    double probability = 0;   // per timed step, in [0, 1]
    double length_us = 0;     // δ, in (0, 1e6]
    int fixed_cpu = -1;       // index into the team's CPUs; -1 draws one per event
    std::uint64_t seed = 1;
    // How long after the step starts the CPU is taken, in [0, 1e6]. Not 0: an injector
    // taking the main thread's CPU at once would stop it before it starts the loop, which
    // delays every thread alike and is not the noise a schedule can absorb.
    double delay_us = 100;
};

class noise_injector {
public:
    /// Starts one idle injector per CPU in `cpus` (the team's CPUs, thread order).
    noise_injector(const noise_options& options, const std::vector<int>& cpus);
    ~noise_injector();
    noise_injector(const noise_injector&) = delete;
    noise_injector& operator=(const noise_injector&) = delete;

    /// Draws this step's event; when it hits, wakes the chosen CPU's injector and returns.
    void at_step_start();

    std::int64_t events() const noexcept { return events_; }
    /// Time the injectors actually spun, summed (waits for running events to end).
    double injected_seconds();
    /// "fifo" or "normal (<why>)".
    const std::string& priority() const noexcept { return priority_; }

private:
    struct injector;
    void spin(injector& inj);

    noise_options options_;
    std::mt19937_64 rng_;
    std::vector<std::unique_ptr<injector>> injectors_;
    std::int64_t events_ = 0;
    std::string priority_;
};

/// The n-th draw of a seeded stream as a double in [0, 1): the top 53 bits, so the sequence
/// is the same on every standard library (std::uniform_real_distribution is not).
inline double unit_interval(std::mt19937_64& rng) {
    return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

}  // namespace aloe_apps

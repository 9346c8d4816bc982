#include "noise_injector.hpp"

#include "process_setup.hpp"

#include <pthread.h>
#include <sched.h>

#include <chrono>
#include <cstring>
#include <iostream>
#include <stdexcept>

namespace aloe_apps {

struct noise_injector::injector {
    int cpu = 0;
    std::counting_semaphore<1 << 20> go{0};  // one release per event
    std::atomic<bool> stop{false};
    std::atomic<std::int64_t> pending{0};   // events posted and not yet finished
    std::atomic<std::int64_t> spun_ns{0};
    std::thread thread;
};

noise_injector::noise_injector(const noise_options& options, const std::vector<int>& cpus)
    : options_(options), rng_(options.seed) {
    if (!(options.probability >= 0 && options.probability <= 1))
        throw std::invalid_argument("--noise-p must be in [0, 1]");
    if (!(options.length_us > 0 && options.length_us <= 1e6))
        throw std::invalid_argument("--noise-us must be in (0, 1000000]");
    if (!(options.delay_us >= 0 && options.delay_us <= 1e6))
        throw std::invalid_argument("--noise-delay-us must be in [0, 1000000]");
    if (options.fixed_cpu >= static_cast<int>(cpus.size()))
        throw std::invalid_argument("--noise-core " + std::to_string(options.fixed_cpu) + " is not a thread of the team (0.." +
                                    std::to_string(cpus.size() - 1) + ")");
    priority_ = "fifo";
    for (const int cpu : cpus) {
        auto inj = std::make_unique<injector>();
        inj->cpu = cpu;
        injector* raw = inj.get();
        inj->thread = std::thread([this, raw] {
            if (!pin_current_thread(raw->cpu))
                std::cerr << "noise: cannot pin the injector to CPU " << raw->cpu << "; it runs unpinned\n";
            for (;;) {
                raw->go.acquire();
                if (raw->stop.load()) return;
                spin(*raw);
            }
        });
        // Real-time priority so the event takes the CPU for the whole δ (bounded: δ ≤ 1 s,
        // and the kernel's RT throttling leaves 5% to others in any case).
        sched_param param{};
        param.sched_priority = 1;
        if (const int err = pthread_setschedparam(inj->thread.native_handle(), SCHED_FIFO, &param); err != 0) {
            priority_ = std::string("normal (SCHED_FIFO refused: ") + std::strerror(err) + ")";
        }
        injectors_.push_back(std::move(inj));
    }
    if (priority_ != "fifo") {
        std::cerr << "noise: injectors run at " << priority_
                  << "; the kernel shares the CPU, so a worker loses about half of each delta\n";
    }
}

noise_injector::~noise_injector() {
    for (auto& inj : injectors_) {
        inj->stop.store(true);
        inj->go.release();
    }
    for (auto& inj : injectors_) inj->thread.join();
}

void noise_injector::spin(injector& inj) {
    using clock = std::chrono::steady_clock;
    // Sleep through the delay: the CPU stays with the worker until the event starts.
    if (options_.delay_us > 0)
        std::this_thread::sleep_for(std::chrono::nanoseconds(static_cast<std::int64_t>(options_.delay_us * 1e3)));
    const auto start = clock::now();
    const auto until = start + std::chrono::nanoseconds(static_cast<std::int64_t>(options_.length_us * 1e3));
    auto now = start;
    while (now < until) now = clock::now();
    inj.spun_ns.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(now - start).count());
    inj.pending.fetch_sub(1);
}

void noise_injector::at_step_start() {
    // Two draws per step whatever happens, so step k's event does not depend on earlier hits.
    const double u = unit_interval(rng_);
    const std::uint64_t pick = rng_();
    if (u >= options_.probability) return;
    const std::size_t index = options_.fixed_cpu >= 0 ? static_cast<std::size_t>(options_.fixed_cpu)
                                                      : static_cast<std::size_t>(pick % injectors_.size());
    injector& inj = *injectors_[index];
    ++events_;
    inj.pending.fetch_add(1);
    inj.go.release();
}

double noise_injector::injected_seconds() {
    for (auto& inj : injectors_)
        while (inj->pending.load() > 0) std::this_thread::yield();
    std::int64_t ns = 0;
    for (auto& inj : injectors_) ns += inj->spun_ns.load();
    return static_cast<double>(ns) * 1e-9;
}

}  // namespace aloe_apps

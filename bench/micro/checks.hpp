// The checks around the measurement: how busy the machine was (other processes, hypervisor
// steal), how long each runtime's workers spin after a loop (which sets the settle time), and
// where each runtime's threads ran after a sleep (placement).
#pragma once

#include <functional>
#include <vector>

namespace aloe_overhead {

// ---------------------------------------------------------------------------------------
// The machine's state (other processes)

/// System-wide CPU time, seconds summed over CPUs, from the kernel's "cpu" line.
struct cpu_times {
    double busy = 0, steal = 0, total = 0;
};

cpu_times read_cpu_times();

/// Share of the machine's CPU time that other processes used between `a` and `b` (this
/// process used `own_s` of it), and the share the hypervisor stole.
struct other_load {
    double others = 0, steal = 0;
};

other_load load_between(const cpu_times& a, const cpu_times& b, double own_s);

/// Above this share of the CPU time used by other processes, the results say the machine
/// was not quiet.
constexpr double quiet_limit = 0.05;

// ---------------------------------------------------------------------------------------
// Idle spinning: how long each runtime's workers burn a core after a loop

/// CPU time (µs per worker) the workers use in the `window_us` after one construct: the
/// length of their spin (and yield) phase before they sleep.
double idle_spin_us(const std::function<void()>& construct, int threads, double window_us, int tries);

// ---------------------------------------------------------------------------------------
// Placement: do a runtime's threads share a CPU in the loops after they slept?

/// Share of loops in which the team's threads ran on fewer CPUs than they could have: after
/// a sleep of `pause_us` (all workers asleep), `loops` back-to-back loops of one iteration per
/// thread, each recording the CPU it ran on; `rounds` times.
double shared_cpu_share(const std::function<void(std::vector<int>&)>& loop, int threads, double pause_us, int rounds,
                        int loops);

}  // namespace aloe_overhead

// Profiles the simulator's tests build by hand: a quiet machine, and one whose core 0 is hit
// by exactly the events given (a trace replayed from time 0).
#pragma once

#include "sim/machine_profile.hpp"

#include <utility>
#include <vector>

namespace aloe::sim::testing {

inline machine_profile quiet_profile(int cores, std::int64_t iterations, double iteration_s) {
    machine_profile p;
    p.name = "test";
    p.cores = cores;
    p.iterations = iterations;
    p.iteration_s = iteration_s;
    p.collective = machine_profile::collective_kind::none;
    return p;
}

/// Poisson events at `rate_hz` per core, lengths of `mean_s` (fixed or exponential).
inline noise_source poisson(double rate_hz, double mean_s, length_distribution::kind shape) {
    noise_source n;
    n.type = noise_source::kind::poisson;
    n.rate_hz = rate_hz;
    n.length.shape = shape;
    n.length.mean_s = mean_s;
    return n;
}

/// A slow core (`core`) or slow nodes (`fraction` of them), `factor` times slower.
inline noise_source slow(noise_source::kind kind, double factor, int core = 0, double fraction = 0) {
    noise_source n;
    n.type = kind;
    n.factor = factor;
    n.core = core;
    n.fraction = fraction;
    return n;
}

/// Core 0 of node 0 sees `events` (start, length in seconds); every other core sees none.
inline machine_profile profile_with_events(int cores, std::int64_t iterations, double iteration_s,
                                           std::vector<std::pair<double, double>> events, double measured_s = 1e6) {
    machine_profile p = quiet_profile(cores, iterations, iteration_s);
    noise_source t;
    t.type = noise_source::kind::trace;
    t.trace_offsets = false;  // core c of node n replays CPU n·cores + c from time 0
    for (int c = 0; c < cores; ++c) {
        noise_source::cpu_trace ct;
        ct.measured_s = measured_s;
        if (c == 0)
            for (const auto& [start, length] : events) ct.events_us.emplace_back(start * 1e6, length * 1e6);
        t.traces.push_back(ct);
    }
    p.noise.push_back(t);
    return p;
}

}  // namespace aloe::sim::testing

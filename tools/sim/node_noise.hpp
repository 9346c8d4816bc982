// The noise one node's cores see, and how a busy core is delayed by it.
//
// Each core has one event stream per event source of the profile (Poisson, periodic,
// trace replay), drawn on demand from its own random stream, plus events injected for one
// step (the workloads' per-step injector). An event that starts while its core
// is busy delays the core by the event's length (events that start during an event add up);
// one that starts while the core idles (waiting at the join or the collective) costs
// nothing: the daemon ran in time nobody needed. That is the model the FWQ measurement and
// Kale's thesis both assume; a long event that starts just before the core gets work and
// overlaps it is the one case it misses (docs/sim.md, "Exactness").
#pragma once

#include "sim/machine_profile.hpp"
#include "sim/random_stream.hpp"

#include <cstdint>
#include <limits>
#include <vector>

namespace aloe::sim {

inline constexpr double never = std::numeric_limits<double>::infinity();

/// What a run of work units did: how many units were claimed and when the core is free.
struct busy_result {
    std::int64_t units = 0;
    double free_at = 0;
};

class node_noise {
public:
    /// The streams of node `node` with `cores` cores; `seed` the simulation's.
    node_noise(const machine_profile& profile, int cores, std::uint64_t seed, std::uint64_t node);

    /// The next event of `core` not yet consumed (never: none).
    double next_start(int core) const noexcept { return cores_[core].next_start; }
    /// Drops the events of `core` that start before `t` (they fell in idle time).
    void skip_before(int core, double t);
    /// Adds one event to `core` (kept in start order with the others).
    void inject(int core, double start, double length);

    /// `core`, free at `t`, claims units of `unit_s` seconds of work back to back, at most
    /// `max_units`, each claimed only when it starts at or before `claim_limit`. Events that
    /// start while it works delay it.
    busy_result run_units(int core, double t, double unit_s, std::int64_t max_units, double claim_limit);
    /// One piece of work of `work_s` from `t`: the time the core is free again (run_units
    /// with one unit, without its arithmetic for many: the per-claim path calls this).
    double run(int core, double t, double work_s) {
        skip_before(core, t);
        double end = t + work_s;
        while (next_start(core) < end) {
            end += take(core);
            ++events_;
        }
        return end;
    }

    /// Asks for this node's first lines of state ahead of use (the simulation visits nodes in
    /// order; at 100,000 nodes their state is far larger than the caches).
    void prefetch() const noexcept {
        __builtin_prefetch(cores_.data());
        __builtin_prefetch(streams_.data());
        __builtin_prefetch(reinterpret_cast<const char*>(streams_.data()) + 64);
    }

    /// Events consumed as delays so far (for the events/s figure).
    std::uint64_t events() const noexcept { return events_; }

private:
    struct stream {
        const noise_source* source = nullptr;
        random_stream draws;
        double next = never, length = 0;
        double base = 0;            // trace: start of the current pass through the trace
        std::uint32_t index = 0;    // trace: next event; periodic: periods so far
        std::uint32_t trace = 0;    // trace: which CPU's trace
        double phase = 0;           // periodic: first event; trace: offset into the trace
    };
    struct core_state {
        double next_start = never;  // min over its streams and injected events
        std::uint32_t first = 0, count = 0;  // its streams in streams_
    };
    struct injected {
        int core;
        double start, length;
    };
    void draw(stream& s);
    double take(int core);          // the length of core's next event; advances past it
    void refresh(int core) noexcept;

    std::vector<stream> streams_;
    std::vector<core_state> cores_;
    std::vector<injected> injected_;  // few at a time; sorted by start
    std::uint64_t events_ = 0;
};

/// One draw of a length distribution.
double draw_length(const length_distribution& d, random_stream& r) noexcept;

}  // namespace aloe::sim

#include "sim/node_noise.hpp"

#include <algorithm>
#include <cmath>

namespace aloe::sim {

double draw_length(const length_distribution& d, random_stream& r) noexcept {
    switch (d.shape) {
        case length_distribution::kind::fixed: return d.mean_s;
        case length_distribution::kind::exponential: return r.exponential(d.mean_s);
        case length_distribution::kind::lognormal:
            // mean = exp(μ + σ²/2), so μ = ln(mean) − σ²/2.
            return d.mean_s > 0 ? std::exp(std::log(d.mean_s) - 0.5 * d.sigma * d.sigma + d.sigma * r.normal()) : 0;
        case length_distribution::kind::bimodal: return r.uniform() < d.long_fraction ? d.long_s : d.short_s;
        case length_distribution::kind::pareto: {
            // Pareto(x_m, α) has mean α·x_m/(α−1).
            const double xm = d.mean_s * (d.alpha - 1) / d.alpha;
            return xm * std::pow(r.open_uniform(), -1.0 / d.alpha);
        }
    }
    return 0;
}

node_noise::node_noise(const machine_profile& profile, int cores, std::uint64_t seed, std::uint64_t node)
    : cores_(static_cast<std::size_t>(cores)) {
    for (int c = 0; c < cores; ++c) {
        core_state& cs = cores_[static_cast<std::size_t>(c)];
        cs.first = static_cast<std::uint32_t>(streams_.size());
        std::uint64_t purpose = 0;
        for (const noise_source& src : profile.noise) {
            ++purpose;
            const bool events = src.type == noise_source::kind::poisson || src.type == noise_source::kind::periodic ||
                                src.type == noise_source::kind::trace;
            if (!events) continue;
            if (!src.cores.empty() && std::find(src.cores.begin(), src.cores.end(), c) == src.cores.end()) continue;
            stream s;
            s.source = &src;
            s.draws = random_stream(seed, node, static_cast<std::uint64_t>(c), purpose);
            if (src.type == noise_source::kind::periodic) {
                s.phase = src.aligned ? 0.0 : s.draws.uniform() * src.period_s;
            } else if (src.type == noise_source::kind::trace) {
                const std::uint64_t cpu = node * static_cast<std::uint64_t>(cores) + static_cast<std::uint64_t>(c);
                s.trace = static_cast<std::uint32_t>(cpu % src.traces.size());
                const auto& t = src.traces[s.trace];
                s.phase = src.trace_offsets ? s.draws.uniform() * t.measured_s : 0.0;
                // Start at the first event at or after the offset.
                const auto it = std::lower_bound(t.events_us.begin(), t.events_us.end(), std::make_pair(s.phase * 1e6, -1.0));
                s.index = static_cast<std::uint32_t>(it - t.events_us.begin());
                s.base = -s.phase;
            }
            draw(s);
            streams_.push_back(s);
        }
        cs.count = static_cast<std::uint32_t>(streams_.size()) - cs.first;
        refresh(c);
    }
}

void node_noise::draw(stream& s) {
    const noise_source& src = *s.source;
    switch (src.type) {
        case noise_source::kind::poisson:
            s.next = src.rate_hz > 0 ? (s.next == never ? 0.0 : s.next) + s.draws.exponential(1.0 / src.rate_hz) : never;
            s.length = draw_length(src.length, s.draws);
            break;
        case noise_source::kind::periodic:
            s.next = s.phase + static_cast<double>(s.index++) * src.period_s;
            s.length = draw_length(src.length, s.draws);
            break;
        case noise_source::kind::trace: {
            const auto& t = src.traces[s.trace];
            if (t.events_us.empty()) {
                s.next = never;
                break;
            }
            if (s.index >= t.events_us.size()) {  // wrap: the trace repeats
                s.index = 0;
                s.base += t.measured_s;
            }
            s.next = s.base + t.events_us[s.index].first * 1e-6;
            s.length = t.events_us[s.index].second * 1e-6;
            ++s.index;
            break;
        }
        default: s.next = never; break;
    }
}

void node_noise::refresh(int core) noexcept {
    core_state& cs = cores_[static_cast<std::size_t>(core)];
    if (injected_.empty() && cs.count == 1) {  // the common case: one source, nothing injected
        cs.next_start = streams_[cs.first].next;
        return;
    }
    double m = never;
    for (std::uint32_t i = cs.first; i < cs.first + cs.count; ++i) m = std::min(m, streams_[i].next);
    for (const injected& e : injected_)
        if (e.core == core) {
            m = std::min(m, e.start);
            break;  // sorted by start: the first of this core's is its earliest
        }
    cs.next_start = m;
}

double node_noise::take(int core) {
    core_state& cs = cores_[static_cast<std::size_t>(core)];
    const double at = cs.next_start;
    double length = 0;
    bool found = false;
    if (!injected_.empty())
      for (auto it = injected_.begin(); it != injected_.end(); ++it)
        if (it->core == core && it->start == at) {
            length = it->length;
            injected_.erase(it);
            found = true;
            break;
        }
    if (!found)
        for (std::uint32_t i = cs.first; i < cs.first + cs.count; ++i)
            if (streams_[i].next == at) {
                length = streams_[i].length;
                draw(streams_[i]);
                break;
            }
    refresh(core);
    return length;
}

void node_noise::skip_before(int core, double t) {
    while (cores_[static_cast<std::size_t>(core)].next_start < t) take(core);
}

void node_noise::inject(int core, double start, double length) {
    const auto at = std::upper_bound(injected_.begin(), injected_.end(), start,
                                     [](double s, const injected& e) { return s < e.start; });
    injected_.insert(at, injected{core, start, length});
    refresh(core);
}

busy_result node_noise::run_units(int core, double t, double unit_s, std::int64_t max_units, double claim_limit) {
    skip_before(core, t);
    busy_result r{0, t};
    double s = t;  // start of the next unit
    while (r.units < max_units && s <= claim_limit) {
        // Units that start at or before the limit, as many as are left.
        std::int64_t fit = max_units - r.units;
        if (claim_limit != never && unit_s > 0) {
            const double whole = std::floor((claim_limit - s) / unit_s) + 1;
            if (whole < static_cast<double>(fit)) fit = static_cast<std::int64_t>(whole);
        }
        const double e = next_start(core);
        const double quiet_end = s + static_cast<double>(fit) * unit_s;
        if (!(e < quiet_end)) {  // no event before these units end
            r.units += fit;
            s = quiet_end;
            break;
        }
        // The event falls in unit u (counted from s); units before it run undisturbed.
        std::int64_t u = unit_s > 0 ? static_cast<std::int64_t>((e - s) / unit_s) : 0;
        u = std::clamp<std::int64_t>(u, 0, fit - 1);
        double end = s + static_cast<double>(u + 1) * unit_s;
        while (next_start(core) < end) {  // events during the unit (or its delays) add up
            end += take(core);
            ++events_;
        }
        r.units += u + 1;
        s = end;
    }
    r.free_at = s;
    return r;
}

}  // namespace aloe::sim

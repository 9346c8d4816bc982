#include "sim/node_loop.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace aloe::sim {
namespace {

// The core free first (lowest index on a tie): who takes the next chunk from a shared counter.
int first_free(std::span<const double> free) noexcept {
    int best = 0;
    for (int c = 1; c < static_cast<int>(free.size()); ++c)
        if (free[static_cast<std::size_t>(c)] < free[static_cast<std::size_t>(best)]) best = c;
    return best;
}

double latest(std::span<const double> free) noexcept { return *std::max_element(free.begin(), free.end()); }

}  // namespace

void weighted_bounds(std::int64_t count, std::span<const double> weights, std::span<std::int64_t> bounds) {
    const std::size_t p = weights.size();
    const double sum = std::accumulate(weights.begin(), weights.end(), 0.0);
    std::vector<std::int64_t> share(p);
    std::vector<std::pair<double, std::size_t>> rest(p);
    std::int64_t given = 0;
    for (std::size_t t = 0; t < p; ++t) {
        const double exact = sum > 0 ? static_cast<double>(count) * weights[t] / sum : static_cast<double>(count) / static_cast<double>(p);
        share[t] = static_cast<std::int64_t>(std::floor(exact));
        given += share[t];
        rest[t] = {exact - static_cast<double>(share[t]), t};
    }
    std::sort(rest.begin(), rest.end(), [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); });
    for (std::size_t i = 0; given < count; ++i, ++given) ++share[rest[i % p].second];
    bounds[0] = 0;
    for (std::size_t t = 0; t < p; ++t) bounds[t + 1] = bounds[t] + share[t];
}

node_loop::node_loop(const machine_profile& profile, const iteration_costs& costs, int cores)
    : profile_(profile), costs_(costs), p_(cores) {
    q_ = profile.dequeue_s + profile.dequeue_per_thread_s * (cores - 1);
    pool_penalty_ = 1 + profile.locality_penalty * (1 - 1.0 / cores);
}

double node_loop::run(const step_plan& plan, node_noise& noise, std::span<const double> speed, double start,
                      node_memory& memory, loop_tally& tally) const {
    const std::int64_t n = costs_.size();
    const auto p = static_cast<std::size_t>(p_);
    thread_local std::vector<double> free;
    free.assign(p, start + profile_.fork_join_s);
    // Each core's static time and iterations: what weighted's next weights come from.
    const bool keep_static = plan.weighted;
    if (keep_static) {
        memory.static_s.assign(p, 0.0);
        memory.static_its.assign(p, 0);
        if (memory.weights.size() != p) memory.weights.assign(p, 1.0);
    }

    // The static part: one block per core (equal or weighted), or round-robin chunks.
    const bool has_dynamic = plan.type != step_plan::kind::blocks && plan.type != step_plan::kind::cyclic;
    const double fs = has_dynamic ? std::clamp(plan.fs, 0.0, 1.0) : 1.0;
    const auto static_count = static_cast<std::int64_t>(std::floor(fs * static_cast<double>(n)));
    if (plan.type == step_plan::kind::staggered) {
        std::vector<std::int64_t> lo(p), hi(p);
        // Own block = static's (or weighted) block of the whole loop; its first fs runs statically.
        std::vector<std::int64_t> b(p + 1);
        if (plan.weighted) {
            weighted_bounds(n, memory.weights, b);
        } else {
            for (std::size_t t = 0; t < p; ++t) block_of(static_cast<std::int64_t>(t), n, p_, b[t], b[t + 1]);
        }
        for (std::size_t t = 0; t < p; ++t) {
            lo[t] = b[t];
            hi[t] = b[t] + static_cast<std::int64_t>(std::floor(fs * static_cast<double>(b[t + 1] - b[t])));
        }
        for (std::size_t t = 0; t < p; ++t) {
            const double work = costs_.sum(lo[t], hi[t]) * speed[t];
            free[t] = noise.run(static_cast<int>(t), free[t], work);
            tally.busy_s += work;
            if (keep_static) {
                memory.static_s[t] = free[t] - start;
                memory.static_its[t] = hi[t] - lo[t];
            }
        }
        std::vector<std::int64_t> qlo(p), qhi(p);
        for (std::size_t t = 0; t < p; ++t) {
            qlo[t] = hi[t];
            qhi[t] = b[t + 1];
        }
        return run_staggered(qlo, qhi, std::max<std::int64_t>(plan.chunk, 1), free, noise, speed, tally);
    }
    if (plan.type == step_plan::kind::cyclic) {
        const std::int64_t c = std::max<std::int64_t>(plan.chunk, 1);
        for (std::size_t t = 0; t < p; ++t) {
            double work = 0;
            std::int64_t its = 0;
            if (costs_.uniform()) {
                const std::int64_t chunks = (n + c - 1) / c;
                const std::int64_t mine = chunks / p_ + (static_cast<std::int64_t>(t) < chunks % p_ ? 1 : 0);
                its = mine * c;
                // The last chunk may be short and belongs to thread (chunks−1) mod p.
                if (mine > 0 && static_cast<std::int64_t>(t) == (chunks - 1) % p_) its -= chunks * c - n;
                work = costs_.sum(0, its);
            } else {
                for (std::int64_t j = static_cast<std::int64_t>(t) * c; j < n; j += c * p_) {
                    work += costs_.sum(j, std::min(n, j + c));
                    its += std::min(n, j + c) - j;
                }
            }
            work *= speed[t];
            free[t] = noise.run(static_cast<int>(t), free[t], work);
            tally.busy_s += work;
            if (keep_static) {
                memory.static_s[t] = free[t] - start;
                memory.static_its[t] = its;
            }
        }
        return latest(free);
    }
    thread_local std::vector<std::int64_t> b;
    b.assign(p + 1, 0);
    if (plan.weighted) {
        weighted_bounds(static_count, memory.weights, b);
    } else {
        for (std::size_t t = 0; t < p; ++t) block_of(static_cast<std::int64_t>(t), static_count, p_, b[t], b[t + 1]);
    }
    for (std::size_t t = 0; t < p; ++t) {
        const double work = costs_.sum(b[t], b[t + 1]) * speed[t];
        free[t] = noise.run(static_cast<int>(t), free[t], work);
        tally.busy_s += work;
        if (keep_static) {
            memory.static_s[t] = free[t] - start;
            memory.static_its[t] = b[t + 1] - b[t];
        }
    }
    switch (plan.type) {
        case step_plan::kind::pool:
            return run_pool(static_count, std::max<std::int64_t>(plan.chunk, 1), free, noise, speed, tally);
        case step_plan::kind::guided:
            return run_guided(static_count, std::max<std::int64_t>(plan.chunk, 1), std::max<std::int64_t>(plan.divisor, 1),
                              free, noise, speed, tally);
        case step_plan::kind::tasklets: return run_tasklets(static_count, plan, free, noise, speed, memory, tally);
        default: return latest(free);
    }
}

double node_loop::run_pool(std::int64_t from, std::int64_t chunk, std::span<double> free, node_noise& noise,
                           std::span<const double> speed, loop_tally& tally) const {
    const std::int64_t n = costs_.size();
    if (from >= n) return latest(free);
    std::int64_t next = from;  // the shared counter
    const std::int64_t full_chunks = (n - from) / chunk;
    if (costs_.uniform() && full_chunks > 3 * static_cast<std::int64_t>(p_)) {
        // Identical chunks: while the pool lasts, each core claims whenever it is free,
        // whatever the others do. Advance every core over the claims it makes before a time
        // T by which all of them together claim at most full_chunks − p (noise only delays a
        // core, so the noise-free count bounds it), then go claim by claim.
        const double base = static_cast<double>(chunk) * costs_.mean();
        thread_local std::vector<double> unit;
        unit.resize(static_cast<std::size_t>(p_));
        for (int c = 0; c < p_; ++c) unit[static_cast<std::size_t>(c)] = q_ + base * speed[static_cast<std::size_t>(c)] * pool_penalty_;
        // Each core makes at most one claim more than its fluid share by T: p in all, so the
        // pool is not exhausted before T (greedy would make the very same claims).
        const double target = static_cast<double>(full_chunks - p_);
        // T with Σ over the cores free before T of (T − f_c)/u_c = target: all cores first,
        // then without any that is free only after T (rare: the static parts end together).
        thread_local std::vector<char> in;
        in.assign(static_cast<std::size_t>(p_), 1);
        double t = 0;
        for (bool changed = true; changed;) {
            double rate = 0, offset = 0;
            for (int c = 0; c < p_; ++c)
                if (in[static_cast<std::size_t>(c)]) {
                    rate += 1 / unit[static_cast<std::size_t>(c)];
                    offset += free[static_cast<std::size_t>(c)] / unit[static_cast<std::size_t>(c)];
                }
            t = (target + offset) / rate;
            changed = false;
            for (int c = 0; c < p_; ++c)
                if (in[static_cast<std::size_t>(c)] && free[static_cast<std::size_t>(c)] > t) in[static_cast<std::size_t>(c)] = 0, changed = true;
        }
        std::int64_t left = full_chunks;
        for (int c = 0; c < p_; ++c) {
            const auto cs = static_cast<std::size_t>(c);
            if (free[cs] > t) continue;
            const busy_result r = noise.run_units(c, free[cs], unit[cs], left, t);
            free[cs] = r.free_at;
            left -= r.units;
            next += r.units * chunk;
            tally.busy_s += static_cast<double>(r.units) * (unit[cs] - q_);
            tally.schedule_s += static_cast<double>(r.units) * q_;
            tally.claims += r.units;
        }
    }
    thread_local std::vector<std::pair<double, int>> by_free;  // (free time, core): ties to the lower index, as first_free
    while (next < n) {
        // The last few chunks: when the k-th earliest core is free before any core that takes
        // a chunk could be free again, the k earliest cores take one each, in order (what
        // greedy claim by claim does), and the loop is done.
        const std::int64_t k = (n - next + chunk - 1) / chunk;
        if (k <= p_) {
            by_free.resize(static_cast<std::size_t>(p_));
            for (int c = 0; c < p_; ++c) by_free[static_cast<std::size_t>(c)] = {free[static_cast<std::size_t>(c)], c};
            std::sort(by_free.begin(), by_free.end());
            double cheapest = never, fastest_factor = never;
            for (int c = 0; c < p_; ++c) fastest_factor = std::min(fastest_factor, speed[static_cast<std::size_t>(c)]);
            for (std::int64_t j = next; j < n; j += chunk) cheapest = std::min(cheapest, costs_.sum(j, std::min(n, j + chunk)));
            const double earliest_again = by_free[0].first + q_ + cheapest * fastest_factor * pool_penalty_;
            if (by_free[static_cast<std::size_t>(k - 1)].first < earliest_again) {
                for (std::int64_t j = 0; j < k; ++j, next = std::min(n, next + chunk))
                    claim_from_pool(by_free[static_cast<std::size_t>(j)].second, next, std::min(n, next + chunk), free, noise, speed, tally);
                break;
            }
        }
        const std::int64_t end = std::min(n, next + chunk);
        claim_from_pool(first_free(free), next, end, free, noise, speed, tally);
        next = end;
    }
    // Each core also finds the counter empty once: one more claim's cost, after its last chunk.
    for (int c = 0; c < p_; ++c) free[static_cast<std::size_t>(c)] += q_;
    tally.schedule_s += q_ * p_;
    return latest(free);
}

void node_loop::claim_from_pool(int c, std::int64_t lo, std::int64_t hi, std::span<double> free, node_noise& noise,
                                std::span<const double> speed, loop_tally& tally) const {
    const auto cs = static_cast<std::size_t>(c);
    const double work = costs_.sum(lo, hi) * speed[cs] * pool_penalty_;
    free[cs] = noise.run(c, free[cs], q_ + work);
    tally.busy_s += work;
    tally.schedule_s += q_;
    ++tally.claims;
}

double node_loop::run_guided(std::int64_t from, std::int64_t chunk, std::int64_t divisor, std::span<double> free,
                             node_noise& noise, std::span<const double> speed, loop_tally& tally) const {
    const std::int64_t n = costs_.size();
    std::int64_t next = from;
    while (next < n) {
        const std::int64_t left = n - next;
        const std::int64_t size = std::min(left, std::max(chunk, (left + divisor * p_ - 1) / (divisor * p_)));
        claim_from_pool(first_free(free), next, next + size, free, noise, speed, tally);
        next += size;
    }
    for (int c = 0; c < p_; ++c) free[static_cast<std::size_t>(c)] += q_;
    tally.schedule_s += q_ * p_;
    return latest(free);
}

double node_loop::run_staggered(std::span<const std::int64_t> lo, std::span<const std::int64_t> hi, std::int64_t chunk,
                                std::span<double> free, node_noise& noise, std::span<const double> speed,
                                loop_tally& tally) const {
    const auto p = static_cast<std::size_t>(p_);
    const double own_claim = profile_.dequeue_s;  // an own queue's counter: uncontended
    std::vector<std::int64_t> next(lo.begin(), lo.end());
    const auto left = [&](std::size_t t) { return (hi[t] - next[t] + chunk - 1) / chunk; };
    std::vector<bool> finished(p, false);
    // Owners claim their own chunks; nobody can take one of them before some core runs dry.
    // `advance(t, limit)`: owner t's claims that start at or before `limit`.
    const auto advance = [&](std::size_t t, double limit) {
        if (costs_.uniform()) {
            const std::int64_t whole = (hi[t] - next[t]) / chunk;  // the short last chunk goes alone
            const double unit = own_claim + static_cast<double>(chunk) * costs_.mean() * speed[t];
            const busy_result r = noise.run_units(static_cast<int>(t), free[t], unit, whole, limit);
            free[t] = r.free_at;
            next[t] += r.units * chunk;
            tally.busy_s += static_cast<double>(r.units) * (unit - own_claim);
            tally.schedule_s += static_cast<double>(r.units) * own_claim;
            tally.claims += r.units;
            if (r.units < whole) return;
        }
        while (next[t] < hi[t] && free[t] <= limit) {
            const std::int64_t end = std::min(hi[t], next[t] + chunk);
            const double work = costs_.sum(next[t], end) * speed[t];
            free[t] = noise.run(static_cast<int>(t), free[t], own_claim + work);
            tally.busy_s += work;
            tally.schedule_s += own_claim;
            ++tally.claims;
            next[t] = end;
        }
    };
    while (true) {
        // The earliest a queue could run dry (no noise), and the earliest idle core.
        double dry = never, thief_at = never;
        std::size_t thief = p;
        for (std::size_t t = 0; t < p; ++t) {
            if (finished[t]) continue;
            if (next[t] < hi[t]) {
                dry = std::min(dry, free[t] + static_cast<double>(left(t)) * (own_claim + static_cast<double>(chunk) * costs_.mean() * speed[t]));
            } else if (free[t] < thief_at) {
                thief_at = free[t];
                thief = t;
            }
        }
        if (thief == p && dry == never) break;
        const double horizon = std::min(dry, thief_at);
        for (std::size_t t = 0; t < p; ++t)
            if (!finished[t] && next[t] < hi[t]) advance(t, horizon);
        if (thief == p || thief_at > horizon) continue;  // an owner may have run dry: look again
        // The thief looks at t−d and t+d, d = 1, 2, …, and takes from the one with more left.
        std::size_t victim = p;
        for (std::size_t d = 1; d < p && victim == p; ++d) {
            const std::int64_t a = thief >= d ? left(thief - d) : 0, b = thief + d < p ? left(thief + d) : 0;
            if (a == 0 && b == 0) continue;
            victim = a >= b ? thief - d : thief + d;
        }
        if (victim == p) {
            finished[thief] = true;  // every queue is empty
            continue;
        }
        const std::int64_t end = std::min(hi[victim], next[victim] + chunk);
        const double work = costs_.sum(next[victim], end) * speed[thief] * (1 + profile_.locality_penalty);
        next[victim] = end;
        free[thief] = noise.run(static_cast<int>(thief), free[thief], profile_.steal_s + work);
        tally.busy_s += work;
        tally.schedule_s += profile_.steal_s;
        ++tally.claims;
        ++tally.steals;
    }
    return latest(free);
}

double node_loop::run_tasklets(std::int64_t from, const step_plan& plan, std::span<double> free, node_noise& noise,
                               std::span<const double> speed, node_memory& memory, loop_tally& tally) const {
    const std::int64_t n = costs_.size();
    const std::int64_t dynamic = n - from;
    if (dynamic <= 0) return latest(free);
    const std::int64_t k = std::clamp<std::int64_t>(plan.tasklets, 1, dynamic);
    // Sizes: uniform, or falling geometrically so the first is `skew` times the last.
    std::vector<std::int64_t> bounds(static_cast<std::size_t>(k) + 1, from);
    {
        std::vector<double> w(static_cast<std::size_t>(k));
        const double r = k > 1 ? std::pow(std::max(plan.skew, 1.0), -1.0 / static_cast<double>(k - 1)) : 1.0;
        double sum = 0;
        for (std::size_t j = 0; j < w.size(); ++j) sum += (w[j] = std::pow(r, static_cast<double>(j)));
        double acc = 0;
        for (std::size_t j = 0; j < w.size(); ++j) {
            acc += w[j];
            bounds[j + 1] = from + static_cast<std::int64_t>(std::llround(acc / sum * static_cast<double>(dynamic)));
        }
        // Every tasklet at least one iteration: k <= dynamic makes that possible.
        for (std::size_t j = 1; j < bounds.size(); ++j) bounds[j] = std::max(bounds[j], bounds[j - 1] + 1);
        bounds.back() = n;
        for (std::size_t j = bounds.size() - 1; j > 0; --j) bounds[j - 1] = std::min(bounds[j - 1], bounds[j] - 1);
    }
    if (memory.tags.size() != static_cast<std::size_t>(k)) {
        memory.tags.resize(static_cast<std::size_t>(k));
        for (std::int64_t j = 0; j < k; ++j) memory.tags[static_cast<std::size_t>(j)] = static_cast<std::uint16_t>(j * p_ / k);
    }
    std::vector<bool> taken(static_cast<std::size_t>(k), false);
    std::vector<std::size_t> own_cursor(static_cast<std::size_t>(p_), 0);
    std::size_t shared_cursor = 0;
    std::int64_t remaining = k;
    const std::vector<std::uint16_t> tags = memory.tags;  // this step's tags: last step's runners
    while (remaining > 0) {
        const int c = first_free(free);
        const auto cs = static_cast<std::size_t>(c);
        std::size_t pick = taken.size();
        if (plan.locality) {
            for (std::size_t& j = own_cursor[cs]; j < taken.size(); ++j)
                if (!taken[j] && tags[j] == c) {
                    pick = j;
                    break;
                }
        }
        if (pick == taken.size()) {
            while (shared_cursor < taken.size() && taken[shared_cursor]) ++shared_cursor;
            pick = shared_cursor;
        }
        taken[pick] = true;
        --remaining;
        const bool moved = tags[pick] != c;
        const double work = costs_.sum(bounds[pick], bounds[pick + 1]) * speed[cs] * (moved ? 1 + profile_.locality_penalty : 1.0);
        free[cs] = noise.run(c, free[cs], q_ + work);
        memory.tags[pick] = static_cast<std::uint16_t>(c);
        tally.busy_s += work;
        tally.schedule_s += q_;
        ++tally.claims;
        if (moved && plan.locality) ++tally.steals;
    }
    return latest(free);
}

}  // namespace aloe::sim

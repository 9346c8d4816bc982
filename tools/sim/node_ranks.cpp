#include "sim/node_ranks.hpp"

#include "sim/node_loop.hpp"
#include "sim/rank_sizing.hpp"

#include <algorithm>
#include <cmath>

namespace aloe::sim {
namespace {

constexpr std::uint64_t lending_purpose = 0xfc;    // polls, return delays, slices
constexpr std::uint64_t injection_purpose = 0xfb;  // per-rank injected noise

// Work of `work_s` (its noise included) on a core that alternates scheduler slices of
// `slice` between a spinning lender and the thread doing the work, the work's slices
// starting at `phase` (mod 2·slice). slice 0: a fluid half share.
double shared_finish(double t, double work_s, double phase, double slice) {
    if (slice <= 0) return t + 2 * work_s;
    const double period = 2 * slice;
    double x = std::fmod(t - phase, period);
    if (x < 0) x += period;
    while (work_s > 0) {
        if (x < slice) {
            const double run = std::min(work_s, slice - x);
            work_s -= run;
            t += run;
            x += run;
        } else {
            t += period - x;
            x = 0;
        }
    }
    return t;
}

}  // namespace

void ranks_tally::add(const ranks_tally& o) noexcept {
    busy_s += o.busy_s;
    moved_s += o.moved_s;
    schedule_s += o.schedule_s;
    work_s += o.work_s;
    iterations += o.iterations;
    claims += o.claims;
    lends += o.lends;
    sized_steps += o.sized_steps;
    guard_trips += o.guard_trips;
}

node_ranks::node_ranks(const rank_layout& layout, const machine_profile& profile, const lending_policy& policy,
                       const lending_latencies& latencies, std::uint64_t seed, std::uint64_t node, double slow)
    : layout_(layout), profile_(profile), policy_(policy), lat_(latencies),
      slice_s_(busy_slice_s(latencies, layout.cores)),
      noise_(profile, layout.cores, seed, node), draws_(seed, node, 0, lending_purpose),
      injections_(seed, node, 0, injection_purpose), slow_(slow), cores_(static_cast<std::size_t>(layout.cores)),
      ranks_(static_cast<std::size_t>(layout.ranks)), prev_holder_(static_cast<std::size_t>(layout.cores)),
      sized_(static_cast<std::size_t>(layout.ranks)), predicted_work_(static_cast<std::size_t>(layout.ranks)),
      core_due_(static_cast<std::size_t>(layout.cores), never) {
    for (int r = 0; r < layout.ranks; ++r)
        for (int i = 0; i < layout.own_cores[static_cast<std::size_t>(r)]; ++i) {
            const auto c = static_cast<std::size_t>(layout.first_core[static_cast<std::size_t>(r)] + i);
            cores_[c].owner = cores_[c].holder = cores_[c].placed_for = prev_holder_[c] = r;
        }
    heap_.reserve(static_cast<std::size_t>(layout.cores + 4 * layout.ranks + 8));
}

bool node_ranks::polite() const noexcept {
    return policy_.type == lending_policy::kind::reactive || policy_.type == lending_policy::kind::predictive;
}

namespace {
bool later(const node_ranks_event_order& x, const node_ranks_event_order& y) noexcept {
    return x.t > y.t || (x.t == y.t && x.seq > y.seq);
}
}  // namespace

void node_ranks::push(double t, event_kind k, int who) {
    if (k == event_kind::core_free) {  // the common event: one slot per core, found by a scan
        core_due_[static_cast<std::size_t>(who)] = t;
        return;
    }
    heap_.push_back(event{{t, seq_++}, k, who});
    std::push_heap(heap_.begin(), heap_.end(), [](const event& a, const event& b) { return later(a, b); });
}

void node_ranks::run_step(const step_boundary& b) {
    begin_step(b);
    const std::size_t cores = core_due_.size();
    while (arrived_ < layout_.ranks) {
        // The earliest core (the lowest of equals); the other events first at equal times.
        std::size_t due = cores;
        double due_t = never;
        for (std::size_t c = 0; c < cores; ++c)
            if (core_due_[c] < due_t) due_t = core_due_[due = c];
        if (heap_.empty() || heap_.front().t > due_t) {
            if (due == cores) break;
            core_due_[due] = never;
            on_core_free(static_cast<int>(due), due_t);
            continue;
        }
        std::pop_heap(heap_.begin(), heap_.end(), [](const event& x, const event& y) { return later(x, y); });
        const event e = heap_.back();
        heap_.pop_back();
        switch (e.kind) {
            case event_kind::core_free: break;  // kept in core_due_
            case event_kind::region_start: begin_region(e.who, e.t); break;
            case event_kind::notice: {
                rank_state& r = ranks_[static_cast<std::size_t>(e.who)];
                if (r.in_region) r.door = true;  // participant 0 opens at its next claim
                break;
            }
            case event_kind::offer: offer(e.who, e.t); break;
            case event_kind::rebalance: rebalance(e.t); break;
        }
    }
    heap_.clear();
    std::fill(core_due_.begin(), core_due_.end(), never);
    // The phase as it went: what sizing's guard compares with its prediction, and each
    // rank's core-seconds held, next step's predicted work.
    double phase = 0;
    last_arrival_ = 0;
    for (rank_state& r : ranks_) {
        phase = std::max(phase, r.arrival - r.start);
        last_arrival_ = std::max(last_arrival_, r.arrival);
        r.work_last = r.held_step;
        r.busy_before = r.busy_last;
        r.busy_last = r.busy_step;
    }
    ++measured_;
    missed_ = false;
    if (sized_now_) {
        ++tally_.sized_steps;
        const double forks = profile_.fork_join_s * layout_.regions;
        if (phase > (1 + policy_.guard) * (sized_time_s_ + forks)) {
            missed_ = true;
            ++tally_.guard_trips;
        }
    }
}

void node_ranks::count_lends(const step_boundary& b) noexcept {
    if (b.first) return;
    for (const rank_state& r : ranks_)
        if (r.lend_at < b.completion) ++tally_.lends;
}

void node_ranks::begin_step(const step_boundary& b) {
    seq_ = 0;
    arrived_ = 0;
    count_lends(b);
    for (rank_state& r : ranks_) {
        double start = b.completion;
        if (!b.first && r.lend_at < b.completion) {
            // A polite wait (polite_wait.hpp) yields for its first 20 us, then sleeps 20, 40,
            // 80, then 100 us between tests: the collective ends somewhere in the nap.
            const double lent_for = b.completion - r.lend_at;
            if (polite() && lent_for >= 20e-6) {
                const int doublings = std::min(3, static_cast<int>(lent_for / 100e-6));
                const double nap = std::min(lat_.nap_max_s, 20e-6 * static_cast<double>(1u << doublings));
                start += draws_.uniform() * nap;
            }
        }
        r.start = r.arrival = start;
        if (!b.first) {
            // The request after the last call (rank_lending.cpp: ask_after; `ask=critical`, the
            // rule before 2026-11-28: not where the next wait lends at its entry, decided
            // before that call's wait joins the last waits).
            if (policy_.type == lending_policy::kind::reactive) r.requesting = true;
            else if (policy_.type == lending_policy::kind::predictive) {
                const mpi::lending_wait next = wait_before_lending(r);
                r.requesting = mpi::ask_after(lending_rule()) && !(policy_.ask_critical && next.paid && next.after_s <= 0);
            }
            r.waits.observe(b.latest_arrival - r.arrival_last);
        }
        r.lend_at = never;
        r.region = 0;
        r.members = r.active = 0;
        r.in_region = r.door = r.arrived = r.offering = false;
        r.held_step = r.busy_step = 0;
    }
    for (std::size_t c = 0; c < cores_.size(); ++c) {
        core_state& k = cores_[c];
        k.holder = k.owner;
        k.lent_to = k.runner = -1;
        k.guest = false;
        k.block_lo = k.block_hi = 0;
        k.usable_from = ranks_[static_cast<std::size_t>(k.owner)].start;
        if (policy_.type == lending_policy::kind::lewi && policy_.busy_mpi)
            k.slice_phase = draws_.uniform() * 2 * slice_s_;
    }
    sized_now_ = false;
    if (policy_.type == lending_policy::kind::predictive && policy_.sizing != lending_policy::sizing_mode::off)
        size_phase();
    for (std::size_t c = 0; c < cores_.size(); ++c) prev_holder_[c] = cores_[c].holder;
    for (rank_state& r : ranks_) r.held = 0;
    for (const core_state& k : cores_) ++ranks_[static_cast<std::size_t>(k.holder)].held;

    // Injected noise: per rank (the workloads' injector takes one of the rank's own CPUs),
    // and the profile's per-step source (one core of the node).
    for (int r = 0; r < layout_.ranks; ++r) {
        const double p = layout_.noise_p[static_cast<std::size_t>(r)];
        if (p <= 0) continue;
        const rank_state& s = ranks_[static_cast<std::size_t>(r)];
        const bool hit = injections_.uniform() < p;
        const auto own = static_cast<std::uint64_t>(layout_.own_cores[static_cast<std::size_t>(r)]);
        const int core = layout_.first_core[static_cast<std::size_t>(r)] + static_cast<int>(injections_.below(own));
        if (hit) noise_.inject(core, s.start + layout_.noise_delay_s, layout_.noise_s);
    }
    for (const noise_source& n : profile_.noise) {
        if (n.type != noise_source::kind::per_step) continue;
        if (injections_.uniform() < n.probability) {
            const auto c = static_cast<int>(injections_.below(static_cast<std::uint64_t>(layout_.cores)));
            noise_.inject(c, b.completion + n.delay_s, draw_length(n.length, injections_));
        }
    }
    for (int r = 0; r < layout_.ranks; ++r) {
        rank_state& s = ranks_[static_cast<std::size_t>(r)];
        s.region = next_region(r, 0);
        if (s.region == layout_.regions) arrive(r, s.start);
        else push(s.start + profile_.fork_join_s, event_kind::region_start, r);
    }
}

void node_ranks::size_phase() {
    // The guard: back to the plain allocation after a sized step that missed, and while the
    // ranks' work moves between steps (two last values that disagree predict nothing).
    if (missed_ || measured_ < 2) return;
    for (const rank_state& r : ranks_) {
        if (r.busy_before <= 0 && r.busy_last <= 0) continue;
        if (r.busy_before <= 0 || std::abs(r.busy_last - r.busy_before) > policy_.guard * r.busy_before) return;
    }
    for (std::size_t r = 0; r < ranks_.size(); ++r) predicted_work_[r] = ranks_[r].work_last;
    size_ranks(predicted_work_, layout_.cores, sized_);
    // Worth it only when it promises more than a prediction may miss by: moving a core for
    // a 1% gain bets a rank's whole phase on a last value.
    const double sized_s = sized_phase(predicted_work_, sized_);
    if (sized_s > (1 - policy_.guard) * sized_phase(predicted_work_, layout_.own_cores)) return;
    sized_now_ = true;
    sized_time_s_ = sized_s;
    // Givers give their last cores, in core order, to the takers in rank order. A core that
    // serves the same rank as last step stays where its thread is (the offer stands); a new
    // one goes through the daemon and the taker's poll.
    given_.clear();
    for (int r = 0; r < layout_.ranks; ++r) {
        const auto ri = static_cast<std::size_t>(r);
        for (int i = sized_[ri]; i < layout_.own_cores[ri]; ++i) given_.push_back(layout_.first_core[ri] + i);
    }
    std::size_t next = 0;
    for (int r = 0; r < layout_.ranks; ++r) {
        const auto ri = static_cast<std::size_t>(r);
        double heard = never;
        for (int i = layout_.own_cores[ri]; i < sized_[ri]; ++i) {
            const auto c = static_cast<std::size_t>(given_[next++]);
            core_state& k = cores_[c];
            k.holder = r;
            if (prev_holder_[c] == r && policy_.sizing == lending_policy::sizing_mode::standing) {
                k.usable_from = ranks_[ri].start;  // the taker's thread is there already
                continue;
            }
            const double both = std::max(ranks_[static_cast<std::size_t>(k.owner)].start, ranks_[ri].start);
            if (heard == never) heard = both + lat_.daemon_s + draws_.uniform() * lat_.poll_s;
            k.usable_from = heard;
        }
        if (heard != never) push(heard, event_kind::notice, r);
    }
}

int node_ranks::next_region(int r, int from) const noexcept {
    for (int j = from; j < layout_.regions; ++j) {
        std::int64_t lo = 0, hi = 0;
        slab(r, j, lo, hi);
        if (hi > lo) return j;
    }
    return layout_.regions;
}

void node_ranks::slab(int r, int j, std::int64_t& lo, std::int64_t& hi) const noexcept {
    block_of(j, layout_.costs[static_cast<std::size_t>(r)]->size(), layout_.regions, lo, hi);
}

void node_ranks::begin_region(int r, double t) {
    rank_state& s = ranks_[static_cast<std::size_t>(r)];
    s.in_region = true;
    s.door = false;
    if (policy_.type == lending_policy::kind::lewi) {
        // LeWI: a region's start borrows every core lent and not taken.
        for (core_state& k : cores_)
            if (k.lent_to < 0 && k.holder != r && ranks_[static_cast<std::size_t>(k.holder)].offering) {
                k.lent_to = r;
                k.usable_from = t;
            }
    }
    thread_local std::vector<int> members;
    members.clear();
    const int first = layout_.first_core[static_cast<std::size_t>(r)];
    members.push_back(first);  // participant 0: the rank's own first core, never lent while it computes
    for (int c = 0; c < layout_.cores; ++c) {
        const core_state& k = cores_[static_cast<std::size_t>(c)];
        if (c != first && k.runner < 0 && user(k) == r && k.usable_from <= t) members.push_back(c);
    }
    std::int64_t lo = 0, hi = 0;
    slab(r, s.region, lo, hi);
    const auto m = static_cast<std::int64_t>(members.size());
    const auto fixed = static_cast<std::int64_t>(std::floor(layout_.fs * static_cast<double>(hi - lo)));
    for (std::int64_t i = 0; i < m; ++i) {
        core_state& k = cores_[static_cast<std::size_t>(members[static_cast<std::size_t>(i)])];
        std::int64_t b_lo = 0, b_hi = 0;
        block_of(i, fixed, m, b_lo, b_hi);
        k.block_lo = lo + b_lo;
        k.block_hi = lo + b_hi;
        k.runner = r;
        k.guest = false;
        const double at = t + (k.placed_for != r ? lat_.move_s : 0.0);
        k.placed_for = r;
        push(at, event_kind::core_free, members[static_cast<std::size_t>(i)]);
    }
    s.pool_next = lo + fixed;
    s.pool_end = hi;
    s.members = s.active = s.planned = static_cast<int>(m);
    s.region_start = t;
    s.penalty = profile_.locality_penalty * (1.0 - 1.0 / static_cast<double>(m));
    s.region_end = t;
}

double node_ranks::run_on(int c, int r, double t, double work_s) {
    const core_state& k = cores_[static_cast<std::size_t>(c)];
    double end = noise_.run(c, t, work_s);
    if (policy_.busy_mpi && policy_.type == lending_policy::kind::lewi && k.holder != r)
        end = shared_finish(t, end - t, k.slice_phase, slice_s_);
    const double busy = end - t;
    rank_state& s = ranks_[static_cast<std::size_t>(r)];
    s.busy_step += busy;
    if (k.guest) s.held_step += busy;
    tally_.busy_s += busy;
    if (k.owner != r) tally_.moved_s += busy;
    return end;
}

void node_ranks::on_core_free(int c, double t) {
    core_state& k = cores_[static_cast<std::size_t>(c)];
    const int r = k.runner;
    if (r < 0) return;
    rank_state& s = ranks_[static_cast<std::size_t>(r)];
    const iteration_costs& costs = *layout_.costs[static_cast<std::size_t>(r)];
    const double speed = layout_.core_speed[static_cast<std::size_t>(c)] * slow_;
    k.free_at = t;
    if (k.block_lo < k.block_hi) {  // its share of the static part, no claim
        const double base = costs.sum(k.block_lo, k.block_hi);
        tally_.work_s += base;
        tally_.iterations += k.block_hi - k.block_lo;
        k.block_lo = k.block_hi;
        push(run_on(c, r, t, base * speed), event_kind::core_free, c);
        return;
    }
    const bool first = c == layout_.first_core[static_cast<std::size_t>(r)];
    if (!first && user(k) != r) {  // given to another rank: leaves after the chunk it ran
        leave(c, r, t);
        return;
    }
    if (first && s.door) open_door(r, t);
    const double q = profile_.dequeue_s + profile_.dequeue_per_thread_s * (s.members - 1);
    t += q;
    tally_.schedule_s += q;
    ++tally_.claims;
    if (s.pool_next >= s.pool_end) {  // the claim that finds the pool empty
        leave(c, r, t);
        return;
    }
    const std::int64_t lo = s.pool_next, hi = std::min(s.pool_end, lo + layout_.chunk);
    s.pool_next = hi;
    const double base = costs.sum(lo, hi);
    tally_.work_s += base;
    tally_.iterations += hi - lo;
    // A pool's chunk left the core that ran it last step with chance 1 − 1/p (node_loop's
    // expected penalty); a guest's chunk never ran there.
    const double penalty = k.guest ? profile_.locality_penalty : s.penalty;
    push(run_on(c, r, t, base * speed * (1 + penalty)), event_kind::core_free, c);
}

void node_ranks::open_door(int r, double t) {
    rank_state& s = ranks_[static_cast<std::size_t>(r)];
    s.door = false;
    if (s.pool_next >= s.pool_end) return;  // nothing left a guest could take
    for (int c = 0; c < layout_.cores; ++c) {
        core_state& k = cores_[static_cast<std::size_t>(c)];
        if (k.runner >= 0 || user(k) != r || k.usable_from > t) continue;
        k.runner = r;
        k.guest = true;
        k.block_lo = k.block_hi = 0;
        const double at = std::max(t, k.free_at) + (k.placed_for != r ? lat_.move_s : 0.0);
        k.placed_for = r;
        ++s.members;
        ++s.active;
        push(at, event_kind::core_free, c);
    }
}

void node_ranks::leave(int c, int r, double t) {
    core_state& k = cores_[static_cast<std::size_t>(c)];
    rank_state& s = ranks_[static_cast<std::size_t>(r)];
    k.runner = -1;
    k.guest = false;
    k.free_at = t;
    s.region_end = std::max(s.region_end, t);
    if (--s.active == 0) end_region(r);
}

void node_ranks::end_region(int r) {
    rank_state& s = ranks_[static_cast<std::size_t>(r)];
    s.held_step += s.planned * (s.region_end - s.region_start);
    s.in_region = false;
    s.door = false;
    const int j = next_region(r, s.region + 1);
    if (j == layout_.regions) {
        arrive(r, s.region_end);
        return;
    }
    s.region = j;
    push(s.region_end + profile_.fork_join_s, event_kind::region_start, r);
}

mpi::lending_settings node_ranks::lending_rule() const {
    mpi::lending_settings rule;
    rule.mode = runtime::lend_mode::predictive;
    rule.grace_s = lat_.grace_s;
    rule.least_slack_s = lat_.least_slack_s;
    return rule;
}

mpi::lending_wait node_ranks::wait_before_lending(const rank_state& s) const {
    return mpi::wait_before_lending(lending_rule(), s.waits.recent());
}

void node_ranks::arrive(int r, double t) {
    rank_state& s = ranks_[static_cast<std::size_t>(r)];
    s.arrived = true;
    s.arrival = s.arrival_last = t;
    ++arrived_;
    double at = never;
    switch (policy_.type) {
        case lending_policy::kind::off: break;
        case lending_policy::kind::lewi: at = t + lat_.lewi_s; break;
        case lending_policy::kind::reactive: at = t + lat_.grace_s; break;
        case lending_policy::kind::predictive:
            at = t + wait_before_lending(s).after_s;  // the runtime's rule, on the rank's last waits
            break;
    }
    s.lend_at = at;
    if (at != never && arrived_ < layout_.ranks) push(at, event_kind::offer, r);
}

void node_ranks::offer(int r, double t) {
    rank_state& s = ranks_[static_cast<std::size_t>(r)];
    s.offering = true;
    if (policy_.type == lending_policy::kind::lewi) {
        for (core_state& k : cores_)  // the cores it borrowed go back to LeWI's pool with its own
            if (k.lent_to == r) k.lent_to = -1;
        return;
    }
    s.requesting = false;  // a client's offer replaces its request
    push(t + lat_.daemon_s, event_kind::rebalance, -1);
}

void node_ranks::rebalance(double t) {
    // core_lending.cpp's order: lenders with the most to lend give first, requesters with the
    // largest want take first, ties to the lower rank; each takes what it wants while the
    // offered cores last. Cores nobody asked for stay with their lender.
    thread_local std::vector<int> lenders, takers, pool;
    lenders.clear();
    takers.clear();
    pool.clear();
    for (int r = 0; r < layout_.ranks; ++r) {
        const rank_state& s = ranks_[static_cast<std::size_t>(r)];
        if (s.offering) lenders.push_back(r);
        else if (s.requesting) takers.push_back(r);
    }
    std::stable_sort(lenders.begin(), lenders.end(), [&](int a, int b) {
        return ranks_[static_cast<std::size_t>(a)].held > ranks_[static_cast<std::size_t>(b)].held;
    });
    std::stable_sort(takers.begin(), takers.end(), [&](int a, int b) {
        return layout_.spare[static_cast<std::size_t>(a)] > layout_.spare[static_cast<std::size_t>(b)];
    });
    for (int l : lenders)
        for (int c = 0; c < layout_.cores; ++c)
            if (cores_[static_cast<std::size_t>(c)].holder == l) pool.push_back(c);
    std::size_t next = 0;
    for (int b : takers) {
        const auto want = static_cast<std::size_t>(layout_.spare[static_cast<std::size_t>(b)]);
        const std::size_t take = std::min(want, pool.size() - next);
        double heard = never;
        for (std::size_t i = 0; i < take; ++i) {
            core_state& k = cores_[static_cast<std::size_t>(pool[next++])];
            if (k.lent_to == b) continue;
            if (heard == never) heard = t + draws_.uniform() * lat_.poll_s;  // its next poll
            k.lent_to = b;
            k.usable_from = heard;
        }
        if (heard != never) push(heard, event_kind::notice, b);
    }
    for (; next < pool.size(); ++next) cores_[static_cast<std::size_t>(pool[next])].lent_to = -1;
}

}  // namespace aloe::sim

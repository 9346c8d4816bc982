#include "loop/policy_chain.hpp"

#include "runtime/report.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <mutex>

namespace aloe::loop {

namespace {

// The registered kinds. Written under `kinds_mutex`; read lock-free: a reader loads the
// generation (acquire), then the table. Constant-initialised, so it is ready before any
// static constructor registers into it.
constinit std::mutex kinds_mutex;
constinit std::array<std::atomic<const policy_kind*>, max_policy_kinds> kinds{};
constinit std::atomic<unsigned> kinds_generation{1};
// Kinds that every loop site (bit 0) or region site (bit 1) consults.
constinit std::atomic<unsigned> general_scopes{0};

unsigned scope_bit(policy_scope s) noexcept { return s == policy_scope::loop ? 1u : 2u; }

void recount_general_scopes() noexcept {
    // A general kind is consulted by the sites of its scopes; its applies() then sorts them.
    unsigned bits = 0;
    for (const auto& k : kinds)
        if (const policy_kind* p = k.load(std::memory_order_relaxed); p != nullptr && !p->adaptive_only) bits |= p->scopes & 3u;
    general_scopes.store(bits, std::memory_order_release);
}

bool is_adaptive(const schedule* spec) noexcept { return spec != nullptr && spec->kind() == schedule_kind::adaptive; }
bool asks_slack(const schedule* spec) noexcept { return spec != nullptr && spec->slack() == slack_mode::on; }

// Whether kind `p` is consulted for a site with schedule `spec` at all (before applies()).
bool consults(const policy_kind& p, const schedule* spec) noexcept {
    return !p.adaptive_only || is_adaptive(spec) || (p.slack_sites && asks_slack(spec));
}

}  // namespace

bool register_policy_kind(const policy_kind* kind) noexcept {
    std::lock_guard lock(kinds_mutex);
    for (const auto& k : kinds)
        if (k.load(std::memory_order_relaxed) == kind) return false;
    for (auto& k : kinds) {
        if (k.load(std::memory_order_relaxed) != nullptr) continue;
        k.store(kind, std::memory_order_relaxed);
        recount_general_scopes();
        kinds_generation.fetch_add(1, std::memory_order_release);
        return true;
    }
    return false;
}

void unregister_policy_kind(const policy_kind* kind) noexcept {
    std::lock_guard lock(kinds_mutex);
    for (auto& k : kinds)
        if (k.load(std::memory_order_relaxed) == kind) k.store(nullptr, std::memory_order_relaxed);
    recount_general_scopes();
    kinds_generation.fetch_add(1, std::memory_order_release);
}

bool chain_applies(policy_scope scope, const schedule* spec) noexcept {
    return is_adaptive(spec) || asks_slack(spec) || (general_scopes.load(std::memory_order_acquire) & scope_bit(scope)) != 0;
}

void prepare_policies(team& t, const schedule& spec) {
    const policy_site site{policy_scope::loop, &spec, {}, {}};
    for (const auto& k : kinds) {
        const policy_kind* p = k.load(std::memory_order_acquire);
        if (p != nullptr && p->prepare != nullptr && consults(*p, &spec) && p->applies(site))
            p->prepare(t);
    }
}

void policy_chain::rebuild(const policy_site& site) {
    const unsigned generation = kinds_generation.load(std::memory_order_acquire);
    std::vector<link> fresh;
    for (const auto& k : kinds) {
        const policy_kind* p = k.load(std::memory_order_acquire);
        if (p == nullptr || (p->scopes & scope_bit(site.scope)) == 0 || !consults(*p, site.spec) || !p->applies(site)) continue;
        // Keep a link that still serves the site (its tuning goes on), else make it afresh.
        const auto kept = std::find_if(links_.begin(), links_.end(), [&](const link& l) {
            return l.kind == p && l.policy && l.policy->serves(site.spec);
        });
        if (kept != links_.end()) fresh.push_back(std::move(*kept));
        else fresh.push_back({p, p->make(site)});
    }
    links_ = std::move(fresh);
    built_for_ = generation;
}

loop_plan policy_chain::plan(const policy_site& site, std::uint64_t iterations, int available) {
    loop_plan p;
    p.run = site.spec != nullptr ? *site.spec : schedule();
    p.threads = available;
    p.available = available;
    const bool stale = built_for_ != kinds_generation.load(std::memory_order_acquire) ||
                       std::any_of(links_.begin(), links_.end(),
                                   [&](const link& l) { return !l.policy || !l.policy->serves(site.spec); });
    if (stale) rebuild(site);
    for (link& l : links_) {
        l.policy->plan(iterations, p);
        p.threads = std::clamp(p.threads, 1, available);
    }
    if (asks_slack(site.spec) &&
        std::none_of(links_.begin(), links_.end(), [](const link& l) { return l.kind->slack_sites; }))
        runtime::report_once({runtime::report_level::warning, runtime::report_category::loop, "W309",
                              "slack=on, but no MPI slack is measured in this process (libaloe-mpi is not loaded)",
                              "the schedule's own static fraction"});
    if (is_adaptive(&p.run)) {
        runtime::report_once({runtime::report_level::warning, runtime::report_category::loop, "W303",
                              "the adaptive schedule's tuner is not linked in (adapt/ layer missing)", "static"});
        p.run = schedule();
        p.block_weights = {};
    }
    return p;
}

void policy_chain::observe(const loop_outcome& outcome) {
    for (link& l : links_) l.policy->observe(outcome);
}

std::vector<policy_status> policy_chain::statuses() const {
    std::vector<policy_status> out;
    out.reserve(links_.size());
    for (const link& l : links_) out.push_back(l.policy->status());
    return out;
}

std::optional<tuning_stats> policy_chain::tuning() const {
    for (const link& l : links_)
        if (std::optional<tuning_stats> t = l.policy->tuning()) return t;
    return std::nullopt;
}

}  // namespace aloe::loop

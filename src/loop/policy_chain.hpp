// Per-site policy chains: the seam through which the layers above loop/ decide what a loop
// (or an OpenMP region) runs with: its concrete schedule, its block weights and its thread
// count. loop/ sits below them (DESIGN.md, "Layers"), so it only declares the interface;
// each layer registers a policy kind when the library loads (adapt/adaptive_policy.cpp
// today; slack, concurrency throttling and the node daemon's allocation next).
//
// A site's chain holds one link per registered kind that applies to it, in registration
// order. Before each run the chain plans: the plan starts as (the site's schedule, equal
// blocks, every available thread) and each link may change it, seeing what the links before
// it chose; after the join each link observes the run. Each link reports its own typed
// status in the site's statistics.
//
// Calls, all on the thread that starts the loop (the region, for region sites):
//   prepare_policies(team, spec)  before the team is taken, outside any lock: process-wide
//                      probes that need the team free (the dequeue cost q). Cheap once done.
//                      Loops on threads aloe did not start (loop_handle, OpenMP) skip it.
//   chain.plan(...)    under the site's mutex: the run's plan.
//   chain.observe(...) under the site's mutex, after the join.
//   chain.statuses()   under the site's mutex: for site_stats::policies.
// Without the adapt/ layer an `adaptive` loop runs `static` and says so once (W303).
#pragma once

#include "loop/chunk.hpp"

#include <aloe/schedule.hpp>
#include <aloe/stats.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace aloe {
class team;
}

namespace aloe::loop {

enum class policy_scope : std::uint8_t { loop, region };

/// The site a chain is built for.
struct policy_site {
    policy_scope scope = policy_scope::loop;
    const schedule* spec = nullptr;  ///< loops: the schedule the program gave; regions: nullptr
    std::string_view name;           ///< the site's name (loop_site, or "module+0xOFFSET")
    /// Loops: the site's counter instance (site_counters.hpp), registered before its first
    /// plan: a link can make its counter_reader over `/loop{<counters>}/…` when it is made.
    std::string_view counters;
};

/// What one run will use. Policies change it in chain order.
struct loop_plan {
    schedule run;                           ///< concrete (never adaptive) for loops
    std::span<const double> block_weights;  ///< empty: equal blocks; else one per thread,
                                            ///< owned by the policy until its next call
    int threads = 1;                        ///< participants, 1..available
    int available = 1;                      ///< the team's workers (regions: the default count)
    /// Set by a link that is still measuring the schedule it chose (adaptive while probing
    /// or searching): later links leave `run` alone, or they would skew what it measures.
    bool measuring = false;
};

/// One run, as the chain observes it after the join.
/// One run, as the chain observes it after the join. The site's counters (site_counters.hpp)
/// already hold it: a policy reads what it needs as deltas of its own counter_reader over
/// `/loop{<counters>}/…` (its baseline, no one else's); the records carry what the registry
/// has no instance for (each participant's static-part end, for lateness and speeds).
struct loop_outcome {
    std::span<const worker_record> records;  ///< one per participant
    runtime::ticks fork = 0;
    runtime::ticks join = 0;
    std::uint64_t iterations = 0;
    std::string_view counters;  ///< the site's counter instance; empty when it has none
};

/// One link of a site's chain.
class site_policy {
public:
    virtual ~site_policy() = default;
    /// The kind's name ("adaptive"), shown in the statistics.
    virtual std::string_view name() const noexcept = 0;
    /// Whether this link still serves a site whose schedule is now `spec` (else it is remade).
    virtual bool serves(const schedule* spec) const noexcept = 0;
    virtual void plan(std::uint64_t iterations, loop_plan& p) = 0;
    virtual void observe(const loop_outcome& outcome) = 0;
    virtual policy_status status() const = 0;
    /// The adaptive tuner's detail (site_stats::tuning); nothing for other kinds.
    virtual std::optional<tuning_stats> tuning() const { return std::nullopt; }
};

/// A kind of policy, registered once by its layer (at load time).
struct policy_kind {
    const char* name;
    /// Whether sites like `site` get a link of this kind.
    bool (*applies)(const policy_site& site) noexcept;
    std::unique_ptr<site_policy> (*make)(const policy_site& site);
    /// Optional: process-wide probes before the team is taken (see above).
    void (*prepare)(team& t);
    /// True when the kind applies only to loops whose schedule is `adaptive` (their sites
    /// take the chain's lock anyway); false makes every site of its scope consult it.
    bool adaptive_only = false;
    /// With adaptive_only: sites whose schedule says `slack=on` are consulted as well (the
    /// MPI layer's slack kind). A site with slack=on and no such kind warns once (W309).
    bool slack_sites = false;
    /// The scopes whose sites consult it at all: bit 0 loops, bit 1 regions. A kind for
    /// regions only leaves every loop site's fast path alone (chain_applies stays false).
    unsigned scopes = 3;
};

/// The most kinds a process registers.
inline constexpr int max_policy_kinds = 8;

/// Appends `kind` to every chain's order (thread-safe; `kind` must live for the process).
/// False when the table is full or the kind is already registered.
bool register_policy_kind(const policy_kind* kind) noexcept;
/// Removes it again (tests); chains drop their link at their next plan.
void unregister_policy_kind(const policy_kind* kind) noexcept;

/// Whether a loop with schedule `spec` (a region: scope region, spec nullptr) has anything to
/// ask its chain: an adaptive spec, a spec with slack=on, or a kind registered for every
/// site of the scope.
bool chain_applies(policy_scope scope, const schedule* spec) noexcept;

/// Before the team is taken: each applying kind's prepare().
void prepare_policies(team& t, const schedule& spec);

class policy_chain {
public:
    /// Under the site's mutex: the plan for one run of `iterations` at `site` on at most
    /// `available` threads (rebuilding the links when the spec or the kinds changed).
    loop_plan plan(const policy_site& site, std::uint64_t iterations, int available);
    void observe(const loop_outcome& outcome);
    std::vector<policy_status> statuses() const;
    std::optional<tuning_stats> tuning() const;
    void clear() noexcept {
        links_.clear();
        built_for_ = 0;
    }

private:
    struct link {
        const policy_kind* kind;
        std::unique_ptr<site_policy> policy;
    };
    void rebuild(const policy_site& site);

    std::vector<link> links_;
    unsigned built_for_ = 0;  ///< the kinds' generation the links were made for (0: never)
};

}  // namespace aloe::loop

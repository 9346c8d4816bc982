// The hook through which a policy of the adapt/ layer decides, per loop site, what an
// `adaptive` loop runs. loop/ sits below adapt/ (DESIGN.md, "Layers"), so it only declares
// the interface; adapt/ installs the implementation when the library loads
// (adapt/adaptive_policy.cpp). Without one installed, adaptive loops run `static` and say so
// once.
//
// Calls, all on the thread that starts the loop:
//   provider.prepare(team)  before the team is taken, outside any lock: process-wide probes
//                      that need the team free (the dequeue cost q). Cheap once done. Loops
//                      on threads aloe did not start (loop_handle) skip it.
//   choose(n, p)       under the site's mutex: the concrete schedule for this invocation
//                      (static or staggered) and, optionally, per-thread block weights.
//   observe(records…)  under the site's mutex, after the join: this invocation's timings.
//   snapshot()         under the site's mutex: the visible state for site_stats::tuning.
#pragma once

#include "loop/chunk.hpp"

#include <aloe/schedule.hpp>
#include <aloe/stats.hpp>

#include <cstdint>
#include <memory>
#include <span>

namespace aloe {
class team;
}

namespace aloe::loop {

struct policy_choice {
    schedule run;                        ///< static or staggered
    std::span<const double> block_weights;  ///< empty: equal blocks; else one per thread,
                                            ///< owned by the policy until its next call
};

class site_policy {
public:
    virtual ~site_policy() = default;
    /// The `adaptive` spec this policy was made for; a site whose spec changes gets a new one.
    virtual const schedule& spec() const noexcept = 0;
    virtual policy_choice choose(std::uint64_t iterations, int threads) = 0;
    virtual void observe(std::span<const worker_record> records, runtime::ticks fork, runtime::ticks join) = 0;
    virtual tuning_stats snapshot() const = 0;
};

struct site_policy_provider {
    std::unique_ptr<site_policy> (*make)(const schedule& spec);
    void (*prepare)(team& t);
};

/// Installs what adaptive sites use (adapt/ does this at load time).
void install_site_policy_provider(const site_policy_provider* provider) noexcept;
/// The installed provider, or nullptr.
const site_policy_provider* installed_site_policy_provider() noexcept;

/// Under the site's mutex: the concrete schedule an `adaptive` spec runs at `st` now (the
/// site's policy is made, or remade when the spec changed, on the way). Without a provider:
/// static, reported once.
policy_choice choose_adaptive(std::unique_ptr<site_policy>& policy, const schedule& spec, std::uint64_t n,
                              int threads);

/// Before the team is taken: the provider's process-wide probes (nothing without one).
void prepare_adaptive(team& t);

}  // namespace aloe::loop

// Loop sites: one record per loop in the program, holding what carries over from one run
// of the loop to the next (tuned weights, tasklet owners) and its statistics.
//
// Lookup cost: a thread-local cache hit (a string compare) in the steady state; a mutex and
// a hash lookup otherwise. Each record has its own mutex, taken by the thread that starts a
// loop (to read history) and that ends it (to commit history and statistics), never by
// workers during the loop.
#pragma once

#include "loop/loop_stats.hpp"
#include "loop/site_policy.hpp"

#include <aloe/loop_site.hpp>
#include <aloe/stats.hpp>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <string>
#include <vector>

namespace aloe::loop {

/// What a schedule learns from one run of a site for the next.
struct site_history {
    int team_size = 0;                        ///< the team the entries below were measured on
    std::vector<double> weights;              ///< weighted: relative speed per thread
    std::vector<std::int32_t> tasklet_owner;  ///< tasklets: thread that ran each tasklet last
};

struct site_state {
    std::string key_name;  ///< the loop_site name, owned here
    std::uint_least32_t line = 0;
    std::uint_least32_t column = 0;
    std::string display_name;  ///< "file:line:column" or the explicit name

    std::mutex mutex;  ///< guards history, stats and policy
    site_history history;
    site_accumulator stats;
    std::unique_ptr<site_policy> policy;  ///< adaptive sites: the tuner (adapt/)
};

class site_registry {
public:
    static site_registry& instance();

    /// The record for `site`, created on first use. Never invalidated.
    site_state& find(const loop_site& site);

    /// Snapshots of every site, in order of first use.
    std::vector<site_stats> snapshot();
    std::optional<site_stats> snapshot(const loop_site& site);

    /// Forgets history and statistics of every site (records stay valid).
    void reset();

private:
    site_registry() = default;
    site_state* lookup_locked(const loop_site& site);

    std::mutex mutex_;
    std::vector<std::unique_ptr<site_state>> sites_;  // in order of first use
    std::unordered_multimap<std::size_t, site_state*> by_hash_;
};

}  // namespace aloe::loop

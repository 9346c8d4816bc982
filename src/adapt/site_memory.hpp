// What one adaptive loop site's tuning leaves for the next run of the same program (issue
// 14): the candidates it judged with what each measured, and its choice once it converged.
// A run that starts from it re-checks the choice cheaply instead of probing from scratch,
// and a search cut short by the program's end (a loop that runs 11 times) goes on where it
// stopped. `tuning_memory` is where policies keep and recall it; the process's one, read
// from and written to ALOE_TUNING's file, is tuning_file.hpp's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aloe::adapt {

/// One candidate schedule and what its invocations measured, per iteration (so that runs
/// whose trip counts differ pool: Welford's running mean and squared deviations).
struct candidate_memory {
    std::string schedule;  ///< concrete schedule text, e.g. "static", "guided,chunk=4"
    bool weighted = false; ///< its blocks follow the site's weights
    std::uint64_t samples = 0;
    double mean_s = 0;  ///< mean seconds per iteration
    double m2 = 0;      ///< Welford: sum of squared deviations from the mean, seconds²
    bool out = false;   ///< the race dropped it (its interval lay above the best's)

    friend bool operator==(const candidate_memory&, const candidate_memory&) = default;
};

struct site_memory {
    bool converged = false;
    std::string chosen;            ///< the converged schedule's text (empty: not converged)
    std::vector<double> weights;   ///< block weights when the choice is weighted; else empty
    std::vector<candidate_memory> candidates;
    std::uint64_t invocations = 0; ///< invocations this memory sums up, over every run

    friend bool operator==(const site_memory&, const site_memory&) = default;
};

/// Where adaptive policies keep what they learnt. `site` is the policy_site's name
/// ("module+0xOFFSET" for an OpenMP site, "file:line:column" or the given name otherwise);
/// the store adds what makes it safe to reuse (the module's build-id, the machine), and
/// `threads` is part of the key. Implementations are thread-safe and never call back into a
/// policy (policies call them under their site's mutex).
class tuning_memory {
public:
    virtual ~tuning_memory() = default;
    virtual std::optional<site_memory> recall(std::string_view site, int threads) = 0;
    virtual void keep(std::string_view site, int threads, const site_memory& memory) = 0;
};

}  // namespace aloe::adapt

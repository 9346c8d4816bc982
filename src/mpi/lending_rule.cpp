#include "mpi/lending_rule.hpp"

namespace aloe::mpi {

using runtime::lend_mode;

bool lend_at_entry(const lending_settings& s, std::optional<double> predicted_s) noexcept {
    return s.mode == lend_mode::predictive && predicted_s && *predicted_s >= s.least_slack_s + s.lend_cost_s;
}

bool lend_while_waiting(const lending_settings& s, std::optional<double> predicted_s, double waited_s) noexcept {
    switch (s.mode) {
    case lend_mode::reactive: return waited_s >= s.grace_s;
    case lend_mode::predictive:
        // No prediction yet: the reactive rule. A prediction that missed: lend once the wait
        // is worth it. (A prediction of slack lent at the entry already.)
        return predicted_s ? waited_s >= s.least_slack_s + s.lend_cost_s : waited_s >= s.grace_s;
    default: return false;
    }
}

bool ask_after(const lending_settings& s, std::optional<double> predicted_next_s) noexcept {
    switch (s.mode) {
    case lend_mode::reactive: return true;
    case lend_mode::predictive: return !predicted_next_s || *predicted_next_s < s.least_slack_s;
    default: return false;
    }
}

std::vector<unsigned> finish_together(std::span<const double> work, unsigned cores) {
    if (work.empty() || cores < work.size()) return {};
    std::vector<unsigned> given(work.size(), 1);
    for (unsigned left = cores - static_cast<unsigned>(work.size()); left > 0; --left) {
        std::size_t longest = 0;
        for (std::size_t i = 1; i < work.size(); ++i)
            if (work[i] / given[i] > work[longest] / given[longest]) longest = i;
        ++given[longest];
    }
    return given;
}

unsigned cores_for_phase(const lending_settings& s, unsigned own, std::optional<double> compute_s,
                         std::optional<double> predicted_s) {
    if (s.mode != lend_mode::predictive || own < 2 || !compute_s || !predicted_s || *compute_s <= 0 ||
        *predicted_s < s.least_slack_s)
        return 0;
    const double pair[2] = {*compute_s * own, (*compute_s + *predicted_s) * own};
    const std::vector<unsigned> split = finish_together(pair, 2 * own);
    return own - split[0];
}

}  // namespace aloe::mpi

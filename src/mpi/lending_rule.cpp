#include "mpi/lending_rule.hpp"

namespace aloe::mpi {

using runtime::lend_mode;

bool lend_at_entry(const lending_settings& s, std::optional<double> predicted_s) noexcept {
    return s.mode == lend_mode::predictive && predicted_s && *predicted_s >= s.least_slack_s;
}

bool lend_while_waiting(const lending_settings& s, std::optional<double> predicted_s, double waited_s) noexcept {
    switch (s.mode) {
    case lend_mode::reactive: return waited_s >= s.grace_s;
    case lend_mode::predictive:
        // No prediction yet: the reactive rule. A prediction that missed: lend once the wait
        // is worth it. (A prediction of slack lent at the entry already.)
        return predicted_s ? waited_s >= s.least_slack_s : waited_s >= s.grace_s;
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

}  // namespace aloe::mpi

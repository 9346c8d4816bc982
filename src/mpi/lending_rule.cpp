#include "mpi/lending_rule.hpp"

#include <limits>

namespace aloe::mpi {

using runtime::lend_mode;

lending_wait wait_before_lending(const lending_settings& s, std::span<const double> recent_s) noexcept {
    constexpr double never = std::numeric_limits<double>::infinity();
    switch (s.mode) {
    case lend_mode::reactive: return {s.grace_s, false};
    case lend_mode::predictive: break;
    default: return {never, false};
    }
    if (recent_s.empty()) return {s.grace_s, false};  // nothing known yet: the reactive rule
    const double worth = s.least_slack_s + s.lend_cost_s;
    const auto pays = [&](double w) {
        double sum = 0;
        bool any = false;
        for (const double x : recent_s)
            if (x > w) {
                sum += x - w - worth;
                any = true;
            }
        return any ? sum : -never;
    };
    double best_w = 0, best = pays(0);
    for (const double x : recent_s) {  // a handful of waits: quadratic is a few dozen steps
        const double w = x + s.grace_s;
        const double p = pays(w);
        if (p > best || (p == best && w < best_w)) best_w = w, best = p;
    }
    if (best >= 0) return {best_w, true};
    return {worth, false};  // nothing pays: the guard's wait
}

bool ask_after(const lending_settings& s) noexcept {
    return s.mode == lend_mode::reactive || s.mode == lend_mode::predictive;
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

#include "loop/site_policy.hpp"

#include "runtime/report.hpp"

#include <atomic>

namespace aloe::loop {

namespace {
// Constant-initialised, so it is ready before any static constructor installs into it.
std::atomic<const site_policy_provider*> installed{nullptr};
}  // namespace

void install_site_policy_provider(const site_policy_provider* provider) noexcept {
    installed.store(provider, std::memory_order_release);
}

const site_policy_provider* installed_site_policy_provider() noexcept {
    return installed.load(std::memory_order_acquire);
}

policy_choice choose_adaptive(std::unique_ptr<site_policy>& policy, const schedule& spec, std::uint64_t n,
                              int threads) {
    const site_policy_provider* provider = installed_site_policy_provider();
    if (provider == nullptr) {
        runtime::report_once({runtime::report_level::warning, runtime::report_category::loop, "W303",
                              "the adaptive schedule's tuner is not linked in (adapt/ layer missing)", "static"});
        return {schedule(), {}};
    }
    if (!policy || !(policy->spec() == spec)) policy = provider->make(spec);
    return policy->choose(n, threads);
}

void prepare_adaptive(team& t) {
    if (const site_policy_provider* provider = installed_site_policy_provider()) provider->prepare(t);
}

}  // namespace aloe::loop

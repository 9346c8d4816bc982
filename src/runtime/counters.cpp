#include "runtime/counters.hpp"

#include "runtime/team.hpp"

#include <atomic>
#include <deque>
#include <mutex>

namespace aloe::runtime {

namespace {

struct registry {
    std::mutex mutex;
    std::deque<counter> counters;  // deque: references stay valid as it grows
};

// The registry as the fork hooks see it: they must not go through the_registry()'s guarded
// static (a fork during its first use would wait on the guard for ever in the child).
constinit std::atomic<registry*> for_fork{nullptr};
void lock_for_fork() noexcept { for_fork.load(std::memory_order_acquire)->mutex.lock(); }
void unlock_after_fork() noexcept { for_fork.load(std::memory_order_acquire)->mutex.unlock(); }
// A child counts what it does itself, from 0 (its statistics are its own: see site_registry).
void reset_in_child() noexcept {
    registry& r = *for_fork.load(std::memory_order_acquire);
    for (counter& c : r.counters) c.reset();
    r.mutex.unlock();
}

registry& the_registry() {
    static registry* const r = [] {
        auto* made = new registry;  // lives to exit: counters are read by atexit reports
        for_fork.store(made, std::memory_order_release);
        register_fork_hooks(fork_rank::counters, {&lock_for_fork, &unlock_after_fork, &reset_in_child});
        return made;
    }();
    return *r;
}

}  // namespace

counter& register_counter(std::string_view name) {
    registry& r = the_registry();
    std::lock_guard lock(r.mutex);
    for (counter& c : r.counters)
        if (c.name() == name) return c;
    return r.counters.emplace_back(std::string(name));
}

std::optional<std::uint64_t> read_counter(std::string_view name) {
    registry& r = the_registry();
    std::lock_guard lock(r.mutex);
    for (const counter& c : r.counters)
        if (c.name() == name) return c.value();
    return std::nullopt;
}

std::vector<std::pair<std::string, std::uint64_t>> read_all_counters() {
    registry& r = the_registry();
    std::lock_guard lock(r.mutex);
    std::vector<std::pair<std::string, std::uint64_t>> out;
    out.reserve(r.counters.size());
    for (const counter& c : r.counters) out.emplace_back(c.name(), c.value());
    return out;
}

}  // namespace aloe::runtime

#include "runtime/counters.hpp"

#include <deque>
#include <mutex>

namespace aloe::runtime {

namespace {

struct registry {
    std::mutex mutex;
    std::deque<counter> counters;  // deque: references stay valid as it grows
};

registry& the_registry() {
    static registry* r = new registry;  // lives to exit: counters are read by atexit reports
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

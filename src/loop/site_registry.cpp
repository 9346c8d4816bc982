#include "loop/site_registry.hpp"

#include <array>
#include <functional>
#include <string>

namespace aloe::loop {

namespace {

std::size_t hash_of(const loop_site& site) {
    const std::size_t h = std::hash<std::string_view>{}(site.name());
    return h ^ (static_cast<std::size_t>(site.line()) * 0x9e3779b97f4a7c15ULL) ^ (static_cast<std::size_t>(site.column()) << 17);
}

bool same(const site_state& s, const loop_site& site) {
    return s.line == site.line() && s.column == site.column() && s.key_name == site.name();
}

// Steady state: a timestep loop hits the same few sites over and over. A small
// direct-mapped cache per thread skips the hash and the registry's mutex; records are never
// freed, so a cached pointer stays valid. A call-site name is a string literal, so its
// address, line and column identify it; an explicit name (line 0) may live in a reused
// buffer, so its text is compared too.
constexpr std::size_t cache_slots = 8;
struct cached_site {
    const char* name = nullptr;
    std::size_t length = 0;
    std::uint_least32_t line = 0;
    std::uint_least32_t column = 0;
    site_state* state = nullptr;
};
thread_local std::array<cached_site, cache_slots> site_cache{};

std::size_t slot_of(const loop_site& site) {
    return (static_cast<std::size_t>(site.line()) * 31 + site.column() + site.name().size()) % cache_slots;
}

bool hit(const cached_site& c, const loop_site& site) {
    return c.state != nullptr && c.name == site.name().data() && c.length == site.name().size() &&
           c.line == site.line() && c.column == site.column() && (site.line() != 0 || c.state->key_name == site.name());
}

}  // namespace

site_registry& site_registry::instance() {
    static site_registry* const r = new site_registry;  // lives to exit (atexit statistics)
    return *r;
}

site_state* site_registry::lookup_locked(const loop_site& site) {
    const auto [first, last] = by_hash_.equal_range(hash_of(site));
    for (auto it = first; it != last; ++it)
        if (same(*it->second, site)) return it->second;
    return nullptr;
}

site_state& site_registry::find(const loop_site& site) {
    cached_site& slot = site_cache[slot_of(site)];
    if (hit(slot, site)) [[likely]]
        return *slot.state;

    const std::size_t h = hash_of(site);
    std::lock_guard lock(mutex_);
    site_state* s = lookup_locked(site);
    if (s == nullptr) {
        auto fresh = std::make_unique<site_state>();
        fresh->key_name = std::string(site.name());
        fresh->line = site.line();
        fresh->column = site.column();
        fresh->display_name = site.line() == 0 ? fresh->key_name
                                               : fresh->key_name + ":" + std::to_string(site.line()) + ":" +
                                                     std::to_string(site.column());
        s = fresh.get();
        sites_.push_back(std::move(fresh));
        by_hash_.emplace(h, s);
    }
    slot = {site.name().data(), site.name().size(), site.line(), site.column(), s};
    return *s;
}

namespace {
site_stats snapshot_locked(const site_state& s) {
    site_stats out = s.stats.snapshot(s.display_name);
    if (s.policy) out.tuning = s.policy->snapshot();
    return out;
}
}  // namespace

std::vector<site_stats> site_registry::snapshot() {
    std::lock_guard lock(mutex_);
    std::vector<site_stats> out;
    out.reserve(sites_.size());
    for (const auto& s : sites_) {
        std::lock_guard site_lock(s->mutex);
        out.push_back(snapshot_locked(*s));
    }
    return out;
}

std::optional<site_stats> site_registry::snapshot(const loop_site& site) {
    std::lock_guard lock(mutex_);
    site_state* s = lookup_locked(site);
    if (s == nullptr) return std::nullopt;
    std::lock_guard site_lock(s->mutex);
    return snapshot_locked(*s);
}

void site_registry::reset() {
    std::lock_guard lock(mutex_);
    for (const auto& s : sites_) {
        std::lock_guard site_lock(s->mutex);
        s->history = site_history{};
        s->stats.clear();
        s->policy.reset();
    }
}

}  // namespace aloe::loop

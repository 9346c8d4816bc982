#include "loop/schedules/spec_cache.hpp"

#include <aloe/error.hpp>
#include <aloe/parallel_for.hpp>

#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <type_traits>

namespace aloe::loop {

namespace {

// Sizes: guesses. site_registry's own per-thread cache holds 8 sites, beyond which a loop's
// site lookup takes a mutex anyway; 8 sets of 2 ways keep at least that many, and two ways
// stop two sites that share a set from evicting each other at every call. An entry's text
// (an explicit site name, then the schedule string) fits any usual pair
// ("jacobi/sweep" + "tasklets,n=32,fs=0.5,skew=4,locality=0" is 50 bytes).
constexpr std::size_t cache_sets = 8;
constexpr std::size_t cache_ways = 2;
constexpr std::size_t entry_text_capacity = 96;

struct cached_spec {
    const char* site_name = nullptr;  // call sites: the file name literal (explicit: unused)
    std::size_t site_length = 0;
    std::uint_least32_t line = 0;
    std::uint_least32_t column = 0;
    bool used = false;
    std::uint8_t name_length = 0;  // explicit sites: text[0, name_length) is the name
    std::uint8_t spec_length = 0;  // then the schedule string
    char text[entry_text_capacity];
    schedule parsed;

    std::string_view spec() const noexcept { return {text + name_length, spec_length}; }
};

struct cache_set {
    std::array<cached_spec, cache_ways> ways;
    std::uint8_t recent = 0;  // the way hit or filled last: a miss replaces another
};

static_assert(std::is_trivially_destructible_v<cache_set>, "no destructor may run at thread exit");

constinit thread_local std::array<cache_set, cache_sets> cache{};

// An explicit name (line 0, site_registry's rule) may live in a reused buffer: its text is
// the key. A call site's name is a string literal: its address, line and column are.
bool explicit_name(const loop_site& site) noexcept { return site.line() == 0; }

std::size_t set_of(const loop_site& site) noexcept {
    const std::size_t h = explicit_name(site)
                              ? std::hash<std::string_view>{}(site.name())
                              : static_cast<std::size_t>(site.line()) * 31 + site.column() + site.name().size();
    return h % cache_sets;
}

bool same_site(const cached_spec& c, const loop_site& site) noexcept {
    if (!c.used || c.line != site.line() || c.column != site.column()) return false;
    if (explicit_name(site)) return std::string_view(c.text, c.name_length) == site.name();
    return c.site_name == site.name().data() && c.site_length == site.name().size();
}

// Remembers `parsed` for (site, spec) in `c`; false when the texts do not fit (not cached).
bool fill(cached_spec& c, const loop_site& site, std::string_view spec, const schedule& parsed) noexcept {
    const std::string_view name = explicit_name(site) ? site.name() : std::string_view();
    if (name.size() + spec.size() > entry_text_capacity) return false;
    c.used = true;
    c.site_name = site.name().data();
    c.site_length = site.name().size();
    c.line = site.line();
    c.column = site.column();
    c.name_length = static_cast<std::uint8_t>(name.size());
    c.spec_length = static_cast<std::uint8_t>(spec.size());
    if (!name.empty()) std::memcpy(c.text, name.data(), name.size());
    if (!spec.empty()) std::memcpy(c.text + name.size(), spec.data(), spec.size());
    c.parsed = parsed;
    return true;
}

static_assert(entry_text_capacity <= 255, "lengths are kept in bytes");

}  // namespace

bool site_schedule(const loop_site& site, std::string_view text, schedule& out, std::string& error) {
    cache_set& set = cache[set_of(site)];
    std::size_t way = cache_ways;
    for (std::size_t w = 0; w < cache_ways; ++w) {
        if (!same_site(set.ways[w], site)) continue;
        if (set.ways[w].spec() == text) [[likely]] {
            set.recent = static_cast<std::uint8_t>(w);
            out = set.ways[w].parsed;
            return true;
        }
        way = w;  // the site's string changed: its entry takes the new one
        break;
    }
    schedule parsed;
    if (!schedule::try_parse(text, parsed, error)) return false;  // never remembered
    if (way == cache_ways) {
        way = (set.recent + 1) % cache_ways;  // the least recently used way (two ways)
        for (std::size_t w = 0; w < cache_ways; ++w)
            if (!set.ways[w].used) way = w;
    }
    cached_spec& c = set.ways[way];
    if (fill(c, site, text, parsed)) set.recent = static_cast<std::uint8_t>(way);
    else if (same_site(c, site)) c.used = false;  // too long to keep; drop the site's old string
    out = parsed;
    return true;
}

}  // namespace aloe::loop

namespace aloe::detail {

schedule site_schedule(const loop_site& site, std::string_view text) {
    schedule s;
    std::string message;
    if (!loop::site_schedule(site, text, s, message)) throw error(message);
    return s;
}

}  // namespace aloe::detail

#include "loop/site_registry.hpp"

#include "runtime/config.hpp"
#include "runtime/report.hpp"
#include "runtime/team.hpp"

#include <algorithm>
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

// Each eviction round frees this fraction of the limit, so the scan for the coldest records
// (one pass over the pool) is paid once per limit/8 new sites. A guess: small enough to keep
// most of the warm records, large enough to make the scan rare.
constexpr std::size_t evict_fraction = 8;

// Registries are told apart in the lookup cache by a number never reused (a test registry
// may be destroyed and another made at its address).
std::atomic<std::uint64_t> next_registry_id{1};

// The process's registry for the fork handlers, which must not go through instance(): a
// fork() while another thread is making it would wait on that thread, which waits for the
// fork to end to register the handlers.
constinit std::atomic<site_registry*> process_registry{nullptr};

}  // namespace

// Steady state: a timestep loop hits the same few sites over and over. A small
// direct-mapped cache per thread skips the hash and the registry's mutex. A call-site name
// is a string literal, so its address, line and column identify it; an explicit name
// (line 0) may live in a reused buffer, so its text is compared too, once the record is
// known to be unchanged. The record pointer is always safe to follow (records are never
// freed while their registry lives); the generation says whether it still holds this site.
struct cached_site {
    std::uint64_t registry = 0;
    const char* name = nullptr;
    std::size_t length = 0;
    std::uint_least32_t line = 0;
    std::uint_least32_t column = 0;
    site_state* state = nullptr;
    std::uint64_t generation = 0;
};

namespace {

constexpr std::size_t cache_slots = 8;
thread_local std::array<cached_site, cache_slots> site_cache{};

std::size_t slot_of(const loop_site& site) {
    return (static_cast<std::size_t>(site.line()) * 31 + site.column() + site.name().size()) % cache_slots;
}

bool same_key(const cached_site& c, std::uint64_t registry, const loop_site& site) {
    return c.registry == registry && c.name == site.name().data() && c.length == site.name().size() &&
           c.line == site.line() && c.column == site.column();
}

}  // namespace

site_registry::site_registry(std::size_t limit)
    : limit_(std::max<std::size_t>(limit, 1)), id_(next_registry_id.fetch_add(1, std::memory_order_relaxed)) {}

site_registry& site_registry::instance() {
    static site_registry* const r = [] {
        auto* made = new site_registry(static_cast<std::size_t>(runtime::current_config().site_limit));
        process_registry.store(made, std::memory_order_release);
        runtime::register_fork_hooks(runtime::fork_rank::loop_sites, {&before_fork, &after_fork, &after_fork_in_child});
        return made;
    }();  // lives to exit (atexit statistics)
    return *r;
}

// Around fork(): the registry's mutex, then the records' (all stripes, in order), so that
// a child finds them free and the records whole (another thread may have been committing a
// loop). The forking thread holds none of them: they are never held while a loop body runs.
void site_registry::before_fork() noexcept {
    site_registry& r = *process_registry.load(std::memory_order_acquire);
    r.mutex_.lock();
    for (lock_stripe& stripe : r.stripes_) stripe.mutex.lock();
}

void site_registry::after_fork() noexcept {
    site_registry& r = *process_registry.load(std::memory_order_acquire);
    for (auto stripe = r.stripes_.rbegin(); stripe != r.stripes_.rend(); ++stripe) stripe->mutex.unlock();
    r.mutex_.unlock();
}

// The child starts its own statistics: what the parent's loops measured is the parent's to
// report (a child that writes ALOE_STATS or an interposer report would count it twice). History
// and tuners stay: they describe the loops, not who ran them. Only this thread is left, and it
// holds every lock (before_fork).
void site_registry::after_fork_in_child() noexcept {
    site_registry& r = *process_registry.load(std::memory_order_acquire);
    for (const auto& s : r.pool_) s->stats.clear();
    r.folded_ = folded_totals{};
    after_fork();
}

void site_registry::touch(site_state& s) noexcept {
    // Relaxed: coldness is a heuristic; a stale value only picks a less cold victim. The
    // epoch moves once per new site, so the store is skipped in the steady state.
    const std::uint64_t now = epoch_.load(std::memory_order_relaxed);
    if (s.last_use.load(std::memory_order_relaxed) != now) s.last_use.store(now, std::memory_order_relaxed);
}

site_ref site_registry::acquire(const loop_site& site) {
    cached_site& slot = site_cache[slot_of(site)];
    if (same_key(slot, id_, site)) [[likely]] {
        site_state& s = *slot.state;
        // seq_cst pair: see the header ("acquire()'s fast path against the evictor").
        s.users.fetch_add(1, std::memory_order_seq_cst);
        if (s.generation.load(std::memory_order_seq_cst) == slot.generation &&
            (site.line() != 0 || s.key_name == site.name())) [[likely]] {
            touch(s);
            return site_ref(&s);
        }
        s.users.fetch_sub(1, std::memory_order_release);
    }
    return acquire_slow(site, slot);
}

site_ref site_registry::acquire_slow(const loop_site& site, cached_site& slot) {
    std::lock_guard lock(mutex_);
    site_state& s = locate_locked(site);
    // Relaxed: the evictor reads `users` under mutex_ too, so the mutex orders the two.
    s.users.fetch_add(1, std::memory_order_relaxed);
    slot = {id_, site.name().data(), site.name().size(), site.line(), site.column(), &s,
            s.generation.load(std::memory_order_relaxed)};
    return site_ref(&s);
}

site_state& site_registry::pin(const loop_site& site, site_visibility visibility) {
    std::lock_guard lock(mutex_);
    site_state& s = locate_locked(site);
    ++s.pins;
    if (visibility == site_visibility::internal) s.visibility = visibility;
    return s;
}

site_state* site_registry::lookup_locked(const loop_site& site, std::size_t hash) {
    const auto [first, last] = by_hash_.equal_range(hash);
    for (auto it = first; it != last; ++it)
        if (same(*it->second, site)) return it->second;
    return nullptr;
}

site_state& site_registry::locate_locked(const loop_site& site) {
    const std::size_t h = hash_of(site);
    if (site_state* s = lookup_locked(site, h)) {
        touch(*s);
        return *s;
    }
    if (live_ >= limit_) evict_locked();
    site_state* s = nullptr;
    if (!free_.empty()) {
        s = free_.back();
        free_.pop_back();
    } else {
        s = pool_.emplace_back(std::make_unique<site_state>(stripes_[pool_.size() % site_lock_stripes].mutex)).get();
        s->record = static_cast<std::uint32_t>(pool_.size() - 1);
    }
    // The record is on no lookup path (its generation was bumped when it was evicted, and
    // it is in no map), so its identity can be written without its own mutex.
    s->key_name.assign(site.name());
    s->line = site.line();
    s->column = site.column();
    s->display_name = site.line() == 0 ? s->key_name
                                       : s->key_name + ":" + std::to_string(site.line()) + ":" +
                                             std::to_string(site.column());
    s->visibility = site_visibility::user;
    s->hash = h;
    s->order = next_order_++;
    s->pins = 0;
    s->live = true;
    s->last_use.store(epoch_.fetch_add(1, std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    by_hash_.emplace(h, s);
    ++live_;
    return *s;
}

void site_registry::evict_locked() {
    // The coldest records no loop uses and nobody pinned, down to 7/8 of the limit.
    const std::size_t keep = limit_ - std::max<std::size_t>(1, limit_ / evict_fraction);
    const std::size_t wanted = live_ - std::min(live_, keep);
    std::vector<site_state*> candidates;
    for (const auto& s : pool_)
        if (s->live && s->pins == 0 && s->users.load(std::memory_order_relaxed) == 0) candidates.push_back(s.get());
    const auto colder = [](const site_state* a, const site_state* b) {
        return a->last_use.load(std::memory_order_relaxed) < b->last_use.load(std::memory_order_relaxed);
    };
    const std::size_t n = std::min(wanted, candidates.size());
    if (n < candidates.size())
        std::nth_element(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(n), candidates.end(), colder);
    bool folded_any = false;
    for (std::size_t i = 0; i < n; ++i) folded_any = evict_one_locked(*candidates[i]) || folded_any;
    if (folded_any)
        runtime::report_once({runtime::report_level::info, runtime::report_category::loop, "I311",
                              "more than " + std::to_string(limit_) +
                                  " loop sites: the coldest are folded into one statistics row (ALOE_SITE_LIMIT)",
                              ""});
}

bool site_registry::evict_one_locked(site_state& s) {
    // seq_cst pair: see the header ("acquire()'s fast path against the evictor"). A record a
    // loop took meanwhile stays live; the bump only makes cached lookups of it miss once.
    s.generation.fetch_add(1, std::memory_order_seq_cst);
    if (s.users.load(std::memory_order_seq_cst) != 0) return false;
    {
        std::lock_guard site_lock(s.mutex);  // this record's users are gone; a stripe-mate may hold it a moment
        s.stats.fold_into(folded_);
        s.stats.clear();
        s.history = site_history{};
        s.chain.clear();
    }
    const auto [first, last] = by_hash_.equal_range(s.hash);
    for (auto it = first; it != last; ++it) {
        if (it->second == &s) {
            by_hash_.erase(it);
            break;
        }
    }
    s.live = false;
    free_.push_back(&s);
    --live_;
    return true;
}

namespace {
site_stats snapshot_locked(const site_state& s) {
    site_stats out = s.stats.snapshot(s.display_name);
    out.tuning = s.chain.tuning();
    out.policies = s.chain.statuses();
    out.counters = s.counters.instance;
    return out;
}
}  // namespace

std::vector<site_stats> site_registry::snapshot() {
    std::lock_guard lock(mutex_);
    std::vector<site_state*> shown;
    shown.reserve(live_);
    for (const auto& s : pool_)
        if (s->live && s->visibility == site_visibility::user) shown.push_back(s.get());
    std::sort(shown.begin(), shown.end(), [](const site_state* a, const site_state* b) { return a->order < b->order; });
    std::vector<site_stats> out;
    out.reserve(shown.size() + 1);
    for (site_state* s : shown) {
        std::lock_guard site_lock(s->mutex);
        out.push_back(snapshot_locked(*s));
    }
    if (folded_.sites > 0) out.push_back(folded_.snapshot());
    return out;
}

std::optional<site_stats> site_registry::snapshot(const loop_site& site) {
    std::lock_guard lock(mutex_);
    site_state* s = lookup_locked(site, hash_of(site));
    if (s == nullptr) return std::nullopt;
    std::lock_guard site_lock(s->mutex);
    return snapshot_locked(*s);
}

void site_registry::reset() {
    std::lock_guard lock(mutex_);
    for (const auto& s : pool_) {
        if (!s->live) continue;
        std::lock_guard site_lock(s->mutex);
        s->history = site_history{};
        s->stats.clear();
        s->chain.clear();
    }
    folded_ = folded_totals{};
}

std::size_t site_registry::live_records() {
    std::lock_guard lock(mutex_);
    return live_;
}

std::size_t site_registry::pool_records() {
    std::lock_guard lock(mutex_);
    return pool_.size();
}

void record_empty_call(site_state& st, const schedule& used) {
    {
        std::lock_guard lock(st.mutex);
        st.stats.add_empty(used);
    }
    count_empty_loop();
}

}  // namespace aloe::loop

#include "omp/omp_site.hpp"

#include "omp/fork_lock.hpp"

#include "omp/interposer_settings.hpp"
#include "runtime/report.hpp"

#include <array>
#include <iterator>
#include <memory>
#include <string>

namespace aloe::omp {

std::atomic<const char*> program_sets_threads{nullptr};

namespace {

// Far more sites than a program usually has; past it, sites share one overflow record
// (generated code can have more: 90 functions of 100 loops).
constexpr std::size_t table_size = 1 << 13;

struct site_table {
    std::array<std::atomic<const void*>, table_size> keys{};
    std::array<std::atomic<omp_site*>, table_size> sites{};
    std::mutex mutex;  // creation only
    std::vector<std::unique_ptr<omp_site>> owned;
    std::atomic<omp_site*> overflow{nullptr};  // made at the first site the table has no room for
};

// One table per kind: a combined parallel loop is one call, hence one address, for both
// its region and its loop. Never destroyed (threads may outlive statics); reachable for the
// fork hooks without a function-local static's guard.
constinit std::atomic<site_table*> tables[2] = {nullptr, nullptr};

site_table& table(site_kind kind) {
    static site_table* const made = [] {
        tables[0].store(new site_table, std::memory_order_release);
        tables[1].store(new site_table, std::memory_order_release);
        return tables[0].load(std::memory_order_relaxed);
    }();
    (void)made;
    return *tables[kind == site_kind::region ? 0 : 1].load(std::memory_order_acquire);
}

std::size_t slot_of(const void* address) {
    auto x = reinterpret_cast<std::uintptr_t>(address);
    x ^= x >> 17;
    x *= 0x9E3779B97F4A7C15ULL;
    return static_cast<std::size_t>(x >> 40) & (table_size - 1);
}

void name_site(omp_site& s) {
    s.code = runtime::locate_code(s.address);
    s.name = runtime::code_site_name(s.code);
}

// The site's counters, under its name as the instance ('{', '}' and '*' would break a
// counter name: replaced).
void register_site_counters(omp_site& s) {
    std::string instance = s.name;
    for (char& c : instance)
        if (c == '{' || c == '}' || c == '*') c = '_';
    using runtime::register_counter;
    using unit = aloe::counter_unit;
    if (s.kind == site_kind::loop) {
        s.taken = register_counter({"loop", "taken-runs", unit::count, "invocations aloe ran", instance});
        s.forwarded = register_counter({"loop", "forwarded-runs", unit::count, "invocations handed to libgomp", instance});
        s.forwarded_iterations =
            register_counter({"loop", "forwarded-iterations", unit::count, "iterations libgomp ran", instance});
        s.forwarded_time = register_counter(
            {"loop", "time/forwarded", unit::nanoseconds, "forwarded loops, thread 0's start to end", instance});
    } else {
        s.invocations = register_counter({"region", "runs", unit::count, "executions of the region", instance});
        s.region_time = register_counter({"region", "time", unit::nanoseconds, "fork to join, summed", instance});
        s.imbalance = register_counter(
            {"region", "imbalance", unit::ratio, "max/mean busy time of each run, summed", instance});
    }
}

omp_site* create(site_table& t, const void* address, site_kind kind) {
    auto site = std::make_unique<omp_site>();
    site->kind = kind;
    site->address = address;
    if (address != nullptr) {
        name_site(*site);
    } else {
        site->name = "(sites beyond the first " + std::to_string(table_size) + ")";
    }
    if (kind == site_kind::loop) {
        const loop_rules& rules = settings().rules;
        if (rules.names_source_lines() && address != nullptr) {
            // The return address is just past the call: look up the call itself.
            code_address call = site->code;
            call.offset -= 1;
            site->source = source_lines({call}).front();
        }
        site->rule = rules.match(site->name, file_and_line(site->source));
        site->aloe_site = &loop::site_registry::instance().pin(loop_site(site->name));
    }
    try {
        register_site_counters(*site);
    } catch (const std::exception& e) {
        // Its counts are dropped (disabled handles); the program runs on.
        runtime::report_once({runtime::report_level::warning, runtime::report_category::omp, "W505",
                              std::string("cannot register a site's counters: ") + e.what(),
                              "that site's counts are not kept"});
    }
    omp_site* raw = site.get();
    t.owned.push_back(std::move(site));
    return raw;
}

// The record every site beyond the table's room shares: a real one (pinned aloe site, in the
// report), made once, with a warning that their statistics are merged.
[[gnu::cold, gnu::noinline]] omp_site& overflow_site(site_table& t, site_kind kind) {
    if (omp_site* s = t.overflow.load(std::memory_order_acquire)) return *s;
    std::lock_guard lock(t.mutex);
    if (omp_site* s = t.overflow.load(std::memory_order_acquire)) return *s;
    omp_site* s = create(t, nullptr, kind);
    t.overflow.store(s, std::memory_order_release);
    runtime::report_once({runtime::report_level::warning, runtime::report_category::omp, "W504",
                          "the program has more than " + std::to_string(table_size) + " OpenMP " +
                              (kind == site_kind::loop ? "loop" : "region") + " call sites",
                          "one shared record for the rest (their statistics merged)"});
    return *s;
}

[[gnu::noinline]] omp_site& find_or_create(const void* address, site_kind kind) {
    site_table& t = table(kind);
    std::size_t i = slot_of(address);
    for (std::size_t probes = 0; probes < table_size; ++probes, i = (i + 1) & (table_size - 1)) {
        const void* key = t.keys[i].load(std::memory_order_acquire);
        // The site is stored before its key is released: a key seen means its site is there.
        if (key == address) return *t.sites[i].load(std::memory_order_acquire);
        if (key != nullptr) continue;
        std::lock_guard lock(t.mutex);
        const void* again = t.keys[i].load(std::memory_order_acquire);
        if (again == address) return *t.sites[i].load(std::memory_order_acquire);
        if (again != nullptr) continue;  // another site took this slot meanwhile: probe on
        omp_site* s = create(t, address, kind);
        t.sites[i].store(s, std::memory_order_release);
        t.keys[i].store(address, std::memory_order_release);
        return *s;
    }
    return overflow_site(t, kind);
}

// Each thread's last site of each kind: a loop met again and again (the steady state) is
// found with one compare. Sites are never destroyed, so a kept pointer stays valid.
struct last_site {
    const void* address = nullptr;
    omp_site* site = nullptr;
};
constinit thread_local last_site last_of_kind[2] __attribute__((tls_model("initial-exec"))) = {};

}  // namespace

omp_site& site_at(const void* address, site_kind kind) {
    last_site& last = last_of_kind[kind == site_kind::region ? 0 : 1];
    if (last.site != nullptr && last.address == address) [[likely]] return *last.site;
    omp_site& s = find_or_create(address, kind);
    last = {address, &s};
    return s;
}

namespace {
// What the forking thread locked (fork_lock.hpp): a table may be made between the hooks.
constinit thread_local std::mutex* tables_locked_for_fork[std::size(tables)] __attribute__((tls_model("initial-exec"))) = {};
}  // namespace

void lock_site_tables_for_fork() noexcept {
    for (std::size_t i = 0; i < std::size(tables); ++i) {
        site_table* p = tables[i].load(std::memory_order_acquire);
        lock_for_fork(p != nullptr ? &p->mutex : nullptr, tables_locked_for_fork[i]);
    }
}

void unlock_site_tables_after_fork() noexcept {
    for (std::size_t i = std::size(tables); i-- > 0;) unlock_after_fork(tables_locked_for_fork[i]);
}

void forget_site_counts_in_child() noexcept {
    for (std::size_t i = 0; i < std::size(tables); ++i) {
        if (tables_locked_for_fork[i] == nullptr) continue;  // none yet at the fork
        site_table* p = tables[i].load(std::memory_order_relaxed);
        for (const auto& s : p->owned) {
            s->threads_last.store(0, std::memory_order_relaxed);
            s->threads_max.store(0, std::memory_order_relaxed);
        }
    }
}

std::vector<omp_site*> all_sites(site_kind kind) {
    site_table& t = table(kind);
    std::lock_guard lock(t.mutex);
    std::vector<omp_site*> out;
    for (const auto& s : t.owned) out.push_back(s.get());
    return out;
}

}  // namespace aloe::omp

#include "omp/omp_site.hpp"

#include "omp/interposer_settings.hpp"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <memory>

namespace aloe::omp {

std::atomic<const char*> program_sets_threads{nullptr};

namespace {

// Far more sites than a program has; past it, sites share one overflow record.
constexpr std::size_t table_size = 1 << 13;

struct site_table {
    std::array<std::atomic<const void*>, table_size> keys{};
    std::array<std::atomic<omp_site*>, table_size> sites{};
    std::mutex mutex;  // creation only
    std::vector<std::unique_ptr<omp_site>> owned;
    omp_site overflow;
};

// One table per kind: a combined parallel loop is one call, hence one address, for both
// its region and its loop.
site_table& table(site_kind kind) {
    static site_table* regions = new site_table;  // never destroyed: threads may outlive statics
    static site_table* loops = new site_table;
    return kind == site_kind::region ? *regions : *loops;
}

std::size_t slot_of(const void* address) {
    auto x = reinterpret_cast<std::uintptr_t>(address);
    x ^= x >> 17;
    x *= 0x9E3779B97F4A7C15ULL;
    return static_cast<std::size_t>(x >> 40) & (table_size - 1);
}

std::string main_program_path() {
    char path[4096];
    const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    return n > 0 ? std::string(path, static_cast<std::size_t>(n)) : std::string();
}

void name_site(omp_site& s) {
    Dl_info info{};
    link_map* map = nullptr;
    const auto address = reinterpret_cast<std::uintptr_t>(s.address);
    if (dladdr1(s.address, &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP) != 0 && map != nullptr) {
        // l_addr is the load bias: 0 for a non-PIE executable, the base for PIE and libraries.
        s.code.offset = address - map->l_addr;
        s.code.module = map->l_name != nullptr && map->l_name[0] != '\0' ? map->l_name : main_program_path();
    } else {
        s.code.offset = address;
    }
    std::string base = s.code.module.empty() ? "?" : s.code.module;
    if (const std::size_t slash = base.rfind('/'); slash != std::string::npos) base = base.substr(slash + 1);
    char hex[32];
    std::snprintf(hex, sizeof hex, "+0x%llx", static_cast<unsigned long long>(s.code.offset));
    s.name = base + hex;
}

omp_site* create(site_table& t, const void* address, site_kind kind) {
    auto site = std::make_unique<omp_site>();
    site->kind = kind;
    site->address = address;
    name_site(*site);
    if (kind == site_kind::loop) {
        const loop_rules& rules = settings().rules;
        if (rules.names_source_lines()) {
            // The return address is just past the call: look up the call itself.
            code_address call = site->code;
            call.offset -= 1;
            site->source = source_lines({call}).front();
        }
        site->rule = rules.match(site->name, file_and_line(site->source));
        site->aloe_site = &loop::site_registry::instance().pin(loop_site(site->name));
    }
    omp_site* raw = site.get();
    t.owned.push_back(std::move(site));
    return raw;
}

}  // namespace

omp_site& site_at(const void* address, site_kind kind) {
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
    return t.overflow;
}

std::vector<omp_site*> all_sites(site_kind kind) {
    site_table& t = table(kind);
    std::lock_guard lock(t.mutex);
    std::vector<omp_site*> out;
    for (const auto& s : t.owned) out.push_back(s.get());
    return out;
}

}  // namespace aloe::omp

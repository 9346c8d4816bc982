#include "runtime/code_address.hpp"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <cstdio>

namespace aloe::runtime {

code_address locate_code(const void* address) {
    Dl_info info{};
    link_map* map = nullptr;
    const auto raw = reinterpret_cast<std::uintptr_t>(address);
    code_address where;
    if (dladdr1(address, &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP) != 0 && map != nullptr) {
        // l_addr is the load bias: 0 for a non-PIE executable, the base for PIE and libraries.
        where.offset = raw - map->l_addr;
        where.module = map->l_name != nullptr && map->l_name[0] != '\0' ? map->l_name : main_program_path();
    } else {
        where.offset = raw;
    }
    return where;
}

std::string code_site_name(const code_address& where) {
    std::string base = where.module.empty() ? "?" : where.module;
    if (const std::size_t slash = base.rfind('/'); slash != std::string::npos) base = base.substr(slash + 1);
    char hex[32];
    std::snprintf(hex, sizeof hex, "+0x%llx", static_cast<unsigned long long>(where.offset));
    return base + hex;
}

std::string main_program_path() {
    char path[4096];
    const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    return n > 0 ? std::string(path, static_cast<std::size_t>(n)) : std::string();
}

}  // namespace aloe::runtime

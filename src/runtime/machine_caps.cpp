// Probes for the optional parts of a machine (DESIGN.md, "Invariants": without counters,
// cpufreq or MPI everything still runs, and the missing part is reported once).
//
// Every sysfs path is joined under probe_options::sysfs_root, so tests replay fake trees
// from tests/data/sysfs/. Each probe returns what it found, or the fallback aloe uses.
#include "runtime/machine_caps.hpp"

#include "runtime/report.hpp"
#include "runtime/small_file.hpp"

#include <dlfcn.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <sstream>
#include <system_error>

namespace aloe::runtime {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view counters_fallback = "clock-based timing (software events only)";
constexpr std::string_view cpufreq_fallback = "no DVFS: frequency policies report and stay off";
constexpr std::string_view rapl_fallback = "no energy readings: power models use time only";
constexpr std::string_view mpi_fallback = "single process: slack-conscious scheduling off";

// --- hardware counters --------------------------------------------------------------------

// Core PMUs as the kernel names them: "cpu" on most x86, "cpu_core"/"cpu_atom" on hybrid
// Intel parts.
constexpr std::string_view pmu_names[] = {"cpu", "cpu_core", "cpu_atom"};

// Opens (and closes) an instruction counter on the calling thread; 0 or errno.
int try_instruction_counter() {
    perf_event_attr attr{};
    attr.type = PERF_TYPE_HARDWARE;
    attr.size = sizeof attr;
    attr.config = PERF_COUNT_HW_INSTRUCTIONS;
    attr.disabled = 1;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    const long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) return errno;
    close(static_cast<int>(fd));
    return 0;
}

capability probe_counters(const probe_options& opts) {
    capability cap{"hardware counters", false, "", ""};
    std::string pmu;
    for (std::string_view name : pmu_names) {
        std::error_code ec;
        if (fs::exists(under_root(opts.sysfs_root, "sys/bus/event_source/devices") / name, ec)) {
            pmu = name;
            break;
        }
    }
    const std::string pmu_text = pmu.empty() ? "no core PMU in sysfs" : "core PMU '" + pmu + "'";
    if (!opts.try_perf_event_open) {
        cap.available = !pmu.empty();
        cap.detail = pmu_text + " (perf_event_open not tried)";
    } else if (const int err = try_instruction_counter(); err == 0) {
        cap.available = true;
        cap.detail = "perf_event_open: instructions counter; " + pmu_text;
    } else {
        cap.detail = std::string("perf_event_open(instructions): ") + std::strerror(err) +
                     "; " + pmu_text;
    }
    return cap;
}

// --- cpufreq --------------------------------------------------------------------------------

capability probe_cpufreq(const probe_options& opts) {
    capability cap{"cpufreq", false, "", ""};
    constexpr std::string_view dir = "sys/devices/system/cpu/cpu0/cpufreq";
    const fs::path base = under_root(opts.sysfs_root, dir);
    const small_file driver = read_small_file(base / "scaling_driver");
    if (!driver.text || driver.text->empty()) {
        cap.detail = "no " + std::string(dir) + "/scaling_driver";
        return cap;
    }
    cap.available = true;
    cap.detail = "driver " + *driver.text;
    const small_file governor = read_small_file(base / "scaling_governor");
    cap.detail += ", governor " + governor.text.value_or("unknown");
    const small_file freqs = read_small_file(base / "scaling_available_frequencies");
    std::vector<long long> khz;
    if (freqs.text) {
        std::istringstream in(*freqs.text);
        for (long long f = 0; in >> f;) khz.push_back(f);
    }
    if (khz.empty()) {
        cap.detail += ", frequencies not listed";
    } else {
        const auto [lo, hi] = std::minmax_element(khz.begin(), khz.end());
        cap.detail += ", " + std::to_string(khz.size()) + " frequencies " +
                      std::to_string(*lo) + "-" + std::to_string(*hi) + " kHz";
    }
    return cap;
}

// --- RAPL -----------------------------------------------------------------------------------

capability probe_rapl(const probe_options& opts) {
    capability cap{"rapl", false, "", ""};
    const fs::path powercap = under_root(opts.sysfs_root, "sys/class/powercap");
    std::vector<fs::path> zones;
    std::error_code ec;
    for (fs::directory_iterator it(powercap, ec), end; !ec && it != end; it.increment(ec)) {
        if (it->path().filename().string().rfind("intel-rapl:", 0) == 0) {
            zones.push_back(it->path());
        }
    }
    std::sort(zones.begin(), zones.end());
    std::string readable;
    int domains = 0;
    std::string unreadable;
    for (const fs::path& zone : zones) {
        const small_file energy = read_small_file(zone / "energy_uj");
        if (!energy.text) {
            if (unreadable.empty() && energy.error != ENOENT) {
                unreadable = zone.filename().string() + "/energy_uj: " + std::strerror(energy.error);
            }
            continue;
        }
        ++domains;
        const small_file name = read_small_file(zone / "name");
        if (!readable.empty()) readable += ", ";
        readable += name.text.value_or(zone.filename().string());
    }
    if (domains > 0) {
        cap.available = true;
        cap.detail = std::to_string(domains) + (domains == 1 ? " domain: " : " domains: ") +
                     readable;
    } else if (!unreadable.empty()) {
        cap.detail = "cannot read " + unreadable;
    } else {
        cap.detail = "no sys/class/powercap/intel-rapl:* with energy_uj";
    }
    return cap;
}

// --- MPI ------------------------------------------------------------------------------------

capability probe_mpi(const probe_options& opts) {
    capability cap{"mpi", false, "", ""};
    // First a library the process already has (an MPI program), then one it could load.
    struct attempt {
        int flags;
        std::string_view how;
    };
    constexpr attempt attempts[] = {{RTLD_LAZY | RTLD_NOLOAD, "already loaded"},
                                    {RTLD_LAZY, "loadable"}};
    for (const attempt& a : attempts) {
        for (const std::string& lib : opts.mpi_libraries) {
            if (void* handle = dlopen(lib.c_str(), a.flags)) {
                dlclose(handle);
                cap.available = true;
                cap.detail = lib + " (" + std::string(a.how) + ")";
                return cap;
            }
        }
    }
    std::string tried;
    for (const std::string& lib : opts.mpi_libraries) {
        tried += tried.empty() ? lib : ", " + lib;
    }
    cap.detail = "none of " + (tried.empty() ? std::string("(no libraries)") : tried) +
                 " can be opened";
    return cap;
}

}  // namespace

std::vector<capability> probe_machine(const probe_options& opts) {
    std::vector<capability> caps = {probe_counters(opts), probe_cpufreq(opts),
                                    probe_rapl(opts), probe_mpi(opts)};
    const std::string_view fallbacks[] = {counters_fallback, cpufreq_fallback, rapl_fallback,
                                          mpi_fallback};
    constexpr std::string_view ids[] = {"I401", "I402", "I403", "I404"};
    for (std::size_t i = 0; i < caps.size(); ++i) {
        if (caps[i].available) continue;
        caps[i].fallback = fallbacks[i];
        report_once({report_level::info, report_category::caps, ids[i],
                     caps[i].name + " unavailable (" + caps[i].detail + ")",
                     caps[i].fallback});
    }
    return caps;
}

}  // namespace aloe::runtime

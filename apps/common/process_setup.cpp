#include "process_setup.hpp"

#include "runtime/cpu_allowance.hpp"
#include "runtime/cpu_mask.hpp"

#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <system_error>

namespace aloe_apps {
namespace fs = std::filesystem;

namespace {

// Set in the re-executed process, so a second mismatch is an error, not a loop.
constexpr const char* reexec_marker = "ALOE_APPS_REEXECUTED";

std::string env_value(const char* name) {
    const char* v = std::getenv(name);
    return v == nullptr ? std::string() : std::string(v);
}

int collect_openmp(dl_phdr_info* info, std::size_t, void* data) {
    const std::string path = info->dlpi_name == nullptr ? "" : info->dlpi_name;
    const std::string name = fs::path(path).filename().string();
    if (name.starts_with("libgomp") || name.starts_with("libomp") || name.starts_with("libiomp")) {
        *static_cast<std::string*>(data) = path;
        return 1;
    }
    return 0;
}

// libomp.so.5: ALOE_APPS_LIBOMP if set, else next to the loaded libgomp (Debian puts both in
// the multiarch folder), else LLVM's own folders, newest first.
std::string find_libomp() {
    if (std::string v = env_value("ALOE_APPS_LIBOMP"); !v.empty()) {
        if (!fs::exists(v)) throw std::runtime_error("ALOE_APPS_LIBOMP='" + v + "' does not exist");
        return v;
    }
    std::string gomp;
    dl_iterate_phdr(collect_openmp, &gomp);
    std::vector<fs::path> candidates;
    if (!gomp.empty()) candidates.push_back(fs::path(gomp).parent_path() / "libomp.so.5");
    for (int v = 20; v >= 11; --v) candidates.push_back("/usr/lib/llvm-" + std::to_string(v) + "/lib/libomp.so.5");
    for (const fs::path& c : candidates) {
        std::error_code ec;
        if (fs::exists(c, ec)) return fs::canonical(c, ec).string();
    }
    throw std::runtime_error(
        "--runtime libomp: LLVM libomp (libomp.so.5) not found; install Debian's libomp-dev or set ALOE_APPS_LIBOMP");
}

// A folder holding libgomp.so.1 -> libomp.so.5, one per user, made atomically (symlink to a
// temporary name, then rename), so concurrent runs never see a half-made link.
std::string libomp_shim_dir() {
    const std::string target = find_libomp();
    std::string tmp = env_value("TMPDIR");
    if (tmp.empty()) tmp = "/tmp";
    const fs::path dir = fs::path(tmp) / ("aloe-libomp-shim-" + std::to_string(getuid()));
    std::error_code ec;
    fs::create_directories(dir, ec);
    // The loader will map whatever this folder holds: it must be ours and writable by no one
    // else, or another user could put their own libgomp.so.1 in front of the program.
    struct stat st {};
    if (lstat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == getuid() && (st.st_mode & 077) != 0) {
        chmod(dir.c_str(), 0700);  // made under a permissive umask: close it (re-checked below)
    }
    if (lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 022) != 0)
        throw std::runtime_error("--runtime libomp: '" + dir.string() +
                                 "' is not a folder owned by this user and closed to others; remove it or set TMPDIR");
    const fs::path link = dir / "libgomp.so.1";
    if (fs::read_symlink(link, ec) != fs::path(target)) {
        const fs::path temp = dir / ("libgomp.so.1.tmp" + std::to_string(getpid()));
        fs::remove(temp, ec);
        fs::create_symlink(target, temp);
        fs::rename(temp, link);
    }
    return dir.string();
}

}  // namespace

namespace {

// The CPUs as the first process saw them, carried across the re-execution: GNU libgomp pins
// the initial thread when it loads with OMP_PROC_BIND set, so the re-executed process's own
// mask would show one CPU.
constexpr const char* cpus_variable = "ALOE_APPS_CPUS";

}  // namespace

std::vector<int> allowed_cpus() {
    const std::string carried = env_value(cpus_variable);
    if (carried.empty()) return aloe::runtime::cpus_in_affinity_mask();
    std::vector<int> cpus;
    std::size_t start = 0;
    while (start < carried.size()) {
        const std::size_t end = std::min(carried.find(',', start), carried.size());
        cpus.push_back(std::atoi(carried.substr(start, end - start).c_str()));
        start = end + 1;
    }
    return cpus;
}

void ensure_environment(const std::vector<std::pair<std::string, std::string>>& wanted, bool use_libomp,
                        const std::vector<std::string>& words) {
    bool changed = false;
    if (env_value(cpus_variable).empty()) {
        // If the caller set OMP_PROC_BIND, libgomp has pinned us already: widen back to the
        // CPUs the process was given (taskset, Slurm, a cgroup cpuset; the union of libgomp's
        // places when its binding came first: runtime/cpu_allowance.hpp), never beyond them.
        const std::string bind = env_value("OMP_PROC_BIND");
        if (!bind.empty() && bind != "false" && bind != "FALSE") {
            if (const auto& given = aloe::runtime::process_cpu_allowance().mask; given && !given->empty()) {
                cpu_set_t set;
                CPU_ZERO(&set);
                for (const int c : *given)
                    if (c >= 0 && c < CPU_SETSIZE) CPU_SET(c, &set);
                sched_setaffinity(0, sizeof set, &set);
            }
        }
        std::string list;
        for (const int c : aloe::runtime::cpus_in_affinity_mask()) list += (list.empty() ? "" : ",") + std::to_string(c);
        setenv(cpus_variable, list.c_str(), 1);
        changed = true;
    }
    for (const auto& [name, value] : wanted) {
        if (env_value(name.c_str()) == value) continue;
        changed = true;
        if (value.empty()) unsetenv(name.c_str());
        else setenv(name.c_str(), value.c_str(), 1);
    }
    const bool libomp_loaded = loaded_openmp_library().starts_with("libomp");
    if (use_libomp != libomp_loaded) {
        changed = true;
        std::string path = env_value("LD_LIBRARY_PATH");
        const std::string shim = use_libomp ? libomp_shim_dir() : std::string();
        // Drop any earlier shim, then put ours first.
        std::string kept;
        std::size_t start = 0;
        while (start <= path.size()) {
            const std::size_t end = std::min(path.find(':', start), path.size());
            const std::string part = path.substr(start, end - start);
            if (!part.empty() && part.find("aloe-libomp-shim-") == std::string::npos)
                kept += (kept.empty() ? "" : ":") + part;
            start = end + 1;
        }
        const std::string next = shim.empty() ? kept : (kept.empty() ? shim : shim + ":" + kept);
        if (next.empty()) unsetenv("LD_LIBRARY_PATH");
        else setenv("LD_LIBRARY_PATH", next.c_str(), 1);
    }
    if (!changed) return;
    if (!env_value(reexec_marker).empty()) {
        throw std::runtime_error(
            "the environment still differs after re-executing (is LD_PRELOAD or a wrapper overriding "
            "OMP_PROC_BIND, ALOE_PROC_BIND or the OpenMP library?)");
    }
    setenv(reexec_marker, "1", 1);
    std::vector<char*> argv;
    // ALOE_APPS_SELF: the program's own starter when it runs through one (a loader wrapper on
    // a machine without packages: bench/tasks/make_device_kit.sh), where /proc/self/exe would
    // be the dynamic loader itself.
    std::string self = env_value("ALOE_APPS_SELF").empty() ? std::string("/proc/self/exe") : env_value("ALOE_APPS_SELF");
    argv.push_back(const_cast<char*>(words.front().c_str()));  // NOLINT: execv's signature
    for (std::size_t i = 1; i < words.size(); ++i) argv.push_back(const_cast<char*>(words[i].c_str()));
    argv.push_back(nullptr);
    execv(self.c_str(), argv.data());
    throw std::runtime_error(std::string("cannot re-execute the program: ") + std::strerror(errno));
}

std::string loaded_openmp_library() {
    std::string path;
    dl_iterate_phdr(collect_openmp, &path);
    if (path.empty()) return {};
    std::error_code ec;
    const fs::path real = fs::canonical(path, ec);
    return (ec ? fs::path(path) : real).filename().string();
}

std::string loaded_library(const std::string& prefix) {
    struct search {
        const std::string& prefix;
        std::string path;
    } state{prefix, {}};
    dl_iterate_phdr(
        [](dl_phdr_info* info, std::size_t, void* data) {
            auto& s = *static_cast<search*>(data);
            const std::string path = info->dlpi_name == nullptr ? "" : info->dlpi_name;
            if (!fs::path(path).filename().string().starts_with(s.prefix)) return 0;
            s.path = path;
            return 1;
        },
        &state);
    if (state.path.empty()) return {};
    std::error_code ec;
    const fs::path real = fs::canonical(state.path, ec);
    return (ec ? fs::path(state.path) : real).filename().string();
}

bool pin_current_thread(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

}  // namespace aloe_apps

#include "adapt/tuning_file.hpp"

#include "runtime/config.hpp"
#include "runtime/output_file.hpp"
#include "runtime/report.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace aloe::adapt {

namespace {

constexpr std::string_view magic = "aloe-tuning 1";
constexpr std::size_t max_file_bytes = 64u << 20;

// Fields are separated by spaces: a byte that is a space, a control byte, '%', or not
// ASCII is written as %XX, and an empty field as "-" (a field that is "-" itself: %2D).
std::string encode(std::string_view s) {
    if (s.empty()) return "-";
    if (s == "-") return "%2D";
    std::string out;
    for (const char c : s) {
        const auto u = static_cast<unsigned char>(c);
        if (u <= 0x20 || u >= 0x7f || c == '%') {
            char hex[4];
            std::snprintf(hex, sizeof hex, "%%%02X", u);
            out += hex;
        } else {
            out += c;
        }
    }
    return out;
}

bool decode(std::string_view s, std::string& out) {
    out.clear();
    if (s == "-") return true;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '%') {
            out += s[i];
            continue;
        }
        unsigned v = 0;
        if (i + 2 >= s.size()) return false;
        const auto r = std::from_chars(s.data() + i + 1, s.data() + i + 3, v, 16);
        if (r.ec != std::errc() || r.ptr != s.data() + i + 3) return false;
        out += static_cast<char>(v);
        i += 2;
    }
    return true;
}

std::string number(double x) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", x);
    return buf;
}

bool read_double(std::string_view s, double& x) {
    const std::string t(s);
    char* end = nullptr;
    errno = 0;
    x = std::strtod(t.c_str(), &end);
    return errno == 0 && end == t.c_str() + t.size() && !t.empty() && std::isfinite(x) && x >= 0;
}

template <class T>
bool read_uint(std::string_view s, T& x) {
    const auto r = std::from_chars(s.data(), s.data() + s.size(), x);
    return r.ec == std::errc() && r.ptr == s.data() + s.size() && !s.empty();
}

std::vector<std::string_view> fields_of(std::string_view line) {
    std::vector<std::string_view> f;
    std::size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && line[i] == ' ') ++i;
        const std::size_t b = i;
        while (i < line.size() && line[i] != ' ') ++i;
        if (i > b) f.push_back(line.substr(b, i - b));
    }
    return f;
}

// Whole file, or nothing: false with errno set when it cannot be read (ENOENT: missing).
bool read_whole(const std::string& path, std::string& text) {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || static_cast<std::size_t>(st.st_size) > max_file_bytes) {
        const int e = S_ISREG(st.st_mode) ? EFBIG : EINVAL;
        close(fd);
        errno = e;
        return false;
    }
    text.assign(static_cast<std::size_t>(st.st_size), '\0');
    std::size_t got = 0;
    while (got < text.size()) {
        const ssize_t n = read(fd, text.data() + got, text.size() - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += static_cast<std::size_t>(n);
    }
    close(fd);
    text.resize(got);
    return true;
}

void note(runtime::report_level level, std::string_view id, std::string what, std::string fallback = {}) {
    runtime::report_once({level, runtime::report_category::loop, id, std::move(what), std::move(fallback)});
}

}  // namespace

tuning_file::tuning_file(std::string path, std::string machine, build_id_lookup build_id_of)
    : path_(std::move(path)), machine_(std::move(machine)), build_id_of_(build_id_of) {}

std::string tuning_file::format(const std::map<key, entry>& entries) {
    std::string out =
        "# aloe tuning file (docs/tuning.md): one 'site' line per adaptive loop site and team size,\n"
        "# its raced candidates below it (time per iteration in seconds). Written by aloe at exit.\n";
    out += magic;
    out += '\n';
    for (const auto& [k, e] : entries) {
        const site_memory& m = e.memory;
        std::string weights;
        for (const double w : m.weights) weights += (weights.empty() ? "" : ",") + number(w);
        out += "site " + encode(k.machine) + ' ' + encode(k.build_id) + ' ' + std::to_string(k.threads) + ' ' +
               encode(k.site) + ' ' + std::to_string(m.invocations) + ' ' + (m.converged ? "1" : "0") + ' ' +
               encode(m.chosen) + ' ' + (weights.empty() ? "-" : weights) + '\n';
        for (const candidate_memory& c : m.candidates)
            out += "cand " + encode(c.schedule) + ' ' + (c.weighted ? "1" : "0") + ' ' + std::to_string(c.samples) + ' ' +
                   number(c.mean_s) + ' ' + number(c.m2) + ' ' + (c.out ? "1" : "0") + '\n';
    }
    return out;
}

bool tuning_file::parse(std::string_view text, std::map<key, entry>& entries, std::string& error) {
    entries.clear();
    bool versioned = false;
    site_memory* current = nullptr;
    std::size_t line_no = 0;
    std::size_t at = 0;
    const auto fail = [&](const std::string& why) {
        error = "line " + std::to_string(line_no) + ": " + why;
        entries.clear();
        return false;
    };
    while (at < text.size()) {
        const std::size_t nl = text.find('\n', at);
        if (nl == std::string_view::npos) {
            ++line_no;
            return fail("the last line has no newline (a truncated file?)");
        }
        const std::string_view line = text.substr(at, nl - at);
        at = nl + 1;
        ++line_no;
        if (line.empty() || line.front() == '#') continue;
        if (!versioned) {
            if (line != magic) return fail("expected '" + std::string(magic) + "' (another version, or not a tuning file)");
            versioned = true;
            continue;
        }
        const std::vector<std::string_view> f = fields_of(line);
        if (f.empty()) return fail("blank line with spaces");
        if (f[0] == "site") {
            if (f.size() != 9) return fail("a 'site' line has 9 fields, this one " + std::to_string(f.size()));
            key k;
            entry e;
            if (!decode(f[1], k.machine) || !decode(f[2], k.build_id) || !decode(f[4], k.site) ||
                !decode(f[7], e.memory.chosen))
                return fail("a bad %XX escape");
            if (!read_uint(f[3], k.threads) || k.threads < 1 || k.threads > 4096) return fail("bad team size '" + std::string(f[3]) + "'");
            if (!read_uint(f[5], e.memory.invocations)) return fail("bad invocation count");
            if (f[6] != "0" && f[6] != "1") return fail("converged is 0 or 1");
            e.memory.converged = f[6] == "1";
            if (f[8] != "-") {
                std::string_view w = f[8];
                while (!w.empty()) {
                    const std::size_t comma = w.find(',');
                    double x = 0;
                    if (!read_double(w.substr(0, comma), x) || x <= 0) return fail("bad block weight");
                    e.memory.weights.push_back(x);
                    w = comma == std::string_view::npos ? std::string_view() : w.substr(comma + 1);
                }
                if (e.memory.weights.size() != static_cast<std::size_t>(k.threads))
                    return fail("weights are one per thread of the team");
            }
            if (k.site.empty()) return fail("a site without a name");
            if (entries.count(k) != 0) return fail("the same site, build and team size twice");
            current = &entries.emplace(std::move(k), std::move(e)).first->second.memory;
            continue;
        }
        if (f[0] == "cand") {
            if (current == nullptr) return fail("a 'cand' line before any 'site' line");
            if (f.size() != 7) return fail("a 'cand' line has 7 fields, this one " + std::to_string(f.size()));
            candidate_memory c;
            if (!decode(f[1], c.schedule) || c.schedule.empty()) return fail("a bad schedule field");
            if ((f[2] != "0" && f[2] != "1") || (f[6] != "0" && f[6] != "1")) return fail("flags are 0 or 1");
            c.weighted = f[2] == "1";
            c.out = f[6] == "1";
            if (!read_uint(f[3], c.samples) || !read_double(f[4], c.mean_s) || !read_double(f[5], c.m2))
                return fail("bad sample count, mean or squared deviations");
            current->candidates.push_back(std::move(c));
            continue;
        }
        return fail("unknown line kind '" + std::string(f[0].substr(0, 20)) + "'");
    }
    if (!versioned) {
        if (text.empty()) return true;  // an empty file: no entries yet
        return fail("no '" + std::string(magic) + "' line");
    }
    return true;
}

bool tuning_file::load_locked(std::string& error) {
    loaded_ = true;
    std::string text;
    if (!read_whole(path_, text)) {
        if (errno == ENOENT) return true;
        corrupt_ = true;
        error = path_ + ": " + std::strerror(errno);
        return false;
    }
    std::string why;
    if (!parse(text, on_disk_, why)) {
        corrupt_ = true;
        error = path_ + ": " + why;
        return false;
    }
    return true;
}

bool tuning_file::load(std::string& error) {
    std::lock_guard lock(mutex_);
    return load_locked(error);
}

std::optional<site_memory> tuning_file::recall(std::string_view site, int threads) {
    std::lock_guard lock(mutex_);
    if (!loaded_) {
        std::string error;
        if (!load_locked(error))
            note(runtime::report_level::warning, "W305",
                 "the ALOE_TUNING file " + error, "nothing is recalled from it and it is not written");
    }
    const std::string build_id = build_id_of_ != nullptr ? build_id_of_(site) : std::string();
    key k{machine_, build_id, std::string(site), threads};
    if (const auto it = kept_.find(k); it != kept_.end()) return it->second.memory;
    if (const auto it = on_disk_.find(k); it != on_disk_.end()) return it->second.memory;
    // Why nothing: another build of this module, or only other machines.
    bool other_build = false, other_machine = false;
    for (const auto& [dk, de] : on_disk_) {
        if (dk.site != k.site || dk.threads != threads) continue;
        if (dk.machine == machine_ && dk.build_id != build_id) other_build = true;
        if (dk.machine != machine_) other_machine = true;
    }
    const std::string module(site.substr(0, std::min(site.rfind("+0x"), site.size())));
    if (other_build)
        note(runtime::report_level::warning, "W307",
             "the ALOE_TUNING file " + path_ + " has entries of another build of " +
                 (site.rfind("+0x") != std::string_view::npos ? module : std::string("the program")) +
                 " (rebuilt since it was tuned)",
             "they are ignored, and replaced by this run's");
    else if (other_machine)
        note(runtime::report_level::warning, "W308",
             "the ALOE_TUNING file " + path_ + " has entries of another kind of machine only",
             "they are ignored and kept in the file; this machine's are added");
    return std::nullopt;
}

void tuning_file::keep(std::string_view site, int threads, const site_memory& memory) {
    const std::string build_id = build_id_of_ != nullptr ? build_id_of_(site) : std::string();
    std::lock_guard lock(mutex_);
    kept_[key{machine_, build_id, std::string(site), threads}].memory = memory;
}

void tuning_file::forget_kept() {
    std::lock_guard lock(mutex_);
    kept_.clear();
}

std::size_t tuning_file::kept_count() const {
    std::lock_guard lock(mutex_);
    return kept_.size();
}

bool tuning_file::write(std::string& error) {
    std::lock_guard lock(mutex_);
    if (kept_.empty()) return true;
    if (corrupt_) {
        error = path_ + " was not parseable when read: left as it was";
        return false;
    }
    // Several processes of a job write at once: each merges into what is on disk now, under
    // an exclusive lock on a sibling file (the tuning file itself is replaced by rename).
    const std::string lock_path = path_ + ".lock";
    const int fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        error = lock_path + ": " + std::strerror(errno);
        return false;
    }
    while (flock(fd, LOCK_EX) != 0 && errno == EINTR) {
    }
    std::map<key, entry> merged;
    std::string text, why;
    bool ok = true;
    if (read_whole(path_, text)) {
        if (!parse(text, merged, why)) {
            error = path_ + ": " + why + " (written by another process meanwhile?): left as it was";
            ok = false;
        }
    } else if (errno != ENOENT) {
        error = path_ + ": " + std::strerror(errno);
        ok = false;
    }
    if (ok) {
        for (const auto& [k, e] : kept_) {
            const auto it = merged.find(k);
            if (it == merged.end() || it->second.memory.invocations <= e.memory.invocations) merged[k] = e;
        }
        ok = runtime::write_output_file(path_, format(merged), error);
    }
    flock(fd, LOCK_UN);
    close(fd);
    return ok;
}

std::string machine_fingerprint() {
    std::string model;
    std::ifstream cpuinfo("/proc/cpuinfo");
    for (std::string line; std::getline(cpuinfo, line);) {
        if (line.rfind("model name", 0) == 0 || line.rfind("Processor", 0) == 0 || line.rfind("cpu model", 0) == 0) {
            const std::size_t colon = line.find(':');
            if (colon != std::string::npos) model = line.substr(line.find_first_not_of(" \t", colon + 1));
            break;
        }
    }
#if defined(__x86_64__)
    if (model.empty()) model = "x86_64";
#elif defined(__aarch64__)
    if (model.empty()) model = "aarch64";
#else
    if (model.empty()) model = "unknown cpu";
#endif
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return model + " / " + std::to_string(cpus > 0 ? cpus : 0) + " cpus";
}

namespace {

struct build_id_search {
    std::string module;  // basename wanted; empty: the main program
    std::string found;
    std::string path;
};

std::string basename_of(std::string_view path) {
    const std::size_t slash = path.rfind('/');
    return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

std::string main_program_path() {
    char buf[4096];
    const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

int find_build_id(dl_phdr_info* info, std::size_t, void* data) {
    auto& s = *static_cast<build_id_search*>(data);
    const bool is_main = info->dlpi_name == nullptr || info->dlpi_name[0] == '\0';
    const std::string path = is_main ? main_program_path() : std::string(info->dlpi_name);
    if (s.module.empty() ? !is_main : basename_of(path) != s.module) return 0;
    s.path = path;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr)& ph = info->dlpi_phdr[i];
        if (ph.p_type != PT_NOTE) continue;
        const auto* p = reinterpret_cast<const unsigned char*>(info->dlpi_addr + ph.p_vaddr);
        const unsigned char* end = p + ph.p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            ElfW(Nhdr) nh;
            std::memcpy(&nh, p, sizeof nh);
            const unsigned char* name = p + sizeof nh;
            const unsigned char* desc = name + ((nh.n_namesz + 3u) & ~3u);
            if (desc + nh.n_descsz > end) break;
            if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
                static const char digits[] = "0123456789abcdef";
                for (std::uint32_t k = 0; k < nh.n_descsz; ++k) {
                    s.found += digits[desc[k] >> 4];
                    s.found += digits[desc[k] & 15];
                }
                return 1;
            }
            p = desc + ((nh.n_descsz + 3u) & ~3u);
        }
    }
    return 1;  // the module, without a build-id
}

}  // namespace

std::string module_build_id(std::string_view site) {
    // Resolved once per module: the modules of a process do not change build.
    static std::mutex cache_mutex;
    static std::map<std::string, std::string, std::less<>> cache;
    const std::size_t plus = site.rfind("+0x");
    const std::string module = plus == std::string_view::npos ? std::string() : std::string(site.substr(0, plus));
    std::lock_guard lock(cache_mutex);
    if (const auto it = cache.find(module); it != cache.end()) return it->second;
    build_id_search s{module, {}, {}};
    dl_iterate_phdr(&find_build_id, &s);
    std::string id = s.found;
    if (id.empty() && !s.path.empty()) {
        struct stat st {};
        if (stat(s.path.c_str(), &st) == 0)
            id = "size-" + std::to_string(st.st_size) + "-mtime-" + std::to_string(st.st_mtim.tv_sec);
        note(runtime::report_level::info, "I312",
             "the module " + basename_of(s.path) + " has no GNU build-id: its ALOE_TUNING entries are keyed by its size and "
             "modification time");
    }
    cache.emplace(module, id);
    return id;
}

namespace {

tuning_file* the_file = nullptr;

void write_at_exit() {
    if (the_file == nullptr) return;
    std::string error;
    if (!the_file->write(error))
        note(runtime::report_level::warning, "W306", "the ALOE_TUNING file cannot be written: " + error,
             "this run's tuning is not kept");
}

void forget_in_child() {
    if (the_file != nullptr) the_file->forget_kept();
}

}  // namespace

tuning_memory* process_tuning_memory() {
    static std::once_flag once;
    std::call_once(once, [] {
        const std::string& path = runtime::current_config().tuning_file;
        if (path.empty()) return;
        // Never destroyed: written by an atexit handler, after static destructors may have run.
        the_file = new tuning_file(path, machine_fingerprint(), &module_build_id);
        // Say at once when it cannot be written, not only at exit.
        const std::size_t slash = path.rfind('/');
        const std::string folder = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
        if (access(folder.c_str(), W_OK | X_OK) != 0)
            note(runtime::report_level::warning, "W306",
                 "the ALOE_TUNING file " + path + " cannot be written: folder " + folder + ": " + std::strerror(errno),
                 "its entries are recalled if it can be read, but this run's tuning is not kept");
        std::atexit(&write_at_exit);
        pthread_atfork(nullptr, nullptr, &forget_in_child);
    });
    return the_file;
}

}  // namespace aloe::adapt

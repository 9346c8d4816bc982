#include "runtime/cgroup_limits.hpp"

#include "runtime/cpu_list.hpp"
#include "runtime/printable_text.hpp"
#include "runtime/report.hpp"
#include "runtime/small_file.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

namespace aloe::runtime {
namespace {

// One line of /proc/self/cgroup: "hierarchy-id:controller,list:/path" (v1), "0::/path" (v2).
struct membership {
    bool unified = false;
    std::vector<std::string> controllers;
    std::string path;
};

// One cgroup mount from /proc/self/mountinfo.
struct cgroup_mount {
    bool unified = false;
    std::vector<std::string> controllers;  // v1: the super options naming controllers
    std::string root;                      // the hierarchy's folder mounted there
    std::string mount_point;
};

// Where one controller's files are: the process's cgroup and its ancestors up to the
// mount root, deepest first, each as this process names it.
struct controller_dirs {
    bool unified = false;
    std::vector<std::string> levels;
};

std::vector<std::string> split(std::string_view s, char sep) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    for (;;) {
        const std::size_t end = s.find(sep, start);
        parts.emplace_back(s.substr(start, end == std::string_view::npos ? end : end - start));
        if (end == std::string_view::npos) return parts;
        start = end + 1;
    }
}

std::vector<std::string> words(std::string_view s) {
    std::vector<std::string> out;
    std::size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n')) ++i;
        std::size_t j = i;
        while (j < s.size() && s[j] != ' ' && s[j] != '\t' && s[j] != '\n') ++j;
        if (j > i) out.emplace_back(s.substr(i, j - i));
        i = j;
    }
    return out;
}

// mountinfo escapes blanks, tabs, newlines and backslashes in paths as \ooo.
std::string unescape_mount_path(std::string_view s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '3' &&
            s[i + 2] >= '0' && s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
            out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
            i += 3;
        } else {
            out += s[i];
        }
    }
    return out;
}

bool contains(const std::vector<std::string>& list, std::string_view item) {
    return std::find(list.begin(), list.end(), item) != list.end();
}

std::vector<membership> parse_memberships(std::string_view text) {
    std::vector<membership> out;
    for (const std::string& line : split(text, '\n')) {
        const std::size_t a = line.find(':');
        const std::size_t b = a == std::string::npos ? a : line.find(':', a + 1);
        if (b == std::string::npos) continue;
        membership m;
        const std::string_view ids(line.data(), a);
        const std::string controllers = line.substr(a + 1, b - a - 1);
        m.unified = ids == "0" && controllers.empty();
        if (!controllers.empty()) m.controllers = split(controllers, ',');
        m.path = line.substr(b + 1);
        out.push_back(std::move(m));
    }
    return out;
}

std::vector<cgroup_mount> parse_cgroup_mounts(std::string_view text) {
    std::vector<cgroup_mount> out;
    for (const std::string& line : split(text, '\n')) {
        // id parent major:minor root mount-point options [optional fields…] - type source super-options
        const std::vector<std::string> f = words(line);
        const auto dash = std::find(f.begin(), f.end(), "-");
        if (f.size() < 5 || dash == f.end() || f.end() - dash < 2) continue;
        const std::string& type = *(dash + 1);
        if (type != "cgroup" && type != "cgroup2") continue;
        cgroup_mount m;
        m.unified = type == "cgroup2";
        m.root = unescape_mount_path(f[3]);
        m.mount_point = unescape_mount_path(f[4]);
        if (!m.unified && f.end() - dash >= 4) m.controllers = split(*(dash + 3), ',');
        out.push_back(std::move(m));
    }
    return out;
}

void report_unknown(const std::string& what, std::string_view fallback, std::vector<report_message>* held_info) {
    report_message msg{report_level::info, report_category::topology, "I202", "cgroup CPU limits unknown: " + what,
                       std::string(fallback)};
    if (held_info != nullptr) held_info->push_back(std::move(msg));
    else report_once(msg);
}

void report_unreadable(const std::string& file, const std::string& why) {
    report_once({report_level::warning, report_category::topology, "W205",
                 "cannot use the cgroup file " + printable(file, printable_path_limit) + ": " + why,
                 "no limit from it"});
}

// A file's text in a message: quoted, control bytes and broken UTF-8 escaped.
std::string shown(std::string_view text) { return "'" + printable(text) + "'"; }

// The cgroup folders `controller` ("cpu", "cpuset") applies to this process through, or
// nullopt (reported when it should have been there).
std::optional<controller_dirs> locate(std::string_view controller, const std::vector<membership>& groups,
                                      const std::vector<cgroup_mount>& mounts, std::string_view fallback,
                                      std::vector<report_message>* held_info) {
    const membership* v1 = nullptr;
    const membership* v2 = nullptr;
    for (const membership& g : groups) {
        if (g.unified) v2 = &g;
        else if (contains(g.controllers, controller)) v1 = &g;
    }
    const membership* group = v1 != nullptr ? v1 : v2;
    if (group == nullptr) return std::nullopt;  // the kernel has no such controller
    const std::string kind = v1 != nullptr ? "cgroup v1 " + std::string(controller) + " hierarchy"
                                           : std::string("cgroup v2 hierarchy");
    bool mounted = false;
    for (const cgroup_mount& m : mounts) {
        if (m.unified != (group == v2) || (group == v1 && !contains(m.controllers, controller))) continue;
        mounted = true;
        // The mount shows the hierarchy from m.root down; the process's cgroup must be inside.
        const bool inside = m.root == "/" || group->path == m.root ||
                            (group->path.starts_with(m.root) && group->path[m.root.size()] == '/');
        if (!inside) continue;
        std::string rel = m.root == "/" ? group->path : group->path.substr(m.root.size());
        if (rel == "/") rel.clear();
        if (rel.find("/..") != std::string::npos) continue;
        controller_dirs dirs;
        dirs.unified = group == v2;
        const std::string base = m.mount_point == "/" ? std::string() : m.mount_point;
        for (;;) {
            dirs.levels.push_back(base + rel);
            if (rel.empty()) break;
            rel.erase(rel.rfind('/'));
        }
        if (dirs.levels.back().empty()) dirs.levels.back() = "/";
        return dirs;
    }
    // One v2 hierarchy holds both controllers: one message, one fallback for both.
    report_unknown(mounted ? "this process's cgroup " + printable(group->path, printable_path_limit) + " is outside the mounted " + kind
                           : "the " + kind + " is not mounted",
                   group == v2 ? "no cgroup cpuset or CPU quota" : fallback, held_info);
    return std::nullopt;
}

std::string join_path(const std::string& dir, std::string_view file) {
    return dir == "/" ? "/" + std::string(file) : dir + "/" + std::string(file);
}

// A file of one cgroup folder: its text, or nullopt when absent (not an error: the
// controller may not be enabled at that level) or unreadable (reported).
std::optional<std::string> read_cgroup_file(const std::string& root, const std::string& visible) {
    const small_file f = read_small_file(under_root(root, visible));
    if (f.text) return f.text;
    if (f.error != ENOENT) report_unreadable(visible, std::strerror(f.error));
    return std::nullopt;
}

std::optional<std::int64_t> positive_integer(std::string_view s) {
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || end != s.data() + s.size() || v <= 0) return std::nullopt;
    return v;
}

bool tighter(const cpu_quota& a, const cpu_quota& b) {
    // Doubles: a tie or a difference in the 16th digit does not change the team size.
    return a.cpus() < b.cpus();
}

// One level's quota: nullopt when that level sets none (or its file is bad, reported).
std::optional<cpu_quota> quota_at(const std::string& root, const std::string& dir, bool unified) {
    cpu_quota q;
    if (unified) {
        q.file = join_path(dir, "cpu.max");
        const std::optional<std::string> text = read_cgroup_file(root, q.file);
        if (!text) return std::nullopt;
        // "$MAX $PERIOD": MAX is "max" (no limit) or microseconds.
        const std::vector<std::string> w = words(*text);
        const std::optional<std::int64_t> period = w.size() == 2 ? positive_integer(w[1]) : std::nullopt;
        const std::optional<std::int64_t> quota = w.size() == 2 ? positive_integer(w[0]) : std::nullopt;
        if (period && w[0] == "max") return std::nullopt;
        if (!period || !quota) {
            report_unreadable(q.file, shown(*text) + " is not 'max PERIOD' or 'QUOTA PERIOD'");
            return std::nullopt;
        }
        q.quota_us = *quota;
        q.period_us = *period;
        return q;
    }
    q.file = join_path(dir, "cpu.cfs_quota_us");
    const std::optional<std::string> quota_text = read_cgroup_file(root, q.file);
    if (!quota_text || *quota_text == "-1") return std::nullopt;
    const std::optional<std::int64_t> quota = positive_integer(*quota_text);
    if (!quota) {
        report_unreadable(q.file, shown(*quota_text) + " is not -1 or a positive integer");
        return std::nullopt;
    }
    const std::string period_file = join_path(dir, "cpu.cfs_period_us");
    const small_file period_text = read_small_file(under_root(root, period_file));
    const std::optional<std::int64_t> period =
        period_text.text ? positive_integer(*period_text.text) : std::nullopt;
    if (!period) {
        report_unreadable(period_file, period_text.text ? shown(*period_text.text) + " is not a positive integer"
                                                        : std::string(std::strerror(period_text.error)));
        return std::nullopt;
    }
    q.quota_us = *quota;
    q.period_us = *period;
    return q;
}

std::optional<cpu_quota> tightest_quota(const std::string& root, const controller_dirs& dirs) {
    std::optional<cpu_quota> best;
    for (const std::string& dir : dirs.levels) {
        std::optional<cpu_quota> q = quota_at(root, dir, dirs.unified);
        if (q && (!best || tighter(*q, *best))) best = std::move(q);
    }
    return best;
}

// The effective cpuset from the nearest level that has one.
void read_cpuset(const std::string& root, const controller_dirs& dirs, cgroup_cpu_limits& out) {
    const std::vector<std::string_view> names = dirs.unified
        ? std::vector<std::string_view>{"cpuset.cpus.effective"}
        : std::vector<std::string_view>{"cpuset.effective_cpus", "cpuset.cpus"};
    for (const std::string& dir : dirs.levels) {
        for (std::string_view name : names) {
            const std::string file = join_path(dir, name);
            const std::optional<std::string> text = read_cgroup_file(root, file);
            if (!text) continue;
            std::optional<std::vector<int>> cpus = parse_cpu_list(*text);
            if (!cpus || cpus->empty()) {
                report_unreadable(file, shown(*text) + " is not a non-empty CPU list");
                return;
            }
            out.cpuset = std::move(cpus);
            out.cpuset_file = file;
            return;
        }
    }
}

}  // namespace

std::string_view to_string(cgroup_layout layout) noexcept {
    switch (layout) {
    case cgroup_layout::none: return "none";
    case cgroup_layout::v1: return "v1";
    case cgroup_layout::v2: return "v2";
    case cgroup_layout::hybrid: return "hybrid";
    }
    return "none";
}

double cpu_quota::cpus() const noexcept {
    return period_us > 0 ? static_cast<double>(quota_us) / static_cast<double>(period_us) : 0.0;
}

std::string cpu_quota::cpus_text() const {
    if (period_us <= 0) return "0";
    // Hundredths, rounded half up, in integers so 150000/100000 prints "1.5" exactly.
    const std::int64_t hundredths = (quota_us * 100 + period_us / 2) / period_us;
    std::string out = std::to_string(hundredths / 100);
    const std::int64_t frac = hundredths % 100;
    if (frac != 0) {
        out += '.';
        out += static_cast<char>('0' + frac / 10);
        if (frac % 10 != 0) out += static_cast<char>('0' + frac % 10);
    }
    return out;
}

int cpu_quota::whole_cpus() const noexcept {
    if (period_us <= 0) return 1;
    const std::int64_t n = (quota_us + period_us - 1) / period_us;
    return static_cast<int>(std::clamp<std::int64_t>(n, 1, max_cpu_number + 1));
}

cgroup_cpu_limits read_cgroup_cpu_limits(const std::string& root, std::vector<report_message>* held_info) {
    cgroup_cpu_limits out;
    constexpr std::string_view both_unknown = "the affinity mask alone";
    const small_file self = read_small_file(under_root(root, "/proc/self/cgroup"));
    const small_file mountinfo = read_small_file(under_root(root, "/proc/self/mountinfo"));
    if (!self.text || !mountinfo.text) {
        report_unknown(std::string("cannot read /proc/self/") + (!self.text ? "cgroup: " : "mountinfo: ") +
                           std::strerror(!self.text ? self.error : mountinfo.error),
                       both_unknown, held_info);
        return out;
    }
    const std::vector<membership> groups = parse_memberships(*self.text);
    const std::vector<cgroup_mount> mounts = parse_cgroup_mounts(*mountinfo.text);
    const bool has_v1 = std::any_of(mounts.begin(), mounts.end(), [](const cgroup_mount& m) { return !m.unified; });
    const bool has_v2 = std::any_of(mounts.begin(), mounts.end(), [](const cgroup_mount& m) { return m.unified; });
    out.layout = has_v1 && has_v2 ? cgroup_layout::hybrid
               : has_v1           ? cgroup_layout::v1
               : has_v2           ? cgroup_layout::v2
                                  : cgroup_layout::none;
    if (out.layout == cgroup_layout::none) {
        report_unknown("no cgroup file system is mounted", both_unknown, held_info);
        return out;
    }
    if (const auto dirs = locate("cpuset", groups, mounts, "no cgroup cpuset limit", held_info))
        read_cpuset(root, *dirs, out);
    if (const auto dirs = locate("cpu", groups, mounts, "no cgroup CPU quota", held_info))
        out.quota = tightest_quota(root, *dirs);
    return out;
}

}  // namespace aloe::runtime

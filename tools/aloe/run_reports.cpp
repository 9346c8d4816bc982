#include "run_reports.hpp"

#include "omp/trace_log.hpp"
#include "runtime/output_file.hpp"
#include "runtime/printable_text.hpp"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>

namespace aloe::cli {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view folder_prefix = "aloe-run-";
constexpr const char* lock_name = "/.lock";
// A folder with no lock file is being created (mkdtemp, then the lock) or was left by a run
// killed in between; past this age it is the latter.
constexpr std::time_t unlocked_folder_grace_s = 3600;
// A report is a few kilobytes per site; a larger file is not one of ours.
constexpr std::uintmax_t max_report_bytes = std::uintmax_t{256} << 20;

// "aloe-run-<pid>-XXXXXX" exactly (mkdtemp's six letters and digits): a folder of the user's
// that merely starts with "aloe-run-" is never touched.
bool is_report_folder_name(std::string_view name) {
    if (!name.starts_with(folder_prefix)) return false;
    name.remove_prefix(folder_prefix.size());
    const std::size_t dash = name.find('-');
    if (dash == 0 || dash == std::string_view::npos) return false;
    const std::string_view pid = name.substr(0, dash), suffix = name.substr(dash + 1);
    const auto alnum = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
    return pid.find_first_not_of("0123456789") == std::string_view::npos && suffix.size() == 6 &&
           std::all_of(suffix.begin(), suffix.end(), alnum);
}

}  // namespace

// A folder's `.lock` only ever appears already locked (made under another name, locked, then
// renamed), so a free lock means its owner is gone, never that it has not locked it yet.
void sweep_abandoned_report_folders(const std::string& parent) {
    std::error_code ec;
    for (const fs::directory_entry& e : fs::directory_iterator(parent, ec)) {
        const std::string name = e.path().filename().string();
        if (!is_report_folder_name(name)) continue;
        struct stat st {};
        if (::lstat(e.path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid()) continue;
        bool abandoned = false;
        const int fd = ::open((e.path().string() + lock_name).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0) {
            abandoned = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
            ::close(fd);
        } else if (errno == ENOENT) {
            abandoned = std::time(nullptr) - st.st_mtime > unlocked_folder_grace_s;
        }
        if (abandoned) fs::remove_all(e.path(), ec);
    }
}

namespace {

std::string read_file(const fs::path& p, std::string& error) {
    std::error_code ec;
    const std::uintmax_t size = fs::file_size(p, ec);
    if (ec || size > max_report_bytes) {
        error = ec ? ec.message() : "larger than a report can be";
        return {};
    }
    std::ifstream in(p, std::ios::binary);
    std::string text(static_cast<std::size_t>(size), '\0');
    in.read(text.data(), static_cast<std::streamsize>(size));
    if (in.gcount() != static_cast<std::streamsize>(size)) error = "cannot be read whole";
    return text;
}

// The folder's files ending in `suffix`, in name order (= process start order).
std::vector<fs::path> files_ending(const std::string& dir, std::string_view suffix) {
    std::vector<fs::path> out;
    std::error_code ec;
    for (const fs::directory_entry& e : fs::directory_iterator(dir, ec))
        if (e.is_regular_file(ec) && e.path().filename().string().ends_with(suffix)) out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
}

using json = nlohmann::json;

template <class T>
T get_or(const json& j, const char* key, T fallback) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return fallback;
    return it->get<T>();
}

}  // namespace

bool parse_process_reports(const std::string& text, std::vector<omp::process_report>& out, std::string& error) {
    try {
        const json doc = json::parse(text);
        std::map<long, std::size_t> by_pid;
        for (const char* list : {"processes", "regions", "loops"})
            if (!doc.at(list).is_array()) throw std::runtime_error(std::string("\"") + list + "\" is not a list");
        for (const json& p : doc.at("processes")) {
            omp::process_report r;
            r.pid = p.at("pid").get<long>();
            r.ppid = get_or<long>(p, "ppid", 0);
            r.command = get_or<std::vector<std::string>>(p, "command", {});
            r.executable = get_or<std::string>(p, "executable", "");
            r.program_sets_threads = get_or<std::string>(p, "program_sets_threads", "");
            by_pid[r.pid] = out.size();
            out.push_back(std::move(r));
        }
        const auto owner = [&](const json& row) -> omp::process_report& {
            const auto it = by_pid.find(row.at("pid").get<long>());
            if (it == by_pid.end()) throw std::runtime_error("a row names a pid the document does not list");
            return out[it->second];
        };
        for (const json& j : doc.at("regions")) {
            omp::region_report r;
            r.site = j.at("site").get<std::string>();
            r.source = get_or<std::string>(j, "source", "");
            r.invocations = get_or<std::uint64_t>(j, "invocations", 0);
            r.threads_last = get_or<int>(j, "threads_last", 0);
            r.threads_max = get_or<int>(j, "threads_max", 0);
            r.time_s = get_or<double>(j, "time_s", 0);
            r.imbalance_mean = get_or<double>(j, "imbalance_mean", 0);
            r.thread_count_set_by = get_or<std::string>(j, "thread_count_set_by", "");
            owner(j).regions.push_back(std::move(r));
        }
        for (const json& j : doc.at("loops")) {
            omp::loop_report l;
            l.site = j.at("site").get<std::string>();
            l.source = get_or<std::string>(j, "source", "");
            l.asked = get_or<std::string>(j, "asked", "");
            l.forwarded = get_or<std::uint64_t>(j, "forwarded", 0);
            l.forwarded_iterations = get_or<std::uint64_t>(j, "forwarded_iterations", 0);
            l.forwarded_time_s = get_or<double>(j, "forwarded_time_s", 0);
            l.forward_reason = get_or<std::string>(j, "forward_reason", "");
            l.note = get_or<std::string>(j, "note", "");
            l.taken = get_or<std::uint64_t>(j, "taken", 0);
            l.schedule = get_or<std::string>(j, "schedule", "");
            l.iterations = get_or<std::uint64_t>(j, "iterations", 0);
            l.time_s = get_or<double>(j, "time_s", 0);
            l.imbalance_mean = get_or<double>(j, "imbalance_mean", 0);
            if (const auto t = j.find("tuning"); t != j.end() && t->is_object()) {
                l.tuning_chosen = get_or<std::string>(*t, "chosen", "");
                l.tuning_state = get_or<std::string>(*t, "state", "");
                l.tuning_json = t->dump();
            }
            if (const auto k = j.find("slack"); k != j.end() && k->is_object()) l.slack_json = k->dump();
            owner(j).loops.push_back(std::move(l));
        }
        return true;
    } catch (const std::exception& e) {
        error = e.what();
        return false;
    }
}

report_folder::report_folder(const std::string& given_parent) {
    // Absolute: the program may change its working folder before it writes its report.
    std::error_code ec;
    const std::string parent = fs::absolute(given_parent, ec).lexically_normal().string();
    sweep_abandoned_report_folders(parent);
    std::string pattern = parent + "/" + std::string(folder_prefix) + std::to_string(::getpid()) + "-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
        error_ = "cannot create a folder in '" + runtime::printable(parent, runtime::printable_path_limit) +
                 "': " + std::strerror(errno);
        return;
    }
    std::string unlocked = pattern + "/.lock-XXXXXX";
    lock_fd_ = ::mkostemp(unlocked.data(), O_CLOEXEC);
    if (lock_fd_ < 0 || ::flock(lock_fd_, LOCK_EX) != 0 || ::rename(unlocked.c_str(), (pattern + lock_name).c_str()) != 0) {
        error_ = "cannot lock '" + runtime::printable(pattern, runtime::printable_path_limit) + "': " + std::strerror(errno);
        fs::remove_all(pattern, ec);
        return;
    }
    path_ = pattern;
}

report_folder::~report_folder() {
    if (!path_.empty()) {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    if (lock_fd_ >= 0) ::close(lock_fd_);
}

std::vector<omp::process_report> report_folder::read_reports(std::vector<std::string>& problems) const {
    std::vector<omp::process_report> all;
    for (const fs::path& p : files_ending(path_, ".json")) {
        std::string error;
        const std::string text = read_file(p, error);
        if (error.empty()) {
            std::vector<omp::process_report> one;
            if (parse_process_reports(text, one, error)) {
                all.insert(all.end(), one.begin(), one.end());
                continue;
            }
        }
        problems.push_back("the report of process " + p.stem().string() + " could not be read (" + error +
                           "); it is left out");
    }
    return all;
}

std::string report_folder::lending_summaries() const {
    std::string all;
    for (const fs::path& p : files_ending(path_, ".lending")) {
        std::string error;
        const std::string text = read_file(p, error);
        if (error.empty()) all += text;
    }
    return all;
}

bool report_folder::write_trace(const std::string& target, std::string& error) const {
    const std::vector<fs::path> parts = files_ending(path_, ".trace");
    return runtime::write_output_file(
        target,
        [&](const runtime::output_sink& sink) {
            if (!sink(omp::trace_document_begin())) return;
            bool first = true;
            std::vector<char> buffer(std::size_t{1} << 20);  // traces can be gigabytes: stream them
            for (const fs::path& p : parts) {
                std::ifstream in(p, std::ios::binary);
                bool started = false;
                while (in.read(buffer.data(), static_cast<std::streamsize>(buffer.size())) || in.gcount() > 0) {
                    const std::string_view piece(buffer.data(), static_cast<std::size_t>(in.gcount()));
                    if (!started && !first && !sink(",\n")) return;
                    if (!sink(piece)) return;
                    started = true;
                }
                first = first && !started;
            }
            // libaloe-mpi's step events (mpi-<pid>.trace) belong to a process already counted.
            const auto processes = std::count_if(parts.begin(), parts.end(), [](const fs::path& p) {
                return !p.filename().string().starts_with("mpi-");
            });
            sink(omp::trace_document_end(static_cast<std::size_t>(processes)));
        },
        error);
}

}  // namespace aloe::cli

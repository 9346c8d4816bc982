#include "runtime/output_file.hpp"

#include "runtime/printable_text.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

namespace aloe::runtime {
namespace {

// A temporary name must stay under NAME_MAX (255) whatever the target's name.
constexpr std::size_t max_base_in_temp_name = 100;
// Attempts at a fresh temporary name before giving up (each collision is another writer's
// file or a planted one; O_EXCL makes either harmless).
constexpr int temp_name_attempts = 16;
// Pieces are gathered up to this size before a write() (a trace arrives event by event).
constexpr std::size_t write_buffer_bytes = std::size_t{1} << 16;

using producer = std::function<void(const output_sink&)>;

// Paths in messages are the user's text: escaped (printable_text.hpp).
std::string quoted(const std::string& path) { return "'" + printable(path, printable_path_limit) + "'"; }

std::string because(const std::string& path, std::string_view what, int err) {
    return quoted(path) + " " + std::string(what) + ": " + std::strerror(err);
}

bool write_all(int fd, std::string_view text, int& err) {
    while (!text.empty()) {
        const ssize_t n = ::write(fd, text.data(), text.size());
        if (n < 0) {
            if (errno == EINTR) continue;
            err = errno;
            return false;
        }
        text.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

// Runs `produce` into `fd` through a buffer; 0, or the errno of the first failed write.
int produce_into(int fd, const producer& produce) {
    std::string buffer;
    buffer.reserve(write_buffer_bytes);
    int err = 0;
    const output_sink sink = [&](std::string_view piece) {
        if (err != 0) return false;
        if (buffer.size() + piece.size() > write_buffer_bytes) {
            if (!write_all(fd, buffer, err)) return false;
            buffer.clear();
            if (piece.size() >= write_buffer_bytes) return write_all(fd, piece, err);
        }
        buffer.append(piece);
        return true;
    };
    produce(sink);
    if (err == 0) write_all(fd, buffer, err);
    return err;
}

// Links the system owns (/dev/stdout, /dev/fd/2, /proc/self/fd/1): a write goes into what
// they point at (a terminal, the file the shell redirected stdout to), never replaces them.
// A regular file under /dev (/dev/shm) is an ordinary output.
bool is_system_path(std::string_view path) { return path.starts_with("/dev/") || path.starts_with("/proc/"); }

std::string folder_of(const std::string& path) {
    const std::size_t slash = path.rfind('/');
    return slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
}

// In place, appending (so /dev/stdout redirected to a file does not overwrite what the
// program printed before). O_NONBLOCK only for the open: a FIFO nobody reads fails with
// ENXIO instead of hanging the process at exit.
bool write_in_place(const std::string& path, const producer& produce, std::string& error) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        const int err = errno;
        error = because(path, err == ENXIO ? "has no reader (a FIFO nobody opened)" : "cannot be opened", err);
        return false;
    }
    if (const int flags = ::fcntl(fd, F_GETFL); flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    int err = produce_into(fd, produce);
    if (::close(fd) != 0 && err == 0) err = errno;
    if (err != 0) {
        error = because(path, "could not be written", err);
        return false;
    }
    return true;
}

std::string temp_suffix() {
    static std::atomic<unsigned> counter{0};
    const auto now = static_cast<unsigned long long>(std::chrono::steady_clock::now().time_since_epoch().count());
    char buf[64];
    std::snprintf(buf, sizeof buf, ".aloe-tmp-%ld-%u-%llx", static_cast<long>(::getpid()),
                  counter.fetch_add(1, std::memory_order_relaxed), now & 0xffffffffULL);
    return buf;
}

bool write_by_rename(const std::string& path, const producer& produce, std::string& error, mode_t mode) {
    const std::string dir = folder_of(path);
    const std::size_t slash = path.rfind('/');
    const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
    if (base.empty() || base == "." || base == "..") {
        error = quoted(path) + " names a folder, not a file";
        return false;
    }
    std::string temp;
    int fd = -1;
    for (int attempt = 0; attempt < temp_name_attempts && fd < 0; ++attempt) {
        temp = (dir == "/" ? "" : dir) + "/." + base.substr(0, max_base_in_temp_name) + temp_suffix();
        fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) {
        error = because(path, "cannot be written (no new file can be created in " + quoted(dir) + ")", errno);
        return false;
    }
    int err = produce_into(fd, produce);
    if (::close(fd) != 0 && err == 0) err = errno;
    if (err != 0) {
        ::unlink(temp.c_str());
        error = because(path, "could not be written", err);
        return false;
    }
    if (::rename(temp.c_str(), path.c_str()) != 0) {
        err = errno;
        ::unlink(temp.c_str());
        error = because(path, "could not be replaced", err);
        return false;
    }
    return true;
}

}  // namespace

bool write_output_file(const std::string& path, const producer& produce, std::string& error, mode_t mode) {
    if (path.empty()) {
        error = "an empty file name";
        return false;
    }
    struct stat link {};
    if (::lstat(path.c_str(), &link) != 0) {
        if (errno == ENOENT) return write_by_rename(path, produce, error, mode);
        error = because(path, "cannot be examined", errno);
        return false;
    }
    if (S_ISLNK(link.st_mode) && !is_system_path(path)) {
        const std::string dir = folder_of(path);
        struct stat folder {};
        if (::stat(dir.c_str(), &folder) == 0 && planted_link(link.st_uid, folder.st_mode, ::geteuid())) {
            error = quoted(path) + " is a symbolic link another user owns in the shared folder " + quoted(dir) +
                    "; not followed (it may have been planted)";
            return false;
        }
    }
    if (written_in_place(path)) return write_in_place(path, produce, error);
    if (S_ISLNK(link.st_mode)) return write_by_rename(path, produce, error, mode);  // replaces the link itself
    if (S_ISDIR(link.st_mode)) {
        error = quoted(path) + " is a folder";
        return false;
    }
    if (!S_ISREG(link.st_mode)) {
        error = quoted(path) + " is neither a regular file nor a character device or FIFO";
        return false;
    }
    return write_by_rename(path, produce, error, mode);
}

bool written_in_place(const std::string& path) noexcept {
    struct stat link {};
    if (::lstat(path.c_str(), &link) != 0) return false;
    if (S_ISCHR(link.st_mode) || S_ISFIFO(link.st_mode)) return true;
    if (!S_ISLNK(link.st_mode)) return false;
    if (is_system_path(path)) return true;
    struct stat target {};
    return ::stat(path.c_str(), &target) == 0 && (S_ISCHR(target.st_mode) || S_ISFIFO(target.st_mode));
}

bool planted_link(uid_t link_owner, mode_t folder_mode, uid_t me) noexcept {
    return (folder_mode & S_ISVTX) != 0 && (folder_mode & S_IWOTH) != 0 && link_owner != me;
}

bool write_output_file(const std::string& path, std::string_view text, std::string& error, mode_t mode) {
    return write_output_file(
        path, [text](const output_sink& sink) { sink(text); }, error, mode);
}

}  // namespace aloe::runtime

#include "coord/daemon_address.hpp"

#include "runtime/process_state.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

namespace aloe::coord {

std::string daemon_lock_path(const std::string& socket_path) { return socket_path + ".lock"; }
std::string daemon_pid_path(const std::string& socket_path) { return socket_path + ".pid"; }
std::string daemon_log_path(const std::string& socket_path) { return socket_path + ".log"; }

bool daemon_may_listen(const std::string& socket_path) {
    struct stat st {};
    if (::stat(socket_path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) return false;
    std::ifstream in(daemon_pid_path(socket_path));
    long pid = 0;
    if (!(in >> pid) || pid <= 0) return true;  // no pid file (or not ours to read): may be a daemon
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno != EPERM) return false;
    // A zombie answers kill() too (a container's init may never reap a killed daemon).
    return runtime::process_state(static_cast<pid_t>(pid)) != 'Z';
}

std::string user_socket_path(const environment_lookup& env, uid_t uid) {
    if (const auto run = env("XDG_RUNTIME_DIR"); run && !run->empty() && run->front() == '/')
        return *run + "/aloe/aloed.sock";
    return "/tmp/aloe-" + std::to_string(uid) + "/aloed.sock";
}

std::vector<daemon_address> client_addresses(const environment_lookup& env, uid_t uid) {
    if (const auto chosen = env(socket_variable); chosen && !chosen->empty())
        return {{*chosen, std::string(socket_variable)}};
    return {{user_socket_path(env, uid), "per-user"},
            {std::string(system_socket_path), "system-wide"}};
}

std::string daemon_socket_path(const environment_lookup& env, uid_t uid, bool system_wide,
                               std::string_view explicit_path) {
    if (!explicit_path.empty()) return std::string(explicit_path);
    if (const auto chosen = env(socket_variable); chosen && !chosen->empty()) return *chosen;
    return system_wide ? std::string(system_socket_path) : user_socket_path(env, uid);
}

std::string socket_folder(std::string_view socket_path) {
    const auto slash = socket_path.rfind('/');
    if (slash == std::string_view::npos) return ".";
    if (slash == 0) return "/";
    return std::string(socket_path.substr(0, slash));
}

std::optional<std::string> socket_path_problem(std::string_view path) {
    if (path.empty()) return "the daemon's socket path is empty";
    if (path.size() >= sizeof(sockaddr_un{}.sun_path))
        return "the daemon's socket path '" + std::string(path) + "' is longer than a Unix socket allows (" +
               std::to_string(sizeof(sockaddr_un{}.sun_path) - 1) + " bytes)";
    if (path.find('\0') != std::string_view::npos) return "the daemon's socket path holds a NUL byte";
    return std::nullopt;
}

std::optional<std::string> prepare_socket_folder(const std::string& socket_path, uid_t owner,
                                                 bool system_wide) {
    const std::string folder = socket_folder(socket_path);
    const mode_t mode = system_wide ? 0755 : 0700;
    if (::mkdir(folder.c_str(), mode) != 0 && errno != EEXIST)
        return "cannot create the daemon's folder " + folder + ": " + std::strerror(errno);
    struct stat st {};
    if (::lstat(folder.c_str(), &st) != 0)
        return "cannot inspect the daemon's folder " + folder + ": " + std::strerror(errno);
    if (S_ISLNK(st.st_mode)) return "the daemon's folder " + folder + " is a symbolic link; refusing to use it";
    if (!S_ISDIR(st.st_mode)) return "the daemon's folder " + folder + " is not a directory";
    // A shared sticky folder owned by root (/tmp, for an ALOE_DAEMON_SOCKET there) is fit:
    // nobody else can remove or replace our socket in it, and a socket planted before ours
    // is refused by bind(); clients check the daemon's uid at connect (SO_PEERCRED) anyway.
    const bool shared_sticky = st.st_uid == 0 && (st.st_mode & S_ISVTX) != 0;
    if (st.st_uid != owner && !shared_sticky)
        return "the daemon's folder " + folder + " belongs to uid " + std::to_string(st.st_uid) + ", not " +
               std::to_string(owner) + "; refusing to use it";
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && !shared_sticky)
        return "the daemon's folder " + folder + " is writable by other users; refusing to use it";
    return std::nullopt;
}

}  // namespace aloe::coord

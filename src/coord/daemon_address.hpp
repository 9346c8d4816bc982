// Where aloed listens, and how its folder is made safe.
//
// Two kinds of daemon (docs/daemon.md):
// - per user (the default): `$XDG_RUNTIME_DIR/aloe/aloed.sock`, or `/tmp/aloe-<uid>/aloed.sock`
//   where the session has no runtime folder (ssh without systemd-logind, batch jobs). It
//   serves its own user's processes only.
// - system-wide, started by an admin (systemd unit): `/run/aloe/aloed.sock`. It serves every
//   user, each seeing and steering only their own processes.
// `ALOE_DAEMON_SOCKET` names one socket for both sides (tests, a job-private daemon).
//
// A client tries, in order: ALOE_DAEMON_SOCKET alone when it is set; else its user's socket,
// then the system-wide one. The daemon's folder is checked before use: a directory (not a
// symlink) owned by the daemon's user, not writable by others (0700 for a user's, 0755 for
// the system's), so nobody can plant a socket or a symlink where a client will connect.
// The folder also holds `aloed.lock` (flock: one daemon per socket) and `aloed.pid`.
#pragma once

#include "runtime/config.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace aloe::coord {

inline constexpr std::string_view system_socket_path = "/run/aloe/aloed.sock";
inline constexpr std::string_view socket_variable = "ALOE_DAEMON_SOCKET";

/// runtime/config.hpp's: the process environment, or a test's.
using environment_lookup = runtime::env_lookup;

struct daemon_address {
    std::string path;
    std::string origin;  ///< "ALOE_DAEMON_SOCKET", "per-user", "system-wide"
};

/// The user's own daemon socket: under XDG_RUNTIME_DIR when it is set to an absolute path,
/// else under /tmp/aloe-<uid>.
std::string user_socket_path(const environment_lookup& env, uid_t uid);

/// Where a daemon with this socket keeps its lock, pid and log files.
std::string daemon_lock_path(const std::string& socket_path);
std::string daemon_pid_path(const std::string& socket_path);
std::string daemon_log_path(const std::string& socket_path);

/// Whether a daemon may be listening at `socket_path`, without connecting: a socket is there
/// and the process its pid file names is alive (no pid file: taken as alive). A daemon killed
/// by SIGKILL leaves its socket behind; without this look, ALOE_LEND=auto took such a socket
/// for a daemon and every later job switched to lending and warned.
bool daemon_may_listen(const std::string& socket_path);

/// Where a client looks, in order.
std::vector<daemon_address> client_addresses(const environment_lookup& env, uid_t uid);

/// Where a daemon started with these options listens: `explicit_path` (its --socket) if
/// any, else ALOE_DAEMON_SOCKET, else the system-wide path when `system_wide`, else the
/// user's.
std::string daemon_socket_path(const environment_lookup& env, uid_t uid, bool system_wide,
                               std::string_view explicit_path = {});

/// Creates the socket's folder if missing (mode 0700, or 0755 when `system_wide`) and
/// checks it: a real directory owned by `owner`, writable by nobody else. Returns the
/// problem, naming the path, or nothing when the folder is fit.
std::optional<std::string> prepare_socket_folder(const std::string& socket_path, uid_t owner,
                                                 bool system_wide);

/// A socket path too long for sockaddr_un (107 bytes and a NUL): the problem, or nothing.
std::optional<std::string> socket_path_problem(std::string_view path);

/// The folder part of a socket path ("." when it has none).
std::string socket_folder(std::string_view socket_path);

}  // namespace aloe::coord

// One message over a SOCK_SEQPACKET Unix socket, each way, for the daemon, its clients and
// `aloe daemon`: connecting (and checking who answers), sending, receiving with a timeout.
// Every socket is close-on-exec, so a program's exec'd children never hold its connection
// (the client library also drops it in fork children: daemon_client.cpp).
#pragma once

#include "coord/message.hpp"

#include <optional>
#include <string>
#include <sys/types.h>

namespace aloe::coord {

struct peer_identity {
    pid_t pid = 0;
    uid_t uid = 0;
    gid_t gid = 0;
};

/// The kernel's word on who is at the other end (SO_PEERCRED), or nothing on failure.
std::optional<peer_identity> peer_of(int fd);

struct dial_result {
    int fd = -1;          ///< >= 0 when connected
    int error = 0;        ///< errno of the failure (ENOENT: no socket; ECONNREFUSED: stale)
    std::string problem;  ///< what went wrong, naming the path
};

/// Connects to the daemon at `path` (non-blocking, close-on-exec) and checks that it runs
/// as this process's user or as root: a socket another user planted is refused.
dial_result dial_daemon(const std::string& path);

/// Sends one message without blocking (MSG_DONTWAIT, no SIGPIPE). False when it could not
/// go now (the peer's buffer is full, or it is gone); errno says which.
bool send_message(int fd, const message& m, std::uint32_t sequence = 0);

enum class receive_status { ok, invalid, closed, timeout, failed };

struct received {
    receive_status status = receive_status::failed;
    decoded record;  ///< status ok: record.value is set; invalid: record says why
    int error = 0;   ///< failed: errno
};

/// Receives one record, waiting up to `timeout_ms` (0: only what is there; < 0: forever).
/// A record longer than max_message_size is read whole and refused (invalid, size).
received receive_message(int fd, int timeout_ms);

}  // namespace aloe::coord

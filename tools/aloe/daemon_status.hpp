// What `aloe daemon status` and `aloe top` show: one status query to aloed, and its text
// and JSON forms. The daemon answers a user with their own processes only (root: all).
#pragma once

#include "coord/message.hpp"

#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace aloe::cli {

struct daemon_snapshot {
    std::string socket;  ///< where it answered
    int daemon_pid = 0;  ///< its pid (SO_PEERCRED)
    std::vector<coord::status_entry_message> clients;
    coord::status_end_message node;
};

/// Connects to the daemon at `socket` (empty: where a client would look, in order) and
/// queries it. Nothing, with `problem` set, when no daemon answers within 2 s.
std::optional<daemon_snapshot> query_daemon(const std::string& socket, std::string& problem);

/// The daemon a command addresses: `socket` if given, else the first that answers of
/// where a client would look. Connected fd (>= 0) or -1 with `problem`.
int connect_daemon(const std::string& socket, std::string& problem, std::string* answered_at = nullptr);

void print_snapshot_text(const daemon_snapshot& s, std::ostream& out);
void print_snapshot_json(const daemon_snapshot& s, std::ostream& out);

}  // namespace aloe::cli

// aloed's server: one thread, one poll() over the listening socket, every connection, every
// client's pidfd, a stop eventfd and the referee's and lookout's deadlines.
//
// Why one thread: the state is one small table (client_table.hpp) that every event reads
// and writes; SCAF's daemon shared a hash table between five threads under a rwlock. A
// poll round costs microseconds for a hundred clients, far below the 250 ms referee period.
//
// Events and what they do:
// - accept: the peer's uid and pid come from SO_PEERCRED; a per-user daemon refuses other
//   users at the door; a system-wide one (root) serves everyone.
// - hello: registers the sender (its pid must be the sender's), opens a pidfd on it, and
//   rebalances at once: the newcomer's first allocation leaves within the same poll round.
// - report: smoothed, refitted (client_table); answered with the current allocation.
// - goodbye, hang-up, pidfd readable (the process exited, even by kill -9, even if a child
//   still holds the socket): the client is dropped and the node rebalanced at once.
// - control: stop and policy from the daemon's user or root only; steer a process only
//   the process's own user (or root) may.
// - offer, request: the sender's own (a client that named a job only); the node is
//   rebalanced at the end of the poll round (core_lending.hpp) and the sender answered
//   with its allocation. An offer's end wakes the poll at its time and rebalances.
// - referee (every 250 ms): rebalance, send only what changed. Lookout (every 1 s): the
//   background load from /proc, when the daemon serves the whole node.
// Every refused record is answered with an error naming the rule it broke; a connection
// that sends 16 bad records is closed (bounded work per peer).
#pragma once

#include "coord/client_table.hpp"
#include "coord/daemon_address.hpp"
#include "coord/message.hpp"

#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace aloe::coord {

struct daemon_options {
    std::string socket_path;              ///< where to listen (daemon_address.hpp)
    bool system_wide = false;             ///< serve every user (root's daemon)
    policy_id policy = policy_id::efficiency;
    unsigned cores = 0;                   ///< 0: the CPUs of the daemon's affinity mask
    unsigned chunk = 1;                   ///< hand out cores in multiples of this (SMT width)
    bool background_load = true;          ///< subtract what unmanaged processes use
    double referee_seconds = 0.25;        ///< SCAF's 4 Hz
    double lookout_seconds = 1.0;         ///< SCAF's 1 Hz
    std::size_t max_clients = 1024;
    std::string proc_root = "/proc";      ///< tests point it at a recorded tree
};

class daemon_server {
public:
    /// Takes the socket: checks its folder, locks `<socket>.lock` (one daemon per socket),
    /// removes a stale socket file, binds, listens, writes `<socket>.pid`. Null and
    /// `problem` set when any step fails (another daemon serving it included).
    static std::unique_ptr<daemon_server> open(const daemon_options& options, std::string& problem);
    ~daemon_server();
    daemon_server(const daemon_server&) = delete;
    daemon_server& operator=(const daemon_server&) = delete;

    /// Serves until stop() or a stop message; returns 0.
    int run();
    /// Ends run() from any thread or a signal handler (one write to an eventfd).
    void stop() noexcept;

    /// What happened, one line each (accepts, registrations, refusals, rebalances); the
    /// binary prints them to its log. Set before run().
    std::function<void(std::string_view)> log;

    /// After run() returned (or from run()'s thread): the clients' state.
    const client_table& table() const;
    unsigned cores() const;

private:
    struct state;
    explicit daemon_server(std::unique_ptr<state> s);
    std::unique_ptr<state> s_;
};

// daemon_lock_path, daemon_pid_path, daemon_log_path: coord/daemon_address.hpp.

}  // namespace aloe::coord

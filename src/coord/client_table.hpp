// The daemon's clients and what it decided for them: the state behind aloed, without its
// sockets (daemon_server.hpp owns those and calls in here), so the tests drive it by hand.
//
// A client is one registered process, keyed by its connection. Its identity (pid, uid) is
// what the kernel said at accept (SO_PEERCRED), never a field of a message. Each report is
// smoothed (efficiency_filter.hpp: SCAF's RC low-pass, weighted by the time it covers) and
// refitted to a slope (speedup_model.hpp); rebalance() runs the policy over every client
// and returns the allocations that changed, which the server sends.
//
// Departures from SCAF, each for a reason:
// - a newcomer does not reset everybody's filter to 0.5: the others' reports still hold
//   (each carries the thread count it was measured at), so throwing them away would only
//   pull the node towards equipartition for a few seconds;
// - a newcomer's first allocation is the policy's (it counts as an average client), not
//   the whole machine: on a busy node the whole machine is the worst first answer.
// - a slope is refitted only from a report that covers at least 1 ms of parallel time
//   (shorter ones are timer noise), and only while the measure is one the client trusts.
//
// Lending (core_lending.hpp): each client has at most one standing offer or one standing
// request, never both; the policy's share is computed first and the lending applied to it,
// so `allocated` is what the client runs with.
#pragma once

#include "coord/allocation_policy.hpp"
#include "coord/core_lending.hpp"
#include "coord/efficiency_filter.hpp"
#include "coord/message.hpp"

#include <functional>
#include <optional>
#include <string>
#include <sys/types.h>
#include <utility>
#include <vector>

namespace aloe::coord {

struct client_record {
    int connection = -1;
    pid_t pid = 0;
    uid_t uid = 0;
    std::string name;           ///< /proc/<pid>/comm
    std::string job;
    std::uint32_t flags = 0;    ///< client_*
    unsigned own_threads = 1;
    unsigned cap = 0;           ///< the user's (steer); 0: none
    efficiency_measure measure = efficiency_measure::none;
    efficiency_filter efficiency;
    double slope = 0;           ///< <= 0 until a usable report
    unsigned share = 0;         ///< the policy's part of rebalance()
    unsigned allocated = 0;     ///< what rebalance() decided: the share, less lent, plus borrowed
    unsigned offered = 0;       ///< its standing offer of cores (0: none)
    bool offered_whole = false; ///< the offer may take its whole share (offer_whole)
    double offer_ends = offer_no_end;  ///< on the daemon's clock
    unsigned requested = 0;     ///< its standing request beyond its share (0: none)
    unsigned lent = 0;          ///< what the last rebalance() took from it
    unsigned borrowed = 0;      ///< and gave it
    std::vector<int> borrowed_cpus;  ///< the lenders' CPUs it was given (as many as could be named)
    allocation_message sent{};  ///< what the client was last told (threads 0: nothing yet)
    double joined = 0;          ///< seconds on the daemon's clock
    double last_heard = 0;
    std::uint64_t reports = 0;
    step_message last_step{};   ///< its last step of lending (steps 0: none reported)
    std::vector<int> confined;  ///< CPUs a non-malleable client was confined to (empty: none)
    bool confine_failed = false;
};

/// One allocation to send.
struct allocation_update {
    int connection = -1;
    allocation_message message;
};

/// The order a round's updates go out in: first those whose cores moved by another's
/// message, then the senders of this round's offers and requests (`senders`), each group in
/// its order. The sender is most often on the daemon's CPU: its listener, woken first,
/// preempts the daemon there, and the sender's thread could then keep the CPU for a slice
/// before the borrower heard (1-2.5 ms in 3 of 25 steps of jacobi3d-mpi 1:3, 2-vCPU VM).
void senders_last(std::vector<allocation_update>& updates, const std::vector<int>& senders);

class client_table {
public:
    explicit client_table(unsigned cores, policy_id policy = policy_id::efficiency, unsigned chunk = 1);

    /// Registers the client of `connection`; its pid and uid are the peer's credentials.
    client_record& add(int connection, pid_t pid, uid_t uid, const hello_message& hello,
                       std::string name, double now);
    /// Applies a report; false when `connection` has no client.
    bool report(int connection, const report_message& r, double now);
    /// Forgets the client of `connection` (goodbye, hang-up, exit); false when there was none.
    bool remove(int connection);
    /// The client registered on `connection`, if any.
    client_record* find(int connection);
    /// The client whose process is `pid`, if any.
    client_record* find_pid(pid_t pid);

    /// The user's cap on one process's threads (0: none). The caller checked permission.
    void steer(client_record& c, unsigned threads) { c.cap = threads; }

    /// `c` lends cores from `now` (message.hpp: offer): replaces its offer, ends its request.
    void offer(client_record& c, const offer_message& m, double now);
    /// `c` asks for cores (message.hpp: request): replaces its request, ends its offer; a
    /// request of 0 leaves it neither lending nor asking.
    void request(client_record& c, const request_message& m);
    /// Forgets the offers that have ended by `now`; whether there were any.
    bool expire(double now);
    /// When the first standing offer ends (offer_no_end: none does).
    double next_offer_end() const;

    void set_policy(policy_id p) { policy_ = p; }
    policy_id policy() const { return policy_; }
    /// The cores shared out now (the node's minus the background load, >= 1).
    void set_available(unsigned cores) { available_ = std::max(cores, 1u); }
    unsigned available() const { return available_; }
    unsigned cores() const { return cores_; }

    /// Runs the policy over every client; returns the allocations that differ from what
    /// each was last told (and marks them told), in registration order. `everyone` returns
    /// one for every client (after a change of the client count, everyone's `clients`
    /// field changed too). Offers that have ended by `now` (the clock of offer()) lend
    /// nothing.
    std::vector<allocation_update> rebalance(bool everyone = false, double now = 0);

    /// The allocation message `c` would be sent now.
    allocation_message allocation_for(const client_record& c) const;

    const std::vector<client_record>& clients() const { return clients_; }
    std::vector<client_record>& clients() { return clients_; }

    /// Where the CPUs a process may use are read (sched_getaffinity by default; tests).
    using cpu_reader = std::function<std::vector<int>(pid_t)>;
    void set_cpu_reader(cpu_reader r) { cpus_of_ = std::move(r); }

private:
    void name_borrowed_cpus(const lending_result& lent);

    cpu_reader cpus_of_;
    unsigned cores_;
    unsigned available_;
    unsigned chunk_;
    policy_id policy_;
    bool oversubscribed_ = false;
    std::vector<client_record> clients_;
};

}  // namespace aloe::coord

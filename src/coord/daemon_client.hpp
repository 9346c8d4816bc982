// A process's link to aloed: register, report efficiency, receive the thread count.
//
// One per process (daemon_client::process()), shared by the OpenMP interposer's regions and
// aloe's own loops: the node sees one client per program however aloe got in.
//
// Cost on the hot path: threads() is called at every region or loop start. It reads the
// clock and an atomic; only every 10 ms (at most) does one caller drain the socket, with
// non-blocking receives, taking the newest allocation the daemon pushed. Reports are
// rate-limited (token_bucket.hpp, 5 Hz as SCAF's check-ins) and never wait for an answer.
// A program is never held up by the daemon: it runs with its own count until an
// allocation arrives, and again as soon as the daemon is gone.
//
// Failure, each said once (ALOE_DAEMON=on) or as an info line (auto):
// - no socket, or a stale one: runs alone; looks again once a second (a daemon started
//   later is joined);
// - a daemon that does not answer the hello within 1 s: runs alone meanwhile;
// - the daemon goes away (stop, crash): back to its own count at the next region, at most
//   10 ms of region activity later; rejoins a new daemon within a second.
// A fork child drops the parent's connection (pthread_atfork) and joins as itself if it
// runs parallel work: a connection held by a child would keep a dead parent registered.
#pragma once

#include "coord/message.hpp"

#include <string>

namespace aloe::coord {

class daemon_client {
public:
    /// The process's client, made on first use (mode and socket from ALOE_DAEMON,
    /// ALOE_DAEMON_SOCKET). `kind`: client_interposed or client_native, taken from the
    /// first caller.
    static daemon_client& process(std::uint32_t kind = client_native);

    /// The threads the next region or loop should use: the daemon's allocation while one
    /// holds, else `own` (what the program would use alone). Thread-safe, wait-free but for
    /// one caller each 10 ms that polls the socket.
    unsigned threads(unsigned own);
    /// Reads the daemon's answers when a poll is due (as threads() does, with the last own
    /// count): for a process that waits without starting regions or loops (an MPI wait).
    void refresh();

    /// A measurement of the program's efficiency; sent when the rate limit allows. Returns
    /// whether it was sent.
    bool report(const report_message& r);

    /// From now on the program's thread count is fixed (omp_set_num_threads, a num_threads
    /// clause, …): the daemon confines it by affinity instead. Sent with the next report.
    void mark_not_malleable();

    // Lending between the ranks of one MPI job on this node (issue 19; core_lending.hpp has
    // the daemon's rules). Each sends at once (non-blocking) while joined to a daemon that
    // answered, and returns false otherwise; the answer (the new allocation) is read at the
    // next poll, which comes every 0.5 ms instead of 10 while the process may lend.

    /// Lends `cores` until taken back; `whole`: the caller is blocked (in MPI) and lends
    /// its whole share.
    bool lend(unsigned cores, bool whole);
    /// Asks for up to `cores` beyond its share (ends its offer); 0 takes an offer back.
    bool want(unsigned cores);
    /// Tells the daemon this rank's last step (status and top show it); at most every
    /// 0.25 s, later ones dropped meanwhile, never blocking on the client's lock. No answer.
    bool step(const step_message& m);
    /// Whether lending can happen now: joined, answered, in a job (the hello named one).
    bool in_lending_job() const;
    /// The policy's share before lending, as last told (0: no allocation holds).
    unsigned share() const;
    /// Cores lent and borrowed now, as last told.
    unsigned lent() const;
    unsigned borrowed() const;
    /// Polls the socket every 0.5 ms from loops and region starts (a process that may lend).
    void poll_fast(bool on);
    /// Starts a thread that sleeps in poll() on the socket and reads each answer as it comes
    /// (a process that may borrow: a lent core joins its running loop at the next chunk, not
    /// at participant 0's next 0.5 ms poll). Once per process; false when it did not start.
    bool listen_for_answers();

    /// One line for `aloe info` and the exit report: connected (where, allocation, clients)
    /// or why not.
    std::string describe() const;

    /// Whether an allocation holds now.
    bool allocated() const;
    /// Whether a daemon's socket is connected (answered or not yet).
    bool connected() const;
    /// The programs sharing the node, as the daemon last said (0: no allocation holds).
    unsigned clients() const;

    struct impl;

private:
    explicit daemon_client(std::uint32_t kind);
    impl* impl_;
};

}  // namespace aloe::coord

#include "coord/daemon_server.hpp"

#include "coord/affinity_plan.hpp"
#include "coord/background_load.hpp"
#include "coord/daemon_address.hpp"
#include "coord/daemon_connection.hpp"
#include "coord/token_bucket.hpp"
#include "runtime/topology.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <deque>
#include <fcntl.h>
#include <fstream>
#include <csignal>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>
#include <vector>

namespace aloe::coord {

namespace {

double now_seconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}


// pidfd_open(2) (Linux 5.3): readable when the process exits. Without it the lookout's
// kill(pid, 0) each second is the backstop, and the connection's hang-up the usual signal.
int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
    return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
    (void)pid;
    errno = ENOSYS;
    return -1;
#endif
}

std::string process_name(const std::string& proc_root, pid_t pid) {
    std::ifstream in(proc_root + "/" + std::to_string(pid) + "/comm");
    std::string name;
    std::getline(in, name);
    return name;
}

error_message error_of(error_code code, std::string_view text) {
    return {code, make_text<96>(text)};
}

constexpr int most_bad_records = 16;
constexpr std::size_t most_queued = 4096;
constexpr double most_messages_per_second = 2000;

}  // namespace

struct daemon_server::state {
    daemon_options options;
    int listen_fd = -1;
    int lock_fd = -1;
    int stop_fd = -1;
    uid_t owner = ::geteuid();
    std::string socket_path;
    std::string pid_path;
    unsigned online_cpus = 1;
    client_table table;
    background_load_meter meter;
    bool stopping = false;
    bool warned_partial_node = false;
    core_list cpus_by_core;  // where non-malleable clients are confined (affinity_plan.hpp)

    struct queued {
        record bytes;
        std::size_t size = 0;
        bool allocation = false;
    };
    struct connection {
        int fd = -1;
        peer_identity peer;
        int pidfd = -1;
        int bad_records = 0;
        bool client = false;
        // What the peer's full receive queue (10 records by default) refused, sent when it
        // reads again: a status answer of 100 entries must not lose any. An allocation
        // waiting there is replaced by a newer one, so a client busy in a long region
        // never has more than one; a peer that lets `most_queued` pile up is dropped.
        std::deque<queued> outbox;
        bool overflowed = false;
        // A client sends a hello and at most 5 reports a second; a peer far beyond that is
        // flooding the one thread that serves everyone: its excess counts as bad records.
        token_bucket budget{most_messages_per_second, most_messages_per_second};
    };
    std::vector<connection> connections;

    // Sends what the outbox holds, oldest first, until the peer's queue is full again.
    static void flush(connection& c) {
        while (!c.outbox.empty()) {
            const auto& q = c.outbox.front();
            if (::send(c.fd, q.bytes.data(), q.size, MSG_DONTWAIT | MSG_NOSIGNAL) != static_cast<ssize_t>(q.size)) {
                if (errno == EAGAIN || errno == EWOULDBLOCK) return;
                c.outbox.clear();  // the peer is gone: its hang-up is read next
                return;
            }
            c.outbox.pop_front();
        }
    }

    // One message to a peer, now or as soon as it reads.
    static void deliver(connection& c, const message& m) {
        queued q;
        q.size = encode(m, 0, q.bytes);
        q.allocation = std::holds_alternative<allocation_message>(m);
        if (q.allocation)
            for (auto& waiting : c.outbox)
                if (waiting.allocation) {
                    waiting = q;
                    return;
                }
        c.outbox.push_back(q);
        flush(c);
        if (c.outbox.size() > most_queued) c.overflowed = true;
    }

    connection* by_fd(int fd) {
        for (auto& c : connections)
            if (c.fd == fd) return &c;
        return nullptr;
    }

    state(const daemon_options& o, unsigned cores, unsigned online)
        : options(o), online_cpus(online), table(cores, o.policy, o.chunk), meter(online) {}

    void say(const std::function<void(std::string_view)>& log, const std::string& line) const {
        if (log) log(line);
    }
};

daemon_server::daemon_server(std::unique_ptr<state> s) : s_(std::move(s)) {}

std::unique_ptr<daemon_server> daemon_server::open(const daemon_options& options, std::string& problem) {
    const std::string& path = options.socket_path;
    if (auto p = socket_path_problem(path)) {
        problem = *p;
        return nullptr;
    }
    if (auto p = prepare_socket_folder(path, ::geteuid(), options.system_wide)) {
        problem = *p;
        return nullptr;
    }
    // Its own CPUs as runtime/topology sees them (affinity mask and cgroup cpuset).
    const unsigned cores = options.cores > 0 ? options.cores
                                             : static_cast<unsigned>(runtime::topology::machine().allowed_cpus().size());
    const auto online = static_cast<unsigned>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
    auto s = std::make_unique<state>(options, cores, online);
    s->cpus_by_core = daemon_cores(cores);
    s->socket_path = path;
    s->pid_path = daemon_pid_path(path);

    // One daemon per socket: the lock is held for the daemon's life (the kernel drops it
    // when the process dies, so a crashed daemon leaves nothing that blocks the next).
    const std::string lock_path = daemon_lock_path(path);
    s->lock_fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (s->lock_fd < 0) {
        problem = "cannot open the lock file " + lock_path + ": " + std::strerror(errno);
        return nullptr;
    }
    if (::flock(s->lock_fd, LOCK_EX | LOCK_NB) != 0) {
        std::ifstream pid_file(s->pid_path);
        std::string other;
        std::getline(pid_file, other);
        problem = "another aloed already serves " + path + (other.empty() ? "" : " (pid " + other + ")");
        ::close(s->lock_fd);
        s->lock_fd = -1;
        return nullptr;
    }
    // Holding the lock, a socket file left here is a dead daemon's: replace it. Anything
    // else at that path (a regular file, a symlink) is not ours to remove.
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0) {
        if (!S_ISSOCK(st.st_mode) || st.st_uid != ::geteuid()) {
            problem = path + " exists and is not a socket of this user; not replacing it";
            ::close(s->lock_fd);
            return nullptr;
        }
        ::unlink(path.c_str());
    }
    s->listen_fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.data(), path.size());
    // A system-wide socket must be reachable by every user (0666, its folder 0755); a
    // user's lives in a 0700 folder, so its own mode adds nothing.
    const mode_t old_mask = ::umask(options.system_wide ? 0 : 077);
    const bool bound = s->listen_fd >= 0 && ::bind(s->listen_fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
    ::umask(old_mask);
    if (!bound || ::listen(s->listen_fd, 128) != 0) {
        problem = "cannot listen on " + path + ": " + std::strerror(errno);
        if (s->listen_fd >= 0) ::close(s->listen_fd);
        ::close(s->lock_fd);
        return nullptr;
    }
    s->stop_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    // The pid file is for people and `aloe daemon status`; the lock is what counts.
    const std::string text = std::to_string(::getpid()) + "\n";
    if (const int fd = ::open(s->pid_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644); fd >= 0) {
        (void)!::write(fd, text.data(), text.size());
        ::close(fd);
    }
    return std::unique_ptr<daemon_server>(new daemon_server(std::move(s)));
}

daemon_server::~daemon_server() {
    for (auto& c : s_->connections) {
        if (c.pidfd >= 0) ::close(c.pidfd);
        ::close(c.fd);
    }
    if (s_->listen_fd >= 0) {
        ::close(s_->listen_fd);
        ::unlink(s_->socket_path.c_str());
        ::unlink(s_->pid_path.c_str());
    }
    if (s_->stop_fd >= 0) ::close(s_->stop_fd);
    if (s_->lock_fd >= 0) ::close(s_->lock_fd);
}

void daemon_server::stop() noexcept {
    const std::uint64_t one = 1;
    (void)!::write(s_->stop_fd, &one, sizeof one);
}

const client_table& daemon_server::table() const { return s_->table; }
unsigned daemon_server::cores() const { return s_->table.cores(); }

int daemon_server::run() {
    state& s = *s_;
    auto say = [&](const std::string& line) { s.say(log, line); };
    say("aloed: serving " + s.socket_path + " (" + std::to_string(s.table.cores()) + " cores, policy " +
        std::string(policy_name(s.table.policy())) + (s.options.system_wide ? ", every user" : ", this user only") + ")");

    using connection = state::connection;
    auto drop = [&](std::size_t i, const std::string& why) {
        connection& c = s.connections[i];
        if (c.client) {
            if (const client_record* r = s.table.find(c.fd))
                say("client " + std::to_string(r->pid) + " (" + r->name + ") left: " + why);
            s.table.remove(c.fd);
        }
        if (c.pidfd >= 0) ::close(c.pidfd);
        ::close(c.fd);
        s.connections.erase(s.connections.begin() + static_cast<std::ptrdiff_t>(i));
    };
    // Non-malleable clients keep their thread count; each is confined to as many CPUs as
    // its allocation instead (affinity_plan.hpp), re-done when its share moves.
    auto confine = [&]() {
        std::vector<client_record*> fixed;
        std::vector<unsigned> shares;
        for (auto& r : s.table.clients())
            if (r.flags & client_not_malleable) {
                fixed.push_back(&r);
                shares.push_back(r.allocated);
            }
        if (fixed.empty()) return;
        const auto runs = plan_confinement(s.cpus_by_core, shares);
        for (std::size_t i = 0; i < fixed.size(); ++i) {
            client_record& r = *fixed[i];
            if (runs[i] == r.confined || runs[i].empty()) continue;
            const std::string problem = confine_process(r.pid, runs[i], s.options.proc_root);
            if (problem.empty()) {
                r.confined = runs[i];
                std::string list;
                for (const int c : runs[i]) list += (list.empty() ? "" : ",") + std::to_string(c);
                say("pid " + std::to_string(r.pid) + " (not malleable) confined to CPUs " + list);
            } else if (!r.confine_failed) {
                r.confine_failed = true;
                say("pid " + std::to_string(r.pid) + " (not malleable) cannot be confined: " + problem);
            }
        }
    };
    // Connections whose offer or request waits for this round's rebalance to be answered.
    std::vector<int> asked;
    auto send_updates = [&](bool everyone) {
        auto updates = s.table.rebalance(everyone, now_seconds());
        senders_last(updates, asked);
        for (const auto& u : updates)
            if (auto* c = s.by_fd(u.connection)) state::deliver(*c, u.message);
        // An offer or a request is answered with the sender's allocation, as a report is:
        // the one just pushed, or the unchanged one.
        for (const int fd : asked) {
            const bool told = std::any_of(updates.begin(), updates.end(),
                                          [&](const allocation_update& u) { return u.connection == fd; });
            auto* c = s.by_fd(fd);
            const client_record* r = s.table.find(fd);
            if (!told && c != nullptr && r != nullptr) state::deliver(*c, s.table.allocation_for(*r));
        }
        asked.clear();
        confine();
    };
    auto status_end = [&]() {
        status_end_message m;
        m.cores = s.table.cores();
        m.available = s.table.available();
        m.clients = static_cast<std::uint32_t>(s.table.clients().size());
        m.policy = s.table.policy();
        return m;
    };
    double background = 0;

    // One message from connection i; returns whether the client set changed.
    auto handle = [&](std::size_t i, const message& m, double now) -> bool {
        connection& c = s.connections[i];
        const bool owner_or_root = c.peer.uid == s.owner || c.peer.uid == 0;
        switch (kind_of(m)) {
        case message_kind::hello: {
            const auto& h = std::get<hello_message>(m);
            if (h.pid != c.peer.pid) {
                state::deliver(c, error_of(error_code::not_permitted, "the hello names pid " + std::to_string(h.pid) +
                                                                      ", not the sender's " + std::to_string(c.peer.pid)));
                return false;
            }
            if (!c.client && s.table.clients().size() >= s.options.max_clients) {
                state::deliver(c, error_of(error_code::busy, "the daemon serves " + std::to_string(s.options.max_clients) +
                                                              " clients already"));
                return false;
            }
            if (c.pidfd < 0) c.pidfd = open_pidfd(c.peer.pid);
            const auto& r = s.table.add(c.fd, c.peer.pid, c.peer.uid, h, process_name(s.options.proc_root, c.peer.pid), now);
            c.client = true;
            if (const auto j = read_pid_jiffies(c.peer.pid, s.options.proc_root)) s.meter.joined({c.peer.pid, *j});
            say("client " + std::to_string(r.pid) + " (" + r.name + ", uid " + std::to_string(r.uid) + ") joined, " +
                std::to_string(r.own_threads) + " threads alone" +
                ((r.flags & client_not_malleable) ? ", not malleable" : "") + (r.job.empty() ? "" : ", job " + r.job));
            return true;
        }
        case message_kind::report: {
            if (!s.table.report(c.fd, std::get<report_message>(m), now)) {
                state::deliver(c, error_of(error_code::not_registered, "a report before a hello"));
                return false;
            }
            state::deliver(c, s.table.allocation_for(*s.table.find(c.fd)));
            return false;
        }
        case message_kind::goodbye:
            if (c.client) {
                s.table.remove(c.fd);
                c.client = false;
                return true;
            }
            return false;
        case message_kind::offer:
        case message_kind::request: {
            // The sender's own offer or request only (its connection's client); applied at
            // this round's rebalance, after every message of the round (a burst of them
            // costs one rebalance), and answered then.
            client_record* r = s.table.find(c.fd);
            if (r == nullptr) {
                state::deliver(c, error_of(error_code::not_registered, "an offer or request of cores before a hello"));
                return false;
            }
            if (r->job.empty()) {
                state::deliver(c, error_of(error_code::not_permitted,
                                           "pid " + std::to_string(r->pid) +
                                               " named no job in its hello: only ranks of one job lend cores"));
                return false;
            }
            if (const auto* o = std::get_if<offer_message>(&m)) s.table.offer(*r, *o, now);
            else s.table.request(*r, std::get<request_message>(m));
            if (std::find(asked.begin(), asked.end(), c.fd) == asked.end()) asked.push_back(c.fd);
            return false;
        }
        case message_kind::step: {
            // Kept for status and top; nothing to answer.
            client_record* r = s.table.find(c.fd);
            if (r == nullptr) {
                state::deliver(c, error_of(error_code::not_registered, "a step before a hello"));
                return false;
            }
            r->last_step = std::get<step_message>(m);
            return false;
        }
        case message_kind::control: {
            const auto& ctl = std::get<control_message>(m);
            if (ctl.action == control_action::steer) {
                client_record* target = s.table.find_pid(ctl.pid);
                if (target == nullptr) {
                    state::deliver(c, error_of(error_code::unknown_pid, "no client with pid " + std::to_string(ctl.pid)));
                    return false;
                }
                if (target->uid != c.peer.uid && c.peer.uid != 0) {
                    state::deliver(c, error_of(error_code::not_permitted, "pid " + std::to_string(ctl.pid) + " belongs to another user"));
                    return false;
                }
                s.table.steer(*target, ctl.threads);
                say("pid " + std::to_string(ctl.pid) + " capped at " + (ctl.threads ? std::to_string(ctl.threads) : "none") +
                    " by uid " + std::to_string(c.peer.uid));
                send_updates(false);
                state::deliver(c, status_end());
                return false;
            }
            if (!owner_or_root) {
                state::deliver(c, error_of(error_code::not_permitted, "only the daemon's user or root may stop it or change its policy"));
                return false;
            }
            if (ctl.action == control_action::stop) {
                say("stopping at the request of uid " + std::to_string(c.peer.uid) + " (pid " + std::to_string(c.peer.pid) + ")");
                state::deliver(c, status_end());
                s.stopping = true;
                return false;
            }
            s.table.set_policy(ctl.policy);
            say("policy is now " + std::string(policy_name(ctl.policy)));
            send_updates(false);
            state::deliver(c, status_end());
            return false;
        }
        case message_kind::status_query: {
            for (const auto& r : s.table.clients()) {
                if (r.uid != c.peer.uid && c.peer.uid != 0 && c.peer.uid != s.owner) continue;
                status_entry_message e;
                e.pid = r.pid;
                e.uid = r.uid;
                e.threads = r.allocated;
                e.own_threads = r.own_threads;
                e.efficiency = std::clamp(r.slope > 0 ? r.efficiency.value() : 0.0, 0.0, 64.0);
                e.flags = r.flags;
                e.measure = r.measure;
                e.name = make_text<16>(r.name);
                e.job = make_text<48>(r.job);
                e.lent = r.lent;
                e.borrowed = r.borrowed;
                e.step = r.last_step;
                state::deliver(c, e);
            }
            auto end = status_end();
            end.background = std::clamp(background, 0.0, static_cast<double>(max_threads));
            state::deliver(c, end);
            return false;
        }
        default:
            state::deliver(c, error_of(error_code::malformed, "a " + std::string(kind_name(kind_of(m))) +
                                                               " message is the daemon's to send"));
            return false;
        }
    };

    double next_referee = now_seconds() + s.options.referee_seconds;
    double next_lookout = now_seconds() + s.options.lookout_seconds;
    std::vector<pollfd> fds;
    while (!s.stopping) {
        fds.clear();
        fds.push_back({s.stop_fd, POLLIN, 0});
        fds.push_back({s.listen_fd, POLLIN, 0});
        for (const auto& c : s.connections)
            fds.push_back({c.fd, static_cast<short>(POLLIN | (c.outbox.empty() ? 0 : POLLOUT)), 0});
        for (const auto& c : s.connections) fds.push_back({c.pidfd, POLLIN, 0});  // -1: ignored by poll
        const double now = now_seconds();
        // An offer ends at its time, not at the next referee round.
        const double wake = std::min({next_referee, next_lookout, s.table.next_offer_end()});
        const double wait = std::max(0.0, wake - now);
        const int ready = ::poll(fds.data(), fds.size(), static_cast<int>(std::ceil(wait * 1000)));
        if (ready < 0 && errno != EINTR) {
            say(std::string("poll failed: ") + std::strerror(errno));
            break;
        }
        if (fds[0].revents & POLLIN) break;
        bool changed = false;
        const double t = now_seconds();
        const std::size_t n = s.connections.size();

        // Exits first (pidfd), then messages, each connection found by fd: a drop shifts
        // the vector, so indices are looked up again.
        std::vector<int> gone, readable;
        for (std::size_t i = 0; i < n; ++i) {
            if (fds[2 + i].revents & POLLOUT) state::flush(s.connections[i]);
            if (fds[2 + n + i].fd >= 0 && (fds[2 + n + i].revents & POLLIN)) gone.push_back(fds[2 + i].fd);
            else if (fds[2 + i].revents & (POLLIN | POLLHUP | POLLERR)) readable.push_back(fds[2 + i].fd);
        }
        auto index_of = [&](int fd) -> std::ptrdiff_t {
            for (std::size_t i = 0; i < s.connections.size(); ++i)
                if (s.connections[i].fd == fd) return static_cast<std::ptrdiff_t>(i);
            return -1;
        };
        for (const int fd : gone)
            if (const auto i = index_of(fd); i >= 0) {
                changed = changed || s.connections[static_cast<std::size_t>(i)].client;
                drop(static_cast<std::size_t>(i), "the process exited");
            }
        for (const int fd : readable) {
            for (;;) {
                const auto i = index_of(fd);
                if (i < 0) break;
                auto& c = s.connections[static_cast<std::size_t>(i)];
                const received r = receive_message(fd, 0);
                if (r.status == receive_status::timeout) break;
                if (r.status == receive_status::closed || r.status == receive_status::failed) {
                    changed = changed || c.client;
                    drop(static_cast<std::size_t>(i), r.status == receive_status::closed ? "its connection closed" : "its connection failed");
                    break;
                }
                if (r.status == receive_status::invalid) {
                    std::string why = std::string(decode_error_text(r.record.error));
                    if (r.record.error == decode_error::version)
                        why = "protocol version " + std::to_string(r.record.version) + ", this aloed speaks " + std::to_string(protocol_version);
                    else if (!r.record.field.empty())
                        why += " (" + std::string(r.record.field) + ")";
                    state::deliver(c, error_of(r.record.error == decode_error::version ? error_code::version : error_code::malformed, why));
                    if (++c.bad_records >= most_bad_records) {
                        changed = changed || c.client;
                        say("closing the connection of pid " + std::to_string(c.peer.pid) + ": " + std::to_string(most_bad_records) + " bad records");
                        drop(static_cast<std::size_t>(i), "too many bad records");
                        break;
                    }
                    continue;
                }
                if (!c.budget.take(t)) {
                    state::deliver(c, error_of(error_code::busy, "more than " + std::to_string(static_cast<int>(most_messages_per_second)) +
                                                                     " messages a second from one connection"));
                    if (++c.bad_records >= most_bad_records) {
                        changed = changed || c.client;
                        say("closing the connection of pid " + std::to_string(c.peer.pid) + ": it floods the daemon");
                        drop(static_cast<std::size_t>(i), "it flooded the daemon");
                        break;
                    }
                    continue;
                }
                if (handle(static_cast<std::size_t>(i), *r.record.value, t)) changed = true;
                if (s.stopping) break;
            }
        }
        if (fds[1].revents & POLLIN) {
            for (;;) {
                const int fd = ::accept4(s.listen_fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
                if (fd < 0) break;
                const auto peer = peer_of(fd);
                if (!peer || (!s.options.system_wide && peer->uid != s.owner && peer->uid != 0)) {
                    send_message(fd, error_of(error_code::not_permitted, "this aloed serves uid " + std::to_string(s.owner) + " only"));
                    ::close(fd);
                    continue;
                }
                state::connection c;
                c.fd = fd;
                c.peer = *peer;
                s.connections.push_back(std::move(c));
            }
        }

        for (std::size_t i = 0; i < s.connections.size();) {
            if (!s.connections[i].overflowed) {
                ++i;
                continue;
            }
            changed = changed || s.connections[i].client;
            say("closing the connection of pid " + std::to_string(s.connections[i].peer.pid) + ": it reads nothing of " +
                std::to_string(most_queued) + " queued messages");
            drop(i, "it stopped reading");
        }

        const double after = now_seconds();
        if (after >= next_lookout) {
            next_lookout = after + s.options.lookout_seconds;
            // Kill(pid, 0) backs up pidfds where the kernel has none.
            for (std::size_t i = 0; i < s.connections.size();) {
                const auto& c = s.connections[i];
                if (c.client && c.pidfd < 0 && ::kill(c.peer.pid, 0) != 0 && errno == ESRCH) {
                    changed = true;
                    drop(i, "the process exited");
                } else {
                    ++i;
                }
            }
            if (s.options.background_load) {
                if (s.table.cores() < s.online_cpus) {
                    if (!s.warned_partial_node) {
                        s.warned_partial_node = true;
                        say("background load not measured: this aloed shares " + std::to_string(s.table.cores()) + " of the node's " +
                            std::to_string(s.online_cpus) + " CPUs, and /proc/stat's total covers them all");
                    }
                } else if (const auto machine = read_machine_jiffies(s.options.proc_root)) {
                    std::vector<pid_jiffies> mine;
                    for (const auto& r : s.table.clients())
                        if (const auto j = read_pid_jiffies(r.pid, s.options.proc_root)) mine.push_back({r.pid, *j});
                    if (const auto self = read_pid_jiffies(::getpid(), s.options.proc_root)) mine.push_back({::getpid(), *self});
                    background = s.meter.sample(*machine, mine);
                    const unsigned available = available_cores(s.table.cores(), background);
                    if (available != s.table.available()) {
                        say("background load " + std::to_string(background).substr(0, 4) + " CPUs: sharing " + std::to_string(available) + " cores");
                        s.table.set_available(available);
                    }
                }
            }
        }
        // Offers that ended give their cores back now; a new offer or request moves cores now.
        const bool lending_moved = s.table.expire(after) || !asked.empty();
        if (changed) {
            send_updates(true);
            next_referee = after + s.options.referee_seconds;
        } else if (after >= next_referee) {
            send_updates(false);
            next_referee = after + s.options.referee_seconds;
        } else if (lending_moved) {
            send_updates(false);
        }
    }
    say("aloed: stopped");
    return 0;
}

}  // namespace aloe::coord

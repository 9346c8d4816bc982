#include "coord/daemon_client.hpp"

#include "coord/daemon_address.hpp"
#include "coord/daemon_connection.hpp"
#include "coord/token_bucket.hpp"
#include "loop/participant_limit.hpp"
#include "runtime/borrowed_cores.hpp"
#include "runtime/config.hpp"
#include "runtime/report.hpp"
#include "runtime/short_slice.hpp"
#include "runtime/signals_blocked.hpp"

#include <atomic>
#include <chrono>
#include <mutex>
#include <poll.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>
#include <vector>

namespace aloe::coord {
namespace {

std::int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

constexpr std::int64_t poll_every_ns = 10'000'000;       // 10 ms
constexpr std::int64_t poll_fast_ns = 500'000;           // 0.5 ms: ranks that may lend or borrow
constexpr std::int64_t retry_every_ns = 1'000'000'000;   // a missing daemon is looked for each second
constexpr std::int64_t answer_within_ns = 1'000'000'000; // the hello's answer
constexpr double report_rate_hz = 5.0;                   // SCAF's check-in limit

// The MPI job a process belongs to, from its launcher: the clients of one job are grouped
// (issue 19 lends cores between them).
std::string job_of(const runtime::env_lookup& env) {
    for (const char* name : {"PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid"})
        if (auto v = env(name); v && !v->empty()) return *v;
    if (auto v = env("SLURM_JOB_ID"); v && !v->empty()) {
        const auto step = env("SLURM_STEP_ID");
        return "slurm-" + *v + (step && !step->empty() ? "." + *step : "");
    }
    return {};
}

}  // namespace

struct daemon_client::impl {
    std::uint32_t kind;
    runtime::daemon_mode mode = runtime::daemon_mode::automatic;
    std::vector<daemon_address> addresses;
    std::string job;

    std::atomic<unsigned> allocation{0};  // 0: none holds
    std::atomic<unsigned> clients{0};
    std::atomic<std::int64_t> next_poll{0};
    std::atomic<bool> not_malleable{false};
    std::atomic<bool> linked{false};  // fd >= 0, for readers without the lock
    std::atomic<unsigned> last_own{1};  // the own count of the latest threads() call
    std::atomic<unsigned> share{0};     // the policy's, before lending
    std::atomic<unsigned> lent{0};
    std::atomic<unsigned> borrowed{0};
    std::atomic<std::int64_t> next_step{0};  // step(): not before (now_ns)
    std::atomic<std::int64_t> poll_every{poll_every_ns};

    std::mutex mutex;  // the connection and everything below
    int fd = -1;
    std::string connected_to;  // path, while connected
    std::string why_alone = "not asked yet";
    std::int64_t next_dial = 0;
    std::int64_t hello_sent = 0;
    bool answered = false;
    std::uint32_t sequence = 0;
    token_bucket reports{report_rate_hz};

    // `id` is a warning's (W70x). Under ALOE_DAEMON=auto a program is expected to run alone
    // at times, so the same line is an info line (shown with ALOE_VERBOSE=coord) under the
    // info id I71x: an info line never carries a warning's id.
    void say(bool warning, std::string_view id, std::string what, unsigned own) {
        why_alone = what;
        if (mode == runtime::daemon_mode::off) return;
        const bool loud = warning && mode == runtime::daemon_mode::on;
        const std::string shown_id = loud ? std::string(id) : "I71" + std::string(id.substr(3));
        runtime::report_once({loud ? runtime::report_level::warning : runtime::report_level::info,
                              runtime::report_category::coord, shown_id, std::move(what),
                              "the program's own " + std::to_string(own) + " threads"});
    }

    void disconnect() {
        if (fd >= 0) ::close(fd);
        fd = -1;
        linked.store(false, std::memory_order_relaxed);
        connected_to.clear();
        answered = false;
        allocation.store(0, std::memory_order_relaxed);
        clients.store(0, std::memory_order_relaxed);
        forget_lending();
        loop::set_participant_limit_refresh(nullptr);
        loop::lift_participant_limit();
    }

    // No daemon: nothing lent or borrowed (the spares go back to sleep at their next loop).
    void forget_lending() {
        share.store(0, std::memory_order_relaxed);
        lent.store(0, std::memory_order_relaxed);
        if (borrowed.exchange(0, std::memory_order_relaxed) != 0) runtime::set_borrowed_cores(0, {});
    }

    void dial(std::int64_t now, unsigned own) {
        next_dial = now + retry_every_ns;
        std::string problems;
        for (const auto& a : addresses) {
            dial_result d = dial_daemon(a.path);
            if (d.fd < 0) {
                // A missing socket is the usual case (no daemon); anything else is worth
                // saying even in auto mode.
                if (d.error != ENOENT && d.error != ECONNREFUSED) say(true, "W702", d.problem, own);
                if (!problems.empty()) problems += "; ";
                problems += a.path + (d.error == ENOENT ? ": none" : d.error == ECONNREFUSED ? ": stale, or not a socket" : ": refused");
                continue;
            }
            hello_message h;
            h.pid = ::getpid();
            h.flags = kind | (not_malleable.load(std::memory_order_relaxed) ? client_not_malleable : 0);
            h.own_threads = std::clamp(own, 1u, max_threads);
            h.job = make_text<48>(job);
            if (!send_message(d.fd, h, ++sequence)) {
                ::close(d.fd);
                continue;
            }
            fd = d.fd;
            linked.store(true, std::memory_order_relaxed);
            connected_to = a.path;
            loop::set_participant_limit_refresh(&refresh_in_loop);
            hello_sent = now;
            answered = false;
            runtime::report_once({runtime::report_level::info, runtime::report_category::coord, "I701",
                                  "joined aloed at " + a.path + " (" + a.origin + ")", ""});
            return;
        }
        say(true, "W701", "no node daemon (" + problems + ")", own);
    }

    void drain(unsigned own) {
        for (;;) {
            const received r = receive_message(fd, 0);
            if (r.status == receive_status::timeout) return;
            if (r.status == receive_status::closed || r.status == receive_status::failed) {
                const std::string path = connected_to;
                disconnect();
                say(true, "W703", "aloed at " + path + " went away", own);
                return;
            }
            if (r.status == receive_status::invalid) {
                const std::string path = connected_to;
                disconnect();
                say(true, "W704",
                    r.record.error == decode_error::version
                        ? "aloed at " + path + " speaks protocol version " + std::to_string(r.record.version) +
                              ", this client " + std::to_string(protocol_version) +
                              " (restart the daemon with this aloe: aloe daemon stop, then aloe daemon start)"
                        : "aloed at " + path + " sent a message this client cannot read (" +
                              std::string(decode_error_text(r.record.error)) + ")",
                    own);
                return;
            }
            if (const auto* a = std::get_if<allocation_message>(&*r.record.value)) {
                answered = true;
                // Borrowed cores first: a loop that sees the higher limit finds the spares' CPUs.
                std::vector<int> cpus;
                for (unsigned bit = 0; bit < 64; ++bit)
                    if ((a->cpu_mask >> bit) & 1u) cpus.push_back(static_cast<int>(a->cpu_base + bit));
                if (borrowed.exchange(a->borrowed, std::memory_order_relaxed) != a->borrowed || !cpus.empty())
                    runtime::set_borrowed_cores(static_cast<int>(a->borrowed), cpus);
                share.store(a->share, std::memory_order_relaxed);
                lent.store(a->lent, std::memory_order_relaxed);
                allocation.store(a->threads, std::memory_order_relaxed);
                clients.store(a->clients, std::memory_order_relaxed);
                // Running loops shrink too (their workers above the count leave after their
                // chunk); a program whose count is fixed is confined by affinity instead.
                if (not_malleable.load(std::memory_order_relaxed)) loop::lift_participant_limit();
                else loop::limit_participants(static_cast<int>(a->threads));
            } else if (const auto* e = std::get_if<error_message>(&*r.record.value)) {
                runtime::report_once({runtime::report_level::warning, runtime::report_category::coord, "W705",
                                      "aloed refused a message: " + std::string(text_of(e->text)), ""});
                if (!answered && e->code != error_code::malformed) {
                    const std::string path = connected_to;
                    disconnect();
                    next_dial = now_ns() + 60 * retry_every_ns;  // a refusal will not change soon
                    say(true, "W706", "aloed at " + path + " refused this process", own);
                    return;
                }
            }
        }
    }

    /// Participant 0 of a running loop, before each dynamic chunk (participant_limit.hpp):
    /// the daemon's socket is read during a long loop as at a region's start.
    static void refresh_in_loop() noexcept;

    // The listener (listen_for_answers): a thread asleep in poll() on the socket that reads
    // each answer as it comes.
    std::atomic<bool> listening{false};
    static void* listen_main(void* self) noexcept;

    // Under the lock, connected: the next timed poll from now, and this one (the loop hook's
    // and the listener's; neither may throw).
    void poll_connected(std::int64_t now) noexcept {
        next_poll.store(now + poll_every.load(std::memory_order_relaxed), std::memory_order_relaxed);
        try {
            poll(last_own.load(std::memory_order_relaxed));
        } catch (...) {  // a message that could not be said (no memory): the next look says it
        }
    }

    void poll(unsigned own) {
        const std::int64_t now = now_ns();
        if (fd < 0) {
            if (now >= next_dial) dial(now, own);
            if (fd < 0) return;
        }
        drain(own);
        if (fd >= 0 && !answered && now - hello_sent > answer_within_ns)
            say(true, "W707", "aloed at " + connected_to + " has not answered in 1 s", own);
    }
};

void* daemon_client::impl::listen_main(void* self) noexcept {
    impl& i = *static_cast<impl*>(self);
    // It runs microseconds per answer, and a grant that waits for the rank's own thread's
    // slice to end reaches the loop late (runtime/short_slice.hpp). Refused: the default.
    runtime::request_short_slice();
    for (;;) {
        int fd = -1;
        {
            std::lock_guard lock(i.mutex);
            fd = i.fd;
        }
        if (fd < 0) {  // dialling stays with the program's own calls (regions, loops, waits)
            const timespec ts{0, 10'000'000};
            nanosleep(&ts, nullptr);
            continue;
        }
        // A bounded sleep: the socket may be closed and its number reused meanwhile.
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 100) <= 0 || (p.revents & POLLNVAL) != 0) continue;
        std::lock_guard lock(i.mutex);
        if (i.fd == fd) i.poll_connected(now_ns());
    }
}

namespace {
daemon_client::impl* the_process_client = nullptr;

void drop_in_fork_child() {
    // The child is single-threaded here: no lock is held by another thread of it.
    if (the_process_client == nullptr) return;
    auto& i = *the_process_client;
    new (&i.mutex) std::mutex();
    if (i.fd >= 0) ::close(i.fd);
    i.fd = -1;
    i.linked.store(false, std::memory_order_relaxed);
    i.connected_to.clear();
    i.answered = false;
    i.allocation.store(0, std::memory_order_relaxed);
    i.forget_lending();
    loop::set_participant_limit_refresh(nullptr);
    loop::lift_participant_limit();
    i.next_dial = 0;
    i.next_poll.store(0, std::memory_order_relaxed);
    i.listening.store(false, std::memory_order_relaxed);  // the listener thread stayed in the parent
}
}  // namespace

daemon_client::daemon_client(std::uint32_t kind) : impl_(new impl{}) {
    impl_->kind = kind;
    const runtime::config& cfg = runtime::current_config();
    impl_->mode = cfg.daemon;
    const auto env = runtime::process_environment();
    const auto lookup = [&](std::string_view name) -> std::optional<std::string> {
        // ALOE_DAEMON_SOCKET as the configuration read it (the same value as the variable).
        if (name == socket_variable) return cfg.daemon_socket.empty() ? std::nullopt : std::optional(cfg.daemon_socket);
        return env(name);
    };
    impl_->addresses = client_addresses(lookup, ::geteuid());
    impl_->job = job_of(env);
    if (impl_->mode == runtime::daemon_mode::off) impl_->why_alone = "ALOE_DAEMON=off";
}

daemon_client& daemon_client::process(std::uint32_t kind) {
    // Never destroyed: regions may start during static destruction.
    static daemon_client* client = [&] {
        auto* c = new daemon_client(kind);
        the_process_client = c->impl_;
        ::pthread_atfork(nullptr, nullptr, drop_in_fork_child);
        return c;
    }();
    return *client;
}

void daemon_client::impl::refresh_in_loop() noexcept {
    impl* i = the_process_client;
    // With a listener, answers are read as they come and loops have nothing to poll for: a
    // clock read before every chunk cost a one-thread loop of 96 chunks 2.5 us (47 instructions a
    // chunk, callgrind) and a balanced lending job 1-2% at 20 loops a step.
    if (i == nullptr || i->listening.load(std::memory_order_relaxed)) return;
    const std::int64_t now = now_ns();
    if (now < i->next_poll.load(std::memory_order_relaxed)) return;
    std::unique_lock lock(i->mutex, std::try_to_lock);
    if (!lock.owns_lock() || i->fd < 0) return;  // never dial (connect, hello) from inside a loop
    i->poll_connected(now);
}

unsigned daemon_client::threads(unsigned own) {
    impl& i = *impl_;
    if (i.mode == runtime::daemon_mode::off) return own;
    if (i.last_own.load(std::memory_order_relaxed) != own) i.last_own.store(own, std::memory_order_relaxed);
    refresh();
    const unsigned a = i.allocation.load(std::memory_order_relaxed);
    return a > 0 ? a : own;
}

void daemon_client::refresh() {
    impl& i = *impl_;
    if (i.mode == runtime::daemon_mode::off) return;
    const std::int64_t now = now_ns();
    if (now < i.next_poll.load(std::memory_order_relaxed)) return;
    std::unique_lock lock(i.mutex, std::try_to_lock);
    if (!lock.owns_lock()) return;
    i.next_poll.store(now + i.poll_every.load(std::memory_order_relaxed), std::memory_order_relaxed);
    i.poll(i.last_own.load(std::memory_order_relaxed));
}

bool daemon_client::report(const report_message& r) {
    impl& i = *impl_;
    if (i.mode == runtime::daemon_mode::off) return false;
    std::unique_lock lock(i.mutex, std::try_to_lock);
    if (!lock.owns_lock() || i.fd < 0) return false;
    if (!i.reports.take(static_cast<double>(now_ns()) * 1e-9)) return false;
    report_message m = r;
    m.flags = i.kind | (i.not_malleable.load(std::memory_order_relaxed) ? client_not_malleable : 0);
    return send_message(i.fd, m, ++i.sequence);
}

void daemon_client::mark_not_malleable() {
    impl& i = *impl_;
    if (i.not_malleable.exchange(true, std::memory_order_relaxed)) return;
    // Said at once to a daemon already joined (a report that measures nothing), so that it
    // confines the process from its next rebalance on; a later hello carries the flag.
    std::lock_guard lock(i.mutex);
    loop::lift_participant_limit();  // under the lock: drain() sets it under the lock too
    if (i.fd < 0) return;
    report_message r;
    r.threads = std::clamp(i.allocation.load(std::memory_order_relaxed), 1u, max_threads);
    r.flags = i.kind | client_not_malleable;
    r.measure = efficiency_measure::none;
    send_message(i.fd, r, ++i.sequence);
}

bool daemon_client::lend(unsigned cores, bool whole) {
    impl& i = *impl_;
    if (i.mode == runtime::daemon_mode::off || cores == 0) return false;
    std::lock_guard lock(i.mutex);
    if (i.fd < 0 || !i.answered || i.job.empty()) return false;
    offer_message m;
    m.cores = std::min(cores, max_threads);
    m.flags = whole ? offer_whole : 0;
    return send_message(i.fd, m, ++i.sequence);
}

bool daemon_client::want(unsigned cores) {
    impl& i = *impl_;
    if (i.mode == runtime::daemon_mode::off) return false;
    std::lock_guard lock(i.mutex);
    if (i.fd < 0 || !i.answered || i.job.empty()) return false;
    request_message m;
    m.cores = std::min(cores, max_threads);
    return send_message(i.fd, m, ++i.sequence);
}

bool daemon_client::step(const step_message& m) {
    constexpr std::int64_t every_ns = 250'000'000;
    impl& i = *impl_;
    if (i.mode == runtime::daemon_mode::off) return false;
    const std::int64_t now = now_ns();
    if (now < i.next_step.load(std::memory_order_relaxed)) return false;
    i.next_step.store(now + every_ns, std::memory_order_relaxed);  // tried or not: the next in 0.25 s
    std::unique_lock lock(i.mutex, std::try_to_lock);
    if (!lock.owns_lock() || i.fd < 0 || !i.answered) return false;
    return send_message(i.fd, m, ++i.sequence);
}

bool daemon_client::in_lending_job() const {
    impl& i = *impl_;
    return !i.job.empty() && i.linked.load(std::memory_order_relaxed) && i.allocation.load(std::memory_order_relaxed) > 0;
}

unsigned daemon_client::share() const { return impl_->share.load(std::memory_order_relaxed); }
unsigned daemon_client::lent() const { return impl_->lent.load(std::memory_order_relaxed); }
unsigned daemon_client::borrowed() const { return impl_->borrowed.load(std::memory_order_relaxed); }

void daemon_client::poll_fast(bool on) {
    impl_->poll_every.store(on ? poll_fast_ns : poll_every_ns, std::memory_order_relaxed);
    if (on) impl_->next_poll.store(0, std::memory_order_relaxed);
}

bool daemon_client::listen_for_answers() {
    impl& i = *impl_;
    if (i.mode == runtime::daemon_mode::off || i.listening.exchange(true, std::memory_order_acq_rel)) return false;
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0) {
        i.listening.store(false, std::memory_order_release);
        return false;
    }
    pthread_attr_setstacksize(&attr, 256 * 1024);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    // The listener keeps the caller's CPUs.
    pthread_t t;
    int rc = 0;
    {
        const runtime::signals_blocked on_the_listener;
        rc = pthread_create(&t, &attr, &impl::listen_main, &i);
    }
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        i.listening.store(false, std::memory_order_release);
        runtime::report_once({runtime::report_level::info, runtime::report_category::coord, "I708",
                              "no thread to hear aloed's answers as they come", "answers read every 0.5 ms from loops"});
        return false;
    }
    return true;
}

bool daemon_client::allocated() const { return impl_->allocation.load(std::memory_order_relaxed) > 0; }
bool daemon_client::connected() const { return impl_->linked.load(std::memory_order_relaxed); }
unsigned daemon_client::clients() const { return impl_->clients.load(std::memory_order_relaxed); }

std::string daemon_client::describe() const {
    impl& i = *impl_;
    std::lock_guard lock(i.mutex);
    if (i.fd >= 0 && i.answered)
        return "joined aloed at " + i.connected_to + ": " + std::to_string(i.allocation.load()) + " threads, " +
               std::to_string(i.clients.load()) + " clients on the node";
    if (i.fd >= 0) return "waiting for aloed at " + i.connected_to + " to answer";
    return "alone: " + i.why_alone;
}

}  // namespace aloe::coord

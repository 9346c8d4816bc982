// How long a rank that lent its core waits to have it back (issue 19, deliverable 1: "the
// owner reclaims them when it needs them again, within a bound you measure and document").
//
// Two ranks of one job on one node, bound one per core, libaloe-mpi preloaded with lending
// on, an aloed serving them (bench/micro/reclaim_bound.py builds and runs this):
//
//   rank 0, the lender: waits in MPI_Recv, so it lends its core (the polite wait's offer);
//     when the message comes its MPI_Recv takes the core back (a request to aloed) and
//     returns, and the rank computes for --lender-ms (an aloe loop on its one thread).
//   rank 1, the borrower: runs long aloe dynamic loops (chunks of --chunk-us of calibrated
//     work) on its one own thread plus the spare worker that joins as a guest on rank 0's
//     CPU while it is lent. Every chunk records its start and end (CLOCK_MONOTONIC), its CPU
//     and its participant. A helper thread sends rank 0 its message a random --hold-min-us
//     .. --hold-max-us after the guest's first chunk on rank 0's CPU (so the reclaim falls
//     at a random phase of the borrower's chunks and polls), and ends the loop --after-ms
//     later.
//
// Both ranks also log the messages their daemon client exchanges with aloed, by defining
// send() and recv() in this executable (linked with -rdynamic, so libaloe's calls come here
// first; the bytes are passed to the kernel unchanged): rank 0's offer and take-back with
// the instant each was sent, rank 1's allocations with the instant they were read and,
// from the kernel's receive timestamp (SO_TIMESTAMPNS, enabled on the daemon's socket when
// the hello goes out), the instant aloed's answer reached the socket. CLOCK_MONOTONIC is
// one clock for all processes of the machine, so the ranks' instants compare directly.
//
// Each rank writes <prefix>.rank<r>.txt: whitespace-separated records, one per line, the
// first word naming the record (reclaim_bound.py reads them).
#undef _FORTIFY_SOURCE

#include <aloe/parallel_for.hpp>
#include <aloe/schedule.hpp>
#include <aloe/team.hpp>

#include "coord/message.hpp"  // the protocol's decoder (libaloe exports it to aloe's own tools)

#define OMPI_SKIP_MPICXX 1  // the C API only
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <linux/futex.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <thread>
#include <variant>
#include <vector>

namespace {

using i64 = std::int64_t;

i64 mono_ns() noexcept {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return i64{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}
i64 real_ns() noexcept {
    timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return i64{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}
i64 thread_cpu_ns() noexcept {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return i64{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}
void sleep_until(i64 t) noexcept {
    const timespec ts{static_cast<time_t>(t / 1'000'000'000), static_cast<long>(t % 1'000'000'000)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
    }
}

// ---- the daemon's messages, as this process's client sends and receives them ----

struct socket_event {
    i64 t = 0;        // send: just before the send; receive: just after it returned
    i64 queued = -1;  // receive: when the record reached this socket (kernel timestamp), else -1
    int kind = 0;     // coord::message_kind
    char dir = 's';   // 's' sent, 'r' received
    std::uint32_t a = 0, b = 0, c = 0, d = 0;  // offer: cores, flags; request: cores; allocation: threads, share, lent, borrowed
};
constexpr std::size_t max_events = 1 << 16;
socket_event events[max_events];
std::atomic<std::size_t> event_count{0};
std::atomic<int> daemon_fd{-1};

void log_event(const socket_event& e) noexcept {
    const std::size_t i = event_count.fetch_add(1, std::memory_order_relaxed);
    if (i < max_events) events[i] = e;
}

std::optional<aloe::coord::message> decode_record(const void* buf, std::size_t n) noexcept {
    if (n < aloe::coord::header_size || std::memcmp(buf, "ALOE", 4) != 0) return std::nullopt;
    const auto d = aloe::coord::decode(std::span(static_cast<const std::byte*>(buf), n));
    return d.value;
}

void note_sent(int fd, const void* buf, std::size_t n) noexcept {
    const auto m = decode_record(buf, n);
    if (!m) return;
    socket_event e;
    e.t = mono_ns();
    e.dir = 's';
    e.kind = static_cast<int>(aloe::coord::kind_of(*m));
    if (std::holds_alternative<aloe::coord::hello_message>(*m)) {
        // The daemon's connection: its answers get the kernel's receive timestamp from now on.
        const int on = 1;
        setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on);
        daemon_fd.store(fd, std::memory_order_relaxed);
    } else if (const auto* o = std::get_if<aloe::coord::offer_message>(&*m)) {
        e.a = o->cores;
        e.b = o->flags;
    } else if (const auto* r = std::get_if<aloe::coord::request_message>(&*m)) {
        e.a = r->cores;
    }
    log_event(e);
}

ssize_t receive_stamped(int fd, void* buf, std::size_t len, int flags) noexcept {
    iovec iov{buf, len};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(timespec)) * 2];
    msghdr mh{};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = control;
    mh.msg_controllen = sizeof control;
    const ssize_t n = syscall(SYS_recvmsg, fd, &mh, flags);
    if (n <= 0) return n;
    const int saved = errno;
    socket_event e;
    e.t = mono_ns();
    const i64 offset = real_ns() - mono_ns();  // CLOCK_REALTIME - CLOCK_MONOTONIC now
    e.dir = 'r';
    for (cmsghdr* c = CMSG_FIRSTHDR(&mh); c != nullptr; c = CMSG_NXTHDR(&mh, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
            timespec ts;
            std::memcpy(&ts, CMSG_DATA(c), sizeof ts);
            e.queued = i64{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec - offset;
        }
    }
    if (const auto m = decode_record(buf, std::min<std::size_t>(static_cast<std::size_t>(n), len))) {
        e.kind = static_cast<int>(aloe::coord::kind_of(*m));
        if (const auto* a = std::get_if<aloe::coord::allocation_message>(&*m)) {
            e.a = a->threads;
            e.b = a->share;
            e.c = a->lent;
            e.d = a->borrowed;
        }
        log_event(e);
    }
    errno = saved;
    return n;
}

}  // namespace

// libaloe's daemon client sends and receives with send() and recv(); these come first in
// the process's symbol lookup (-rdynamic) and go to the kernel directly.
extern "C" ssize_t send(int fd, const void* buf, size_t n, int flags) {
    note_sent(fd, buf, n);
    return syscall(SYS_sendto, fd, buf, n, flags, nullptr, 0);
}
extern "C" ssize_t recv(int fd, void* buf, size_t n, int flags) {
    if (fd >= 0 && fd == daemon_fd.load(std::memory_order_relaxed)) return receive_stamped(fd, buf, n, flags);
    return syscall(SYS_recvfrom, fd, buf, n, flags, nullptr, nullptr);
}

namespace {

// ---- work of a known length ----

[[gnu::noinline]] std::uint64_t spin(std::uint64_t units) noexcept {
    std::uint64_t x = 88172645463325252ull;
    for (std::uint64_t i = 0; i < units; ++i) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        asm volatile("" : "+r"(x));
    }
    return x;
}

double ns_per_unit() {
    constexpr std::uint64_t n = 1 << 20;
    i64 best = INT64_MAX;
    for (int r = 0; r < 9; ++r) {
        const i64 t0 = mono_ns();
        spin(n);
        best = std::min(best, mono_ns() - t0);
    }
    return static_cast<double>(best) / static_cast<double>(n);
}

// ---- options ----

struct options {
    double chunk_us = 100;
    int cycles = 200;
    int warmup = 5;
    double hold_min_us = 1000, hold_max_us = 3000;
    double after_ms = 20;
    double lender_ms = 25;
    double guest_timeout_ms = 300;
    double idle_ms = 0;  // the borrower sleeps this long before each loop (a lend then comes in at its start)
    bool guest_cpu = false;  // read the guest's CPU time after each chunk (a system call per chunk)
    unsigned seed = 1;
    std::string prefix = "reclaim";
};

[[noreturn]] void usage(const char* why) {
    std::fprintf(stderr,
                 "reclaim_bound: %s\nusage: reclaim_bound --out-prefix P [--chunk-us U] [--cycles N] [--warmup N]\n"
                 "       [--hold-min-us U] [--hold-max-us U] [--after-ms M] [--lender-ms M] [--guest-timeout-ms M]\n"
                 "       [--idle-ms M] [--guest-cpu 0|1] [--seed S]\n",
                 why);
    std::exit(2);
}

options parse(int argc, char** argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        const std::string k = argv[i];
        if (i + 1 >= argc) usage(("a value is missing after " + k).c_str());
        const char* v = argv[++i];
        if (k == "--chunk-us") o.chunk_us = std::atof(v);
        else if (k == "--cycles") o.cycles = std::atoi(v);
        else if (k == "--warmup") o.warmup = std::atoi(v);
        else if (k == "--hold-min-us") o.hold_min_us = std::atof(v);
        else if (k == "--hold-max-us") o.hold_max_us = std::atof(v);
        else if (k == "--after-ms") o.after_ms = std::atof(v);
        else if (k == "--lender-ms") o.lender_ms = std::atof(v);
        else if (k == "--guest-timeout-ms") o.guest_timeout_ms = std::atof(v);
        else if (k == "--idle-ms") o.idle_ms = std::atof(v);
        else if (k == "--guest-cpu") o.guest_cpu = std::atoi(v) != 0;
        else if (k == "--seed") o.seed = static_cast<unsigned>(std::atoi(v));
        else if (k == "--out-prefix") o.prefix = v;
        else usage(("unknown option " + k).c_str());
    }
    if (o.chunk_us <= 0 || o.cycles < 1 || o.warmup < 0 || o.hold_min_us < 0 || o.hold_max_us < o.hold_min_us ||
        o.after_ms <= 0 || o.lender_ms <= 0 || o.idle_ms < 0 || o.guest_timeout_ms <= 0)
        usage("a value is out of range");
    if (o.lender_ms <= o.after_ms)
        usage("--lender-ms must exceed --after-ms (the lender must wait again only after the borrower's loop ended)");
    return o;
}

constexpr int tag_go = 1, tag_cycle = 2;

std::string affinity_text() {
    cpu_set_t s;
    CPU_ZERO(&s);
    sched_getaffinity(0, sizeof s, &s);
    std::string t;
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &s)) t += (t.empty() ? "" : ",") + std::to_string(c);
    return t;
}

int first_cpu() {
    cpu_set_t s;
    CPU_ZERO(&s);
    sched_getaffinity(0, sizeof s, &s);
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &s)) return c;
    return -1;
}

void write_events(std::ostream& out) {
    const std::size_t n = std::min(event_count.load(), max_events);
    for (std::size_t i = 0; i < n; ++i) {
        const socket_event& e = events[i];
        out << "event " << e.dir << ' ' << e.kind << ' ' << e.t << ' ' << e.queued << ' ' << e.a << ' ' << e.b << ' '
            << e.c << ' ' << e.d << '\n';
    }
    if (event_count.load() > max_events) out << "events_dropped " << event_count.load() - max_events << '\n';
}

// ---- rank 0: the lender ----

int lender(const options& o, double unit_ns) {
    aloe::team& team = aloe::team::global();
    const aloe::schedule dyn = aloe::schedule::dynamic(1);
    // Its computation after each wait: iterations of 100 us, on its one thread (an aloe loop:
    // its start also reads the daemon's socket, as the light rank of a real job does).
    const auto iters = static_cast<std::int64_t>(std::max(1.0, o.lender_ms * 10));
    const auto units = static_cast<std::uint64_t>(100e3 / unit_ns);
    std::atomic<std::uint64_t> sink{0};
    auto compute = [&] {
        aloe::parallel_for(team, 0, iters, dyn, [&](aloe::subrange r, int) {
            sink.fetch_add(spin(units * r.size()), std::memory_order_relaxed);
        }, aloe::loop_site("reclaim_bound/lender"));
    };
    // Alone (the borrower runs on its own core meanwhile): the time the computation takes
    // when nothing else runs on this CPU; this also lets the daemon's answer to the hello in.
    std::vector<i64> alone;
    for (int r = 0; r < 7; ++r) {
        const i64 t0 = mono_ns();
        compute();
        alone.push_back(mono_ns() - t0);
    }
    std::sort(alone.begin(), alone.end());
    int cpu = first_cpu();
    MPI_Send(&cpu, 1, MPI_INT, 1, tag_go, MPI_COMM_WORLD);

    struct cycle {
        i64 enter, ret, done;
    };
    std::vector<cycle> cycles;
    const int total = o.warmup + o.cycles;
    cycles.reserve(static_cast<std::size_t>(total));
    for (int i = 0; i < total; ++i) {
        int got = -1;
        const i64 enter = mono_ns();
        MPI_Recv(&got, 1, MPI_INT, 1, tag_cycle, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        const i64 ret = mono_ns();
        compute();
        cycles.push_back({enter, ret, mono_ns()});
        if (got != i) std::fprintf(stderr, "reclaim_bound: rank 0 got cycle %d, expected %d\n", got, i);
    }
    std::ofstream out(o.prefix + ".rank0.txt");
    out << "rank 0 cpus " << affinity_text() << " unit_ns " << unit_ns << " lender_iters " << iters << '\n';
    out << "lender_alone_ns " << alone[alone.size() / 2] << ' ' << alone.front() << ' ' << alone.back() << '\n';
    for (std::size_t i = 0; i < cycles.size(); ++i)
        out << "lender_cycle " << i << ' ' << cycles[i].enter << ' ' << cycles[i].ret << ' ' << cycles[i].done << '\n';
    write_events(out);
    out << "sink " << sink.load() << '\n';
    return 0;
}

// ---- rank 1: the borrower ----

struct chunk_record {
    i64 start, end, cpu_ns;
    int cpu;
    int tid;
};

struct participant_log {
    std::vector<chunk_record> chunks;
    std::size_t n = 0, dropped = 0;
};

long futex(std::atomic<int>& word, int op, int value, const timespec* timeout) noexcept {
    return syscall(SYS_futex, reinterpret_cast<int*>(&word), op | FUTEX_PRIVATE_FLAG, value, timeout, nullptr, 0);
}

int borrower(const options& o, double unit_ns) {
    aloe::team& team = aloe::team::global();
    const aloe::schedule dyn = aloe::schedule::dynamic(1);
    const auto units = static_cast<std::uint64_t>(std::max(1.0, o.chunk_us * 1e3 / unit_ns));
    // A loop long enough for the longest cycle: no guest within the timeout, then the hold
    // and the time after the send, with both participants running.
    const double cycle_max_ms = o.guest_timeout_ms + o.hold_max_us / 1e3 + o.after_ms + 50;
    const auto iters = static_cast<std::int64_t>(2 * cycle_max_ms * 1e3 / o.chunk_us) + 16;
    const std::size_t capacity = static_cast<std::size_t>(cycle_max_ms * 1e3 / o.chunk_us) + 64;
    constexpr int most_participants = 8;
    std::array<participant_log, most_participants> logs;
    for (auto& l : logs) l.chunks.resize(capacity);

    std::atomic<bool> stop{false};
    std::atomic<int> guest_seen{0};
    std::atomic<i64> guest_first{0};
    std::atomic<int> lender_cpu{-1};
    std::atomic<std::uint64_t> sink{0};
    thread_local int my_tid = 0;

    auto body = [&](aloe::subrange r, int p) {
        if (stop.load(std::memory_order_relaxed)) return;
        if (my_tid == 0) my_tid = static_cast<int>(gettid());
        const i64 t0 = mono_ns();
        const int cpu = sched_getcpu();
        if (p != 0 && cpu == lender_cpu.load(std::memory_order_relaxed) &&
            guest_seen.load(std::memory_order_relaxed) == 0) {
            guest_first.store(t0, std::memory_order_relaxed);
            guest_seen.store(1, std::memory_order_release);
            futex(guest_seen, FUTEX_WAKE, 1, nullptr);
        }
        sink.fetch_add(spin(units * r.size()), std::memory_order_relaxed);
        const i64 t1 = mono_ns();
        if (p < 0 || p >= most_participants) return;
        participant_log& l = logs[static_cast<std::size_t>(p)];
        if (l.n < capacity) l.chunks[l.n++] = {t0, t1, p != 0 && o.guest_cpu ? thread_cpu_ns() : 0, cpu, my_tid};
        else ++l.dropped;
    };
    auto run_loop = [&](std::int64_t n) {
        aloe::parallel_for(team, 0, n, dyn, body, aloe::loop_site("reclaim_bound/borrower"));
    };

    // Chunks alone (no guest: nothing is lent yet), which also lets the daemon's answer to
    // the hello in (a rank asks for cores only once its client was answered).
    const auto warm_iters = static_cast<std::int64_t>(50e3 / o.chunk_us) + 1;
    for (auto& l : logs) l.n = 0;
    run_loop(warm_iters);
    std::vector<i64> alone;
    for (std::size_t i = 0; i < logs[0].n; ++i) alone.push_back(logs[0].chunks[i].end - logs[0].chunks[i].start);
    std::sort(alone.begin(), alone.end());

    // The go: after this polite wait the rank asks for cores (the reactive rule, and the
    // predictive one for a path with no prediction yet), a standing request.
    int cpu0 = -1;
    MPI_Recv(&cpu0, 1, MPI_INT, 0, tag_go, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    lender_cpu.store(cpu0);

    const int total = o.warmup + o.cycles;
    struct helper_record {
        i64 guest = 0, hold = 0, send = 0, sent = 0, stop = 0;
        bool timed_out = false;
    };
    std::vector<helper_record> helper_log(static_cast<std::size_t>(total));
    std::atomic<int> cycle_go{0}, cycle_done{0};
    std::thread helper([&] {
        std::mt19937_64 rng(o.seed);
        std::uniform_real_distribution<double> hold_us(o.hold_min_us, o.hold_max_us);
        for (int i = 0; i < total; ++i) {
            while (cycle_go.load(std::memory_order_acquire) <= i) futex(cycle_go, FUTEX_WAIT, i, nullptr);
            helper_record& h = helper_log[static_cast<std::size_t>(i)];
            const i64 began = mono_ns();
            const i64 give_up = began + static_cast<i64>(o.guest_timeout_ms * 1e6);
            while (guest_seen.load(std::memory_order_acquire) == 0) {
                const i64 left = give_up - mono_ns();
                if (left <= 0) {
                    h.timed_out = true;
                    break;
                }
                const timespec ts{static_cast<time_t>(left / 1'000'000'000), static_cast<long>(left % 1'000'000'000)};
                futex(guest_seen, FUTEX_WAIT, 0, &ts);
            }
            h.hold = static_cast<i64>(hold_us(rng) * 1e3);
            h.guest = h.timed_out ? 0 : guest_first.load(std::memory_order_relaxed);
            sleep_until((h.timed_out ? mono_ns() : h.guest) + h.hold);
            h.send = mono_ns();
            MPI_Send(&i, 1, MPI_INT, 0, tag_cycle, MPI_COMM_WORLD);
            h.sent = mono_ns();
            sleep_until(h.send + static_cast<i64>(o.after_ms * 1e6));
            h.stop = mono_ns();
            stop.store(true, std::memory_order_release);
            cycle_done.store(i + 1, std::memory_order_release);
        }
    });

    struct loop_record {
        i64 start, end;
        i64 guest_first_start = -1, guest_last_start = -1, guest_last_end = -1, guest_last_cpu_ns = -1;
        i64 guest_cpu_total_ns = -1;
        int guest_tid = 0, guest_chunks = 0, guest_chunks_elsewhere = 0, own_chunks = 0, own_on_lender = 0;
        i64 guest_chunk_median_ns = -1, dropped = 0;
        // The guest's last 3 chunks on the lender's CPU, the last first: start, end, its CPU time at the end
        // (with --guest-cpu, else 0).
        std::array<i64, 9> guest_tail{-1, -1, -1, -1, -1, -1, -1, -1, -1};
    };
    std::vector<loop_record> loops;
    loops.reserve(static_cast<std::size_t>(total));
    for (int i = 0; i < total; ++i) {
        if (o.idle_ms > 0) sleep_until(mono_ns() + static_cast<i64>(o.idle_ms * 1e6));
        for (auto& l : logs) l.n = l.dropped = 0;
        stop.store(false);
        guest_seen.store(0);
        loop_record rec{};
        rec.start = mono_ns();
        cycle_go.store(i + 1, std::memory_order_release);
        futex(cycle_go, FUTEX_WAKE, 1, nullptr);
        run_loop(iters);
        rec.end = mono_ns();
        while (cycle_done.load(std::memory_order_acquire) <= i) std::this_thread::yield();
        // What ran where.
        std::vector<i64> durations;
        for (int p = 0; p < most_participants; ++p) {
            const participant_log& l = logs[static_cast<std::size_t>(p)];
            rec.dropped += static_cast<i64>(l.dropped);
            for (std::size_t k = 0; k < l.n; ++k) {
                const chunk_record& c = l.chunks[k];
                if (p == 0) {
                    ++rec.own_chunks;
                    if (c.cpu == cpu0) ++rec.own_on_lender;
                    continue;
                }
                if (c.cpu != cpu0) {
                    ++rec.guest_chunks_elsewhere;
                    continue;
                }
                ++rec.guest_chunks;
                if (rec.guest_first_start < 0 || c.start < rec.guest_first_start) rec.guest_first_start = c.start;
                if (c.end > rec.guest_last_end) {
                    rec.guest_last_end = c.end;
                    rec.guest_last_start = c.start;
                    rec.guest_last_cpu_ns = c.cpu_ns;
                    rec.guest_tid = c.tid;
                }
                if (c.end < helper_log[static_cast<std::size_t>(i)].send) durations.push_back(c.end - c.start);
            }
        }
        if (!durations.empty()) {
            std::nth_element(durations.begin(), durations.begin() + static_cast<std::ptrdiff_t>(durations.size() / 2),
                             durations.end());
            rec.guest_chunk_median_ns = durations[durations.size() / 2];
        }
        // The guest's last chunks, in order of their end.
        std::vector<chunk_record> guest;
        for (int p = 1; p < most_participants; ++p) {
            const participant_log& l = logs[static_cast<std::size_t>(p)];
            for (std::size_t k = 0; k < l.n; ++k)
                if (l.chunks[k].cpu == cpu0) guest.push_back(l.chunks[k]);
        }
        std::sort(guest.begin(), guest.end(), [](const chunk_record& x, const chunk_record& y) { return x.end < y.end; });
        for (std::size_t k = 0; k < 3 && k < guest.size(); ++k) {
            const chunk_record& g = guest[guest.size() - 1 - k];
            rec.guest_tail[3 * k] = g.start;
            rec.guest_tail[3 * k + 1] = g.end;
            rec.guest_tail[3 * k + 2] = g.cpu_ns;
        }
        // The guest thread's CPU time now (it has slept since it left the loop): what it used
        // after its last chunk (its wait's spin and yield phases) is the difference.
        if (rec.guest_tid > 0 && o.guest_cpu) {
            std::ifstream st("/proc/self/task/" + std::to_string(rec.guest_tid) + "/schedstat");
            i64 run = -1;
            if (st >> run) rec.guest_cpu_total_ns = run;
        }
        loops.push_back(rec);
    }
    helper.join();

    std::ofstream out(o.prefix + ".rank1.txt");
    out << "rank 1 cpus " << affinity_text() << " unit_ns " << unit_ns << " chunk_units " << units << " iters "
        << iters << " lender_cpu " << cpu0 << '\n';
    if (!alone.empty())
        out << "chunk_alone_ns " << alone[alone.size() / 2] << ' ' << alone.front() << ' ' << alone.back() << ' '
            << alone.size() << '\n';
    for (std::size_t i = 0; i < loops.size(); ++i) {
        const loop_record& r = loops[i];
        const helper_record& h = helper_log[i];
        out << "borrower_cycle " << i << ' ' << r.start << ' ' << r.end << ' ' << h.guest << ' ' << h.hold << ' '
            << h.send << ' ' << h.sent << ' ' << h.stop << ' ' << (h.timed_out ? 1 : 0) << ' ' << r.guest_first_start
            << ' ' << r.guest_last_start << ' ' << r.guest_last_end << ' ' << r.guest_last_cpu_ns << ' '
            << r.guest_cpu_total_ns << ' ' << r.guest_tid << ' ' << r.guest_chunks << ' ' << r.guest_chunks_elsewhere
            << ' ' << r.own_chunks << ' ' << r.own_on_lender << ' ' << r.guest_chunk_median_ns << ' ' << r.dropped;
        for (i64 t : r.guest_tail) out << ' ' << t;
        out << '\n';
    }
    write_events(out);
    out << "sink " << sink.load() << '\n';
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const options o = parse(argc, argv);
    if (size != 2 || provided < MPI_THREAD_SERIALIZED) {
        if (rank == 0)
            std::fprintf(stderr, "reclaim_bound: needs 2 ranks (got %d) and MPI_THREAD_SERIALIZED (got %d)\n", size,
                         provided);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const double unit_ns = ns_per_unit();
    const int rc = rank == 0 ? lender(o, unit_ns) : borrower(o, unit_ns);
    MPI_Finalize();
    return rc;
}

#include "omp/guest_seats.hpp"

#include "runtime/borrowed_cores.hpp"

#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <mutex>

namespace aloe::omp {
namespace {

struct seat {
    pid_t tid = 0;  // 0: free
    int cpu = -1;   // the borrowed CPU it is pinned to; -1: on its own mask
    bool in_body = false;
    cpu_set_t home{};
};

// Guests are few (at most the node's CPUs less the rank's own); a thread that finds no
// free seat runs its guest share where it is (slower, never wrong).
struct seat_table {
    std::mutex lock;
    std::array<seat, 256> seats{};
    std::atomic<int> away{0};  // seats on a borrowed CPU: none, and a polite wait takes no lock
};

seat_table& table() noexcept {
    static seat_table* const t = new seat_table;  // never destroyed: pool threads outlive statics
    return *t;
}

constinit thread_local int my_seat __attribute__((tls_model("initial-exec"))) = -1;
// Whether this thread may sit on a borrowed CPU. Only the thread moves itself there (others
// only send it home), so `false` is exact and a region's own thread that is home takes no lock.
constinit thread_local bool maybe_away __attribute__((tls_model("initial-exec"))) = false;

// Thread `s.tid` (the caller, or one of this process's checked with tgkill) back on its mask.
void go_home(seat_table& t, seat& s, pid_t tid) noexcept {
    if (s.cpu < 0) return;
    sched_setaffinity(tid, sizeof s.home, &s.home);
    s.cpu = -1;
    t.away.fetch_sub(1, std::memory_order_relaxed);
}

pid_t my_tid() noexcept { return static_cast<pid_t>(syscall(SYS_gettid)); }

// A thread id is only reused after the thread is gone, and may then be another process's:
// whether `tid` is still a thread of this process.
bool ours(pid_t tid) noexcept { return syscall(SYS_tgkill, getpid(), tid, 0) == 0; }

void free_seats_of_exited_threads(seat_table& t) noexcept {
    for (seat& s : t.seats) {
        if (s.tid == 0 || ours(s.tid)) continue;
        if (s.cpu >= 0) t.away.fetch_sub(1, std::memory_order_relaxed);
        s = seat{};
    }
}

}  // namespace

bool take_guest_seat(int thread, int own_threads, bool* moved) noexcept {
    const bool guest = own_threads > 0 && thread >= own_threads;
    if (!guest && !maybe_away) [[likely]] return false;
    seat_table& t = table();
    std::lock_guard lock(t.lock);
    if (my_seat < 0) {
        if (std::none_of(t.seats.begin(), t.seats.end(), [](const seat& s) { return s.tid == 0; })) free_seats_of_exited_threads(t);
        for (std::size_t i = 0; i < t.seats.size(); ++i) {
            if (t.seats[i].tid != 0) continue;
            seat& s = t.seats[i];
            if (sched_getaffinity(0, sizeof s.home, &s.home) != 0) return false;
            s.tid = my_tid();
            s.cpu = -1;
            my_seat = static_cast<int>(i);
            break;
        }
        if (my_seat < 0) return false;
    }
    seat& s = t.seats[static_cast<std::size_t>(my_seat)];
    if (!guest) {
        if (!s.in_body) go_home(t, s, 0);  // inside a guest's body (a nested region) it stays
        maybe_away = s.cpu >= 0;
        runtime::set_on_lent_cpu(maybe_away);
        return false;
    }
    if (s.in_body) return false;  // a nested region inside a guest's body
    const int cpu = runtime::borrowed_cpu_for_spare(thread - own_threads);
    if (cpu != s.cpu) {
        if (cpu < 0 || cpu >= CPU_SETSIZE) {
            go_home(t, s, 0);  // no CPU named for that core: the rank's own CPUs
        } else {
            cpu_set_t one;
            CPU_ZERO(&one);
            CPU_SET(cpu, &one);
            // A CPU the cgroup refuses leaves the thread where it was (slower, never wrong).
            if (sched_setaffinity(0, sizeof one, &one) == 0) {
                if (s.cpu < 0) t.away.fetch_add(1, std::memory_order_relaxed);
                s.cpu = cpu;
                if (moved != nullptr) *moved = true;
            }
        }
    }
    maybe_away = s.cpu >= 0;
    runtime::set_on_lent_cpu(maybe_away);
    s.in_body = true;
    return true;
}

void leave_guest_seat() noexcept {
    if (my_seat < 0) return;
    seat_table& t = table();
    std::lock_guard lock(t.lock);
    seat& s = t.seats[static_cast<std::size_t>(my_seat)];
    s.in_body = false;
    if (s.cpu >= 0 && !runtime::cpu_borrowed_now(s.cpu)) go_home(t, s, 0);
    maybe_away = s.cpu >= 0;
    runtime::set_on_lent_cpu(maybe_away);
}

void send_guests_home(bool everyone) noexcept {
    seat_table& t = table();
    if (t.away.load(std::memory_order_relaxed) == 0) return;
    std::lock_guard lock(t.lock);
    for (seat& s : t.seats) {
        // A thread inside a region's body too: it finishes its part on the rank's own CPUs
        // instead of waiting for the returned lender's time slice there.
        if (s.tid == 0 || s.cpu < 0 || (!everyone && runtime::cpu_borrowed_now(s.cpu))) continue;
        if (!ours(s.tid)) {
            t.away.fetch_sub(1, std::memory_order_relaxed);
            s = seat{};  // that thread has exited: its seat is free
            continue;
        }
        go_home(t, s, s.tid);
    }
}

void lock_guest_seats_for_fork() noexcept { table().lock.lock(); }

void unlock_guest_seats_after_fork(bool child) noexcept {
    seat_table& t = table();
    if (child) {
        // Only the forking thread lives on in the child, on the mask it had.
        for (seat& s : t.seats) s = seat{};
        t.away.store(0, std::memory_order_relaxed);
        my_seat = -1;
        maybe_away = false;
    }
    t.lock.unlock();
}

}  // namespace aloe::omp

#include "mpi/idle_core_watch.hpp"

#include "runtime/futex.hpp"
#include "runtime/report.hpp"
#include "runtime/signals_blocked.hpp"

#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <chrono>
#include <cstring>
#include <string>

namespace aloe::mpi {
namespace {

// A sched_yield that finds nothing else to run returns in about 1 us on the 2-vCPU VM; one
// that let a guest run returns after the guest's next yield, 100 us later.
constexpr std::chrono::microseconds idle_confirm{10};

idle_core_watch* the_process_watch = nullptr;

void say_no_sentinel(int error) noexcept {
    try {
        runtime::report_once({runtime::report_level::info, runtime::report_category::mpi, "I605",
                              std::string("libaloe-mpi: no SCHED_IDLE sentinel for polite waits (") + std::strerror(error) + ")",
                              "a lender sleeps its whole nap between tests, even once its lent core is idle"});
    } catch (...) {
    }
}

void sleep_for(double seconds) noexcept {
    const long ns = static_cast<long>(seconds * 1e9);
    const timespec ts{ns / 1'000'000'000L, ns % 1'000'000'000L};
    nanosleep(&ts, nullptr);
}

}  // namespace

void idle_core_watch_fork_child() noexcept {
    if (the_process_watch != nullptr) the_process_watch->after_fork_in_child();
}

idle_core_watch& idle_core_watch::process() noexcept {
    static idle_core_watch* const w = [] {
        auto* made = new idle_core_watch(true);
        the_process_watch = made;
        // The sentinel does not survive fork(): a child makes its own at its first nap.
        ::pthread_atfork(nullptr, nullptr, idle_core_watch_fork_child);
        return made;
    }();
    return *w;
}

void idle_core_watch::after_fork_in_child() noexcept {
    state_.store(idle, std::memory_order_relaxed);
    started_.store(not_started, std::memory_order_relaxed);
    thread_ = pthread_t{};
    have_thread_ = false;
}

void* idle_core_watch::sentinel_main(void* self) noexcept {
    auto& w = *static_cast<idle_core_watch*>(self);
    // glibc's thread attributes take no SCHED_IDLE: the thread lowers itself before it
    // watches (a nap before that sleeps it whole).
    if (w.sentinel_idle_) {
        const sched_param none{};
        if (const int rc = pthread_setschedparam(pthread_self(), SCHED_IDLE, &none); rc != 0) {
            w.started_.store(failed, std::memory_order_release);
            say_no_sentinel(rc);
            // Asleep until stop() (tests): a normal-priority sentinel would take a guest's core.
            for (std::uint32_t s; (s = w.state_.load(std::memory_order_acquire)) != quit;) runtime::futex_wait(w.state_, s);
            return nullptr;
        }
    }
    w.started_.store(started, std::memory_order_release);
    for (;;) {
        std::uint32_t s = w.state_.load(std::memory_order_acquire);
        if (s == quit) return nullptr;
        if (s != armed) {
            runtime::futex_wait(w.state_, s);
            continue;
        }
        // Running while armed: under SCHED_IDLE, nothing else on this CPU wanted it, or a
        // thread there yielded. A guest computing on the lent CPU yields each 100 us
        // (runtime::yield_to_lender), and the scheduler (EEVDF, Linux 6.18) then picks the
        // sentinel as readily as anything: each of those yields woke the lender for an MPI
        // test, 16-20 us of the guest's 100 (perf sched, jacobi3d-mpi 1:3). So the sentinel
        // yields once itself: back within `idle_confirm`, nothing else wanted the CPU.
        // (steady_clock, not the runtime's calibrated ticks: a fork while this thread
        // calibrated would leave the child's copy of the calibration locked.)
        const auto before = std::chrono::steady_clock::now();
        sched_yield();
        if (std::chrono::steady_clock::now() - before > idle_confirm) continue;
        if (w.state_.compare_exchange_strong(s, woken, std::memory_order_acq_rel)) runtime::futex_wake(w.state_, 1);
    }
}

bool idle_core_watch::start() noexcept {
    std::uint32_t expected = not_started;
    if (!started_.compare_exchange_strong(expected, starting, std::memory_order_acq_rel)) return expected == started;
    pthread_attr_t attr;
    int rc = pthread_attr_init(&attr);
    if (rc == 0) {
        // Small: it only loops on a futex.
        rc = pthread_attr_setstacksize(&attr, 128 * 1024);
        if (rc == 0) {
            // It inherits the caller's CPUs (those of the thread that lends).
            pthread_t t;
            {
                const runtime::signals_blocked on_the_sentinel;
                rc = pthread_create(&t, &attr, &idle_core_watch::sentinel_main, this);
            }
            if (rc == 0) {
                thread_ = t;
                have_thread_ = true;
            }
        }
        pthread_attr_destroy(&attr);
    }
    if (rc != 0) {
        started_.store(failed, std::memory_order_release);
        say_no_sentinel(rc);
    }
    return false;  // watching() once the sentinel has lowered its priority
}

bool idle_core_watch::nap(double seconds) noexcept {
    if (!watching() && !start()) {
        sleep_for(seconds);
        return false;
    }
    state_.store(armed, std::memory_order_release);
    runtime::futex_wake(state_, 1);  // the sentinel, asleep since the last nap
    // One wait: a spurious or early return ends the nap as a timeout would (the caller tests
    // again either way). Early: the sentinel's word, before the time was up.
    const bool timed_out = !runtime::futex_wait_for(state_, armed, static_cast<long>(seconds * 1e9));
    const bool early = state_.exchange(idle, std::memory_order_acq_rel) == woken && !timed_out;
    if (early) early_wakes_.fetch_add(1, std::memory_order_relaxed);
    return early;
}

int idle_core_watch::sentinel_policy() const noexcept {
    int policy = -1;
    sched_param p{};
    if (!have_thread_ || pthread_getschedparam(thread_, &policy, &p) != 0) return -1;
    return policy;
}

void idle_core_watch::stop() noexcept {
    if (!have_thread_) return;
    state_.store(quit, std::memory_order_release);
    runtime::futex_wake_all(state_);
    pthread_join(thread_, nullptr);
    have_thread_ = false;
    started_.store(not_started, std::memory_order_release);
    state_.store(idle, std::memory_order_release);
}

}  // namespace aloe::mpi

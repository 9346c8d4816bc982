// How a blocking MPI call waits while its rank's cores are lent (issue 19, item 4): the
// call becomes its nonblocking form and a loop of tests (the library's own MPI_Test*, which
// also drive its progress engine), spinning as the library would while nothing is lent, and
// once the cores are lent giving the CPU away between tests: sched_yield for the first
// 20 us, then sleeps that double from 20 us up to 100 us, ended early once the core is idle
// (idle_core_watch.hpp). A borrower's thread on that core then runs nearly undisturbed (DLB's lender, inside a busy-polling MPI, keeps spinning on
// the core it lent: 1.4-5.6x slower than no lending in issue 19's measurements), and the
// call returns at most about one sleep after its completion.
//
// MPI-free (the test is a callable), so the tests drive it with fake completions.
#pragma once

#include "runtime/clock.hpp"

#include <sched.h>
#include <time.h>

#include <algorithm>
#include <optional>

namespace aloe::mpi {

/// What the wait does besides testing: lend the rank's cores (returns whether it did), and
/// how it sleeps between tests once they are lent (nullptr: nanosleep; libaloe-mpi's ends
/// early once the lent core is idle, idle_core_watch.hpp).
struct lend_link {
    bool (*lend)(void* ctx) noexcept = nullptr;
    void* ctx = nullptr;
    void (*nap)(double seconds) noexcept = nullptr;
};

struct wait_outcome {
    int rc = 0;          ///< the last test's return code
    bool lent = false;   ///< the cores were lent during the wait (the caller takes them back)
    bool lent_at_entry = false;  ///< ... at its entry, its path's waits being long (not after waiting)
    double waited_s = 0;
};

/// How long a lent wait sleeps before its next test: 20, 40, 80, then 100 us (the longer the
/// wait has lasted, the less a late wake-up costs), longer while a predicted slack has much
/// left (a quarter of what is left, up to 0.5 ms: each test takes the lent core from its
/// guest, which yields to it between chunks, runtime/borrowed_cores.hpp).
inline double polite_nap_s(double since_lent_s, std::optional<double> slack_left_s) noexcept {
    const double nap = std::min(100e-6, 20e-6 * static_cast<double>(1u << std::min(3, static_cast<int>(since_lent_s / 100e-6))));
    if (!slack_left_s) return nap;
    return std::clamp(*slack_left_s / 4, nap, 500e-6);
}

inline void pause_politely(double since_lent_s, void (*nap_for)(double seconds) noexcept = nullptr,
                           std::optional<double> slack_left_s = std::nullopt) noexcept {
    constexpr double yield_for_s = 20e-6;
    if (since_lent_s < yield_for_s) {
        sched_yield();
        return;
    }
    const double nap = polite_nap_s(since_lent_s, slack_left_s);
    if (nap_for != nullptr) {
        nap_for(nap);
        return;
    }
    const timespec ts{0, static_cast<long>(nap * 1e9)};
    nanosleep(&ts, nullptr);
}

/// Calls test(done) until it sets `done` or returns non-zero; lends once it has waited
/// `lend_after_s` (0: before the first test; lending_rule.hpp: wait_before_lending).
/// `predicted_s`: the path's predicted slack, which lengthens the naps while much is left.
template <class Test>
wait_outcome wait_politely(Test&& test, double lend_after_s, std::optional<double> predicted_s,
                           const lend_link& link) noexcept {
    wait_outcome out;
    const runtime::ticks start = runtime::now_ticks();
    runtime::ticks lent_at = 0;
    bool tried = false;  // a lend the daemon's client refused is not tried again in this wait
    if (lend_after_s <= 0) {
        tried = true;
        out.lent = link.lend(link.ctx);
        out.lent_at_entry = out.lent;
        lent_at = start;
    }
    for (;;) {
        bool done = false;
        out.rc = test(done);
        if (done || out.rc != 0) break;
        const runtime::ticks now = runtime::now_ticks();
        if (!out.lent) {
            if (!tried && runtime::ticks_to_seconds(now - start) >= lend_after_s) {
                tried = true;
                out.lent = link.lend(link.ctx);
                lent_at = now;
            }
            continue;  // spin, as the library's own wait would
        }
        const std::optional<double> left =
            predicted_s ? std::optional<double>(*predicted_s - runtime::ticks_to_seconds(now - start)) : std::nullopt;
        pause_politely(runtime::ticks_to_seconds(now - lent_at), link.nap, left);
    }
    out.waited_s = runtime::ticks_to_seconds(runtime::now_ticks() - start);
    return out;
}

}  // namespace aloe::mpi

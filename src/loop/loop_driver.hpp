// The one loop driver: every way aloe runs a loop (parallel_for on the team, loop_handle and
// the GOMP interposer on threads aloe did not start) steps each participant through its
// schedule here: the static part, then the dynamic part chunk by chunk.
//
// A participant's state (its schedule cursor, where it is, its tallies) sits on its own
// cache line and is written only by the thread that runs that participant; the tallies are
// folded into the participant's worker_record once, when it runs out (close), so the
// per-chunk path writes nothing another thread reads. Two ways to drive:
//   run_participant<S>  the team's own loops: the body is called here, two tight loops, no
//                       dispatch per chunk (instantiated per concrete schedule).
//   step<S>             threads that ask for one chunk at a time (loop_handle, OpenMP):
//                       one switch on the participant's stage per chunk.
// Before each dynamic chunk a participant asks whether the node's allocation still counts it
// (participant_limit.hpp): one that must leave stops there and is done.
#pragma once

#include "loop/chunk.hpp"
#include "loop/participant_limit.hpp"
#include "loop/schedule.hpp"

#include <atomic>
#include <cstdint>

namespace aloe::loop {

struct alignas(runtime::cache_line) participant {
    enum class stage : std::uint8_t { not_started, static_part, dynamic_part, done };

    worker_cursor cursor;
    stage at = stage::not_started;
    bool closed = false;  ///< its account is folded (shared_loop: the thread called finish)
    /// Its record as it fills (all but `end`). Claiming directly (claim_direct) counts chunks
    /// only: the dynamic iterations are then chunks · direct_chunk − direct_short (how many
    /// the loop's final chunk lacked, if this participant took it), worked out when read.
    worker_record account;
    std::uint64_t direct_chunk = 0;
    std::uint64_t direct_short = 0;

    std::uint64_t dynamic_iterations() const noexcept {
        return account.dynamic_iterations + account.chunks * direct_chunk - direct_short;
    }
    std::uint64_t iterations() const noexcept { return account.static_iterations + dynamic_iterations(); }

    /// The participant ran out at `end`: its account, once, into `rec`.
    void close(runtime::ticks end, worker_record& rec) const noexcept {
        rec = account;
        rec.end = end;
        rec.dynamic_iterations = dynamic_iterations();
    }
};

/// The participant's next chunk of schedule `s`; false once it has none (then at == done).
template <class S>
inline bool step(S& s, participant& p, chunk& c) noexcept {
    using stage = participant::stage;
    switch (p.at) {
        case stage::dynamic_part:
            if (must_leave(p.cursor.id)) [[unlikely]] {  // the node's allocation shrank mid-loop
                p.at = stage::done;
                return false;
            }
            if (const take t = s.next_dynamic(p.cursor, c); t != take::none) [[likely]] {
                p.account.dynamic_iterations += c.end - c.begin;
                ++p.account.chunks;
                p.account.steals += t == take::stolen ? 1 : 0;
                return true;
            }
            p.at = stage::done;
            return false;
        case stage::not_started:
            p.account.start = runtime::now_ticks();
            p.at = stage::static_part;
            [[fallthrough]];
        case stage::static_part:
            if (s.next_static(p.cursor, c)) {
                p.account.static_iterations += c.end - c.begin;
                return true;
            }
            p.account.static_end = runtime::now_ticks();
            p.at = stage::dynamic_part;
            return step(s, p, c);
        case stage::done: return false;
    }
    return false;
}

/// A schedule whose every chunk comes from one shared counter with no wrap-around guard
/// (dynamic): a thread that asks chunk by chunk claims from it directly, with no dispatch.
struct direct_counter {
    std::atomic<std::uint64_t>* next = nullptr;  ///< nullptr: not such a schedule
    std::uint64_t chunk = 0;
    std::uint64_t count = 0;
};

/// step() for a direct_counter schedule whose participant is in its dynamic part already:
/// the chunk [begin, end) as two values (they stay in registers on the caller's hot path).
/// Per chunk: one fetch_add and one increment on the participant's own line.
inline bool claim_direct(const direct_counter& d, participant& p, std::uint64_t& begin, std::uint64_t& end) noexcept {
    // Read before the atomic, which the compiler may not move plain loads across: kept in
    // registers, not read again after it.
    const std::uint64_t chunk = d.chunk, count = d.count;
    if (must_leave(p.cursor.id)) [[unlikely]] return false;  // the node's allocation shrank mid-loop
    const std::uint64_t b = d.next->fetch_add(chunk, std::memory_order_relaxed);
    if (b >= count) return false;
    begin = b;
    // No wrap-around: a schedule whose counter could wrap offers no direct claim.
    std::uint64_t e = b + chunk;
    if (e > count) [[unlikely]] {
        p.direct_short = e - count;
        e = count;
    }
    end = e;
    ++p.account.chunks;
    return true;
}

inline bool step_direct(const direct_counter& d, participant& p, chunk& c) noexcept {
    return claim_direct(d, p, c.begin, c.end);
}

/// step() with the schedule's type erased: one indirect call per chunk.
template <class S>
bool step_erased(void* s, participant& p, chunk& c) noexcept {
    return step(*static_cast<S*>(s), p, c);
}

/// Runs participant `p` of schedule `s` to the end, calling fn(ctx, begin, end, id) per chunk.
template <class S, class Body>
inline void run_participant(S& s, participant& p, Body&& body) noexcept {
    chunk c;
    p.account.start = runtime::now_ticks();
    std::uint64_t static_iterations = 0;
    while (s.next_static(p.cursor, c)) {
        body(c);
        static_iterations += c.end - c.begin;
    }
    p.account.static_end = runtime::now_ticks();
    std::uint64_t dynamic_iterations = 0, chunks = 0, steals = 0;
    const int id = p.cursor.id;  // in a register: the body may write memory
    for (take t; !must_leave(id) && (t = s.next_dynamic(p.cursor, c)) != take::none;) {
        body(c);
        dynamic_iterations += c.end - c.begin;
        ++chunks;
        steals += t == take::stolen ? 1 : 0;
    }
    p.account.static_iterations = static_iterations;
    p.account.dynamic_iterations = dynamic_iterations;
    p.account.chunks = chunks;
    p.account.steals = steals;
    p.at = participant::stage::done;
}

/// Schedules whose dynamic part is one pool any participant takes from without a cursor of
/// its own, and whose static part a cursor marked `static_done` skips: a participant that
/// was not there at the fork (a guest on a borrowed core) may join them mid-way and runs
/// run_participant like the others.
template <class S>
inline constexpr bool welcomes_guests = [] {
    if constexpr (requires { S::guests_welcome; }) return S::guests_welcome;
    else return false;
}();

}  // namespace aloe::loop

// How many participants of a loop that is already running may go on taking chunks: the node
// daemon's allocation applied inside a loop, not only at the next one (issue 18; SCAF could
// only wait for the region to end, and needed timeouts for NPB EP-like programs).
//
// The daemon's client (coord/daemon_client) sets the limit when an allocation arrives and
// lifts it when the daemon goes away. Every participant checks it before each dynamic chunk
// (loop_driver.hpp): one with id >= limit stops there, after the chunk it ran, and its
// thread goes back to wait (the team's, or OpenMP's barrier) and frees its core. Nothing is
// lost: what it would have taken stays in the shared counter or in its queue, from which the
// others take or steal (every schedule's dynamic part can be drained by any participant);
// its static part, owned by it alone, it finishes first. Participant 0 (the loop's caller)
// never leaves, so a loop always ends; it calls the refresh hook instead, which lets the
// client read the daemon's socket during a long loop (a clock read; a drain each 10 ms; nothing
// while the client's listener thread reads the answers as they come, as a lending rank's does).
//
// Cost with no daemon: a relaxed load of one read-mostly word per dynamic chunk (and of the
// hook's pointer on participant 0).
//
// The other direction (issue 19): cores borrowed from other ranks of the job while a loop
// runs. A team loop whose schedule lets a newcomer take from its dynamic part (one shared
// pool: dynamic, guided, hybrid, weighted) opens a door on its caller's thread; after each
// refresh, participant 0 knocks (a thread-local load and a compare while a hook is set),
// and the door adds spare workers as guests up to the new limit (runtime/team.hpp
// join_running). A guest has no static part; it takes dynamic chunks until none is left or
// the limit drops below it, like any participant.
#pragma once

#include "runtime/borrowed_cores.hpp"

#include <atomic>
#include <climits>

namespace aloe::loop {

/// A running loop that participants may join (loop_runner.cpp): `open` adds the guests the
/// limit and the borrowed cores allow now. Called only by the loop's participant 0.
struct loop_door {
    void (*open)(loop_door* self) noexcept = nullptr;
    unsigned seen = 0;  ///< participant_limit_changes() when it was last opened
};

namespace participant_limit_detail {
extern thread_local loop_door* door;                        // the loop this thread runs as participant 0
extern constinit std::atomic<int> limit;                   // INT_MAX: none
extern constinit std::atomic<void (*)() noexcept> refresh;  // nullptr: none
extern constinit std::atomic<unsigned> changes;            // bumped by every set or lift
}  // namespace participant_limit_detail

/// From now on participants with id >= n of every running and later loop stop taking
/// dynamic chunks (n < 1 counts as 1: the caller always runs).
void limit_participants(int n) noexcept;
/// Lifts the limit (no daemon any more).
void lift_participant_limit() noexcept;
/// The limit now (INT_MAX: none).
int participant_limit() noexcept;
/// How many times the limit was set or lifted: a run that saw it move between its plan and
/// its end may have lost participants half-way, so its time says nothing about its thread
/// count (the node-share link does not report such a run).
inline unsigned participant_limit_changes() noexcept {
    return participant_limit_detail::changes.load(std::memory_order_relaxed);
}
/// The function participant 0 calls before each dynamic chunk while one is set (nullptr:
/// none). It must be cheap and must not wait.
void set_participant_limit_refresh(void (*fn)() noexcept) noexcept;

/// The door of the loop the calling thread runs as participant 0 (nullptr: none); returns
/// the previous one (loops nest: a body may run a loop of another team serially).
inline loop_door* set_loop_door(loop_door* d) noexcept {
    loop_door* was = participant_limit_detail::door;
    participant_limit_detail::door = d;
    return was;
}

/// Whether participant `id` must stop taking chunks now (participant 0 refreshes instead,
/// and lets guests in when the limit rose).
inline bool must_leave(int id) noexcept {
    if (id == 0) {
        if (void (*fn)() noexcept = participant_limit_detail::refresh.load(std::memory_order_relaxed)) {
            fn();
            if (loop_door* d = participant_limit_detail::door;
                d != nullptr && d->seen != participant_limit_changes()) [[unlikely]]
                d->open(d);
        }
        return false;
    }
    // A guest on a lent CPU lets the lender in between its chunks (runtime/borrowed_cores.hpp).
    if (runtime::on_lent_cpu()) [[unlikely]]
        runtime::yield_to_lender();
    return id >= participant_limit_detail::limit.load(std::memory_order_relaxed);
}

}  // namespace aloe::loop

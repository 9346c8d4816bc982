// Where the interposer's threads on borrowed cores sit (issue 19). A region past its own
// count puts a libgomp thread on each CPU another rank lent (omp/team_region.cpp); the thread
// stays on that CPU after the region, asleep in libgomp's pool, so the next region that has
// the same core borrowed finds it in place: one move per borrowed core instead of two per
// region (NAS BT-MZ runs some 40 regions a step; moving twice a region cost its borrowing
// rank 1-2 ms a step on the VM). A thread goes back to its own mask when a region starts
// with it among the own threads, when its seat ends on a core no longer borrowed, and,
// asleep, when the borrowed cores change (the daemon took the core back: the process's
// thread that hears it moves it, checking first that the thread is still this process's),
// and when the rank enters a blocking MPI call (libaloe-mpi's polite wait): a guest moves
// at most twice a step, and no thread of a waiting rank stays on another rank's CPU.
#pragma once

namespace aloe::omp {

/// Before a region's body on thread `thread` of a region whose own count is `own_threads`
/// (0: the region takes no borrowed cores): a guest goes to its borrowed CPU (or stays
/// there), an own thread that sat on one goes home. Returns whether the thread is a guest.
bool take_guest_seat(int thread, int own_threads) noexcept;

/// After the body of a guest: it stays unless its core is no longer borrowed.
void leave_guest_seat() noexcept;

/// Guests not in a region's body go home: all of them (`everyone`: the rank entered a blocking
/// MPI call), or those whose CPU is no longer borrowed (the borrowed cores changed). The
/// runtime's guests_home_hook.
void send_guests_home(bool everyone) noexcept;

/// fork(): the seats' lock held across it (fork_hooks.cpp); the child forgets the parent's threads.
void lock_guest_seats_for_fork() noexcept;
void unlock_guest_seats_after_fork(bool child) noexcept;

}  // namespace aloe::omp

// Where the interposer's threads on borrowed cores sit (issue 19). A region past its own
// count puts a libgomp thread on each CPU another rank lent (omp/team_region.cpp); the thread
// stays on that CPU after the region, asleep in libgomp's pool, so the next region that has
// the same core borrowed finds it in place: one move per borrowed core instead of two per
// region (NAS BT-MZ runs about 100 regions a step; moving twice a region cost its borrowing
// rank 1-2 ms a step on the VM). A thread goes back to its own mask when a region starts
// with it among the own threads, when its seat ends on a core no longer borrowed, and,
// asleep or inside a region's body, when the borrowed cores change (the daemon took the core
// back: the process's thread that hears it moves it, checking first that the thread is still
// this process's; a body goes on on the rank's own CPUs instead of waiting for the returned
// lender's time slice on the lent one),
// when the rank enters a blocking MPI call and its core is no longer borrowed, and at
// MPI_Finalize (libaloe-mpi): after the job no thread stays on another rank's CPU. (Sending
// every guest home at every blocking call moved each twice a step, and the region after the
// move is slow: the site's guest payoff, guest_payoff.hpp, then misjudged the guests.)
#pragma once

namespace aloe::omp {

/// Before a region's body on thread `thread` of a region whose own count is `own_threads`
/// (0: the region takes no borrowed cores): a guest goes to its borrowed CPU (or stays
/// there), an own thread that sat on one goes home. Returns whether the thread is a guest,
/// and in `moved` (when given) whether it had to move.
bool take_guest_seat(int thread, int own_threads, bool* moved = nullptr) noexcept;

/// After the body of a guest: it stays unless its core is no longer borrowed.
void leave_guest_seat() noexcept;

/// Guests go home, in a region's body or not: all of them (`everyone`: MPI_Finalize), or
/// those whose CPU is no longer borrowed (the borrowed cores changed, or the rank entered a
/// blocking MPI call). The runtime's guests_home_hook.
void send_guests_home(bool everyone) noexcept;

/// fork(): the seats' lock held across it (fork_hooks.cpp); the child forgets the parent's threads.
void lock_guest_seats_for_fork() noexcept;
void unlock_guest_seats_after_fork(bool child) noexcept;

}  // namespace aloe::omp

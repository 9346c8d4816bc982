// Cores borrowed from other ranks of the same MPI job on this node (issue 19): how many the
// process holds now, on which CPUs, and the spare workers its team keeps for them.
//
// A rank bound to one core has a team of one; to use a core lent by another rank it needs
// a thread to put there. So when lending may happen (ALOE_LEND not off, in an MPI job of
// several ranks on this node, a daemon's socket present), the process team is made with
// spare workers beyond the program's own count: as many as the other local ranks could lend
// (their count times the own count, at most the node's other CPUs). A spare worker sleeps
// (the team's futex) until a loop runs with borrowed cores; it takes no tasks and helps no
// nested loop on its own (those would run on the rank's own cores, oversubscribed).
//
// The daemon's client (coord/daemon_client) sets the borrowed count and CPUs when an
// allocation arrives; a spare worker, when it starts a job, moves to its borrowed CPU (or
// back to the process's CPUs when none is named) if the placement changed since its last
// job: one relaxed load per job when nothing moved.
#pragma once

#include "runtime/clock.hpp"
#include "runtime/config.hpp"

#include <atomic>
#include <cstdint>
#include <sched.h>
#include <vector>

namespace aloe::runtime {

/// Spare workers the process team should carry for `own` threads (0 when no lending can
/// happen). `local_ranks` is the job's ranks on this node (from the launcher), `node_cpus`
/// the CPUs of the node; the spares never make the team larger than the node's CPUs.
int spare_workers_for_lending(lend_mode mode, bool daemon_reachable, int local_ranks, int own, int node_cpus) noexcept;

/// Whether a node daemon's socket was seen at load (coord/ looks, with a stat, and says so
/// here: runtime/ does not know where sockets live). ALOE_LEND=auto lends only then.
void note_daemon_socket_present() noexcept;
bool daemon_socket_present() noexcept;

/// The spares the process team should carry now (the configuration, the launcher's
/// environment, the node's online CPUs); 0 when lending cannot happen.
int default_spare_workers(int own);

/// How many borrowed cores the process holds now (0: none). Relaxed: a loop plans with it.
int borrowed_core_count() noexcept;

/// Core-seconds of borrowed cores the process has held so far (runtime::monotonic_seconds):
/// per-step reporting takes differences of it.
double borrowed_core_seconds() noexcept;

/// The generation of the borrowed placement: bumped by every set_borrowed_cores().
std::uint32_t borrowed_placement_generation() noexcept;

/// Sets what the daemon gave: `count` cores, `cpus` the CPUs it could name (maybe fewer).
void set_borrowed_cores(int count, const std::vector<int>& cpus) noexcept;

/// The CPU spare worker `index` (0-based among the spares) should run on; -1: anywhere the
/// process may run.
int borrowed_cpu_for_spare(int index) noexcept;

/// Whether `cpu` is one of the borrowed cores' named CPUs now.
bool cpu_borrowed_now(int cpu) noexcept;

/// How many borrowed cores have a CPU named (the daemon names them from the lenders' masks;
/// an unnamed one would put its thread on the rank's own cores, so nothing runs on it).
int borrowed_cores_named() noexcept;

/// Pins the calling thread onto the CPU of borrowed core `index`, or onto `otherwise` when
/// that core has no CPU named. A CPU the process's cgroup does not allow is refused by the
/// kernel: the thread stays where it was (slower, never wrong). The thread is remembered as
/// spare `index`: when its CPU is taken back, set_borrowed_cores() moves it to `otherwise`
/// at once, whatever it is running.
void pin_to_borrowed_cpu(int index, const cpu_set_t& otherwise) noexcept;

/// Moves the spares pinned to CPUs no longer borrowed home (set_borrowed_cores does).
void move_guests_off_taken_back_cpus() noexcept;

/// Who puts threads on borrowed cores in this process, and how many it can: the process
/// team's spare workers by default; under `aloe run` the interposer, whose regions take
/// extra libgomp threads instead (omp/team_region.cpp), registers its own count. -1: no
/// source registered (the process team's count applies).
using borrowing_threads_source = int (*)() noexcept;
void set_borrowing_threads_source(borrowing_threads_source source) noexcept;
int registered_borrowing_threads() noexcept;

/// Who sends the threads left on borrowed CPUs between regions home (the interposer,
/// omp/guest_seats.hpp): called with `everyone` false after every set_borrowed_cores() (those
/// whose CPU is no longer borrowed), and as send_idle_guests_home() says.
using guests_home_hook = void (*)(bool everyone) noexcept;
void set_guests_home_hook(guests_home_hook hook) noexcept;

/// Regions that could have taken threads on borrowed cores and were kept without them
/// (omp/guest_payoff.hpp: those threads made their site slower); libaloe-mpi reports it.
void note_region_kept_without_guests() noexcept;
std::uint64_t regions_kept_without_guests() noexcept;

/// Threads that sit idle on a borrowed CPU go back to their own mask: those whose CPU is no
/// longer borrowed (`everyone` false: a rank entering a blocking MPI call, which may not
/// have heard the take-back yet), or all of them (true: MPI_Finalize, after the job's last
/// step no thread stays on another rank's CPU).
void send_idle_guests_home(bool everyone) noexcept;

/// Whether the calling thread runs on a CPU another rank lent (a guest). Its loops then give
/// the CPU back between chunks now and then (yield_to_lender): the lender's polite wait naps
/// between its MPI tests, and a guest that computes chunk after chunk kept it off its own
/// CPU for a whole time slice (2.6-2.9 ms median from the message that ended its wait to the
/// wait's return, bench/results/reclaim-bound-20261127b) after its wait had ended.
namespace lent_cpu_detail {
extern thread_local bool on_lent_cpu __attribute__((tls_model("initial-exec")));
}
inline bool on_lent_cpu() noexcept { return lent_cpu_detail::on_lent_cpu; }
void set_on_lent_cpu(bool on) noexcept;
/// sched_yield(), at most once each 100 us of the caller's chunks: a lender whose nap has
/// ended runs at once (a yielding thread's deadline moves past a woken one's); nothing else
/// runnable, it returns at once. The yields are counted (guest_yields()).
void yield_to_lender() noexcept;
std::uint64_t guest_yields() noexcept;

/// Threads of this process inside an intercepted MPI call (libaloe-mpi counts them at the
/// outermost call's entry and return). A rank that calls MPI has ended or paused its compute
/// phase: no loop of it will start soon, so its guests stop waiting awake (below).
void note_mpi_call(bool entering) noexcept;
int threads_in_mpi_calls() noexcept;

/// A spare on a lent CPU between two loops of its rank (placed at placement generation
/// `placed`): spins until `word` no longer holds `old`, yielding each 100 us as a guest's
/// chunks do (yield_to_lender), for at most `most`, and only while the placement holds and
/// no thread of the rank is in an MPI call. Asleep on
/// the futex, it needed the lender's CPU to wake it for each loop: 11-42 us of scheduling
/// delay a loop on the VM (perf sched, jacobi3d-mpi 1:3, 20 loops a step), some 20% of a
/// 170 us loop. Awake, the next loop finds it running, as LeWI's libomp threads (which spin
/// 200 ms between regions) are. The hybrid wait's rule that skips yielding on a shared CPU
/// does not apply here: the lender's naps share the CPU by design. Returns at once off a
/// lent CPU. The caller then waits as usual (wait_while_equal).
void wait_awake_on_lent_cpu(const std::atomic<std::uint32_t>& word, std::uint32_t old, std::uint32_t placed,
                            ticks most) noexcept;

}  // namespace aloe::runtime

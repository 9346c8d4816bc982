// Where non-malleable clients may run: SCAF's last resort for a program whose thread count
// is fixed (it called omp_set_num_threads, or asked for a count it must keep): the daemon
// cannot change its threads, so it confines the whole process to as many CPUs as its
// allocation (thesis notes §1.5). Malleable clients are never confined: their thread count
// does the sharing, and the OS places their threads.
//
// Layout: the daemon's CPUs in topology order (core by core, in hwloc's logical order: the
// cores of a package, then of the next), cut into consecutive runs, one per non-malleable
// client in registration order, each as long as its allocation. A run whose length is a
// multiple of the hardware threads per core (the daemon's --chunk) therefore holds whole
// cores, and two programs do not share one. SCAF cut the CPU list in its hash table's
// order, with no regard to cores.
// confine_process() applies a run to every thread of a process (/proc/<pid>/task).
#pragma once

#include <string>
#include <sys/types.h>
#include <vector>

namespace aloe::runtime {
class topology;
}

namespace aloe::coord {

/// The CPUs, grouped by core, in the order they are handed out.
using core_list = std::vector<std::vector<int>>;

/// The runs: one list of CPUs per entry of `allocations` (threads each non-malleable client
/// may use, in order). When the CPUs run out, the remaining clients share the last core
/// (never an empty set: a process cannot run on no CPU).
std::vector<std::vector<int>> plan_confinement(const core_list& cores, const std::vector<unsigned>& allocations);

/// The allowed CPUs of `t` grouped by core, at most `most` cores (0: all).
core_list cores_of(const runtime::topology& t, unsigned most = 0);

/// The daemon's own CPUs grouped by core (runtime::topology::machine(), within its
/// affinity mask and cgroup), at most `cores` cores (its --cores; 0: all).
core_list daemon_cores(unsigned cores = 0);

/// Sets the affinity of every thread of `pid` to `cpus`. Returns what failed, or "" when
/// every thread was confined (a thread that exits meanwhile is not a failure).
std::string confine_process(pid_t pid, const std::vector<int>& cpus, const std::string& proc_root = "/proc");

}  // namespace aloe::coord

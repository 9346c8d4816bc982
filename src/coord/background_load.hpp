// Background load: how many CPUs' worth of time the processes aloed does not control use
// (other users' programs, a build, a non-aloe OpenMP program), so the daemon shares only
// the cores they leave. This is SCAF's lookout thread (thesis notes §1.5, case 1).
//
// Sources: the aggregate `cpu ` line of /proc/stat for the machine, and utime + stime of
// /proc/<pid>/stat for each client. Both count in USER_HZ ticks ("jiffies"), so they
// subtract directly. /proc/<pid>/stat already sums every thread of the process, live and
// exited, so one read per client pid is enough; no walk of /proc/<pid>/task.
//
// Choices:
// - Uncontrolled load = max(0, Δbusy − Δclients) / (Δbusy + Δidle) × N CPUs. SCAF's code
//   counts client time as idle and sums utime only; we take utime + stime, since a
//   client's system time is just as much ours to share.
// - Client time is accounted per pid (background_load_meter): a pid counts only for
//   intervals it was seen at both ends. A client that exits is dropped instead of making
//   the sum fall; a new one counts from its first sample. The cost: in the interval a
//   client joins or leaves, its time there shows up as background for one sample.
// - A machine counter that goes backwards voids the interval (0, new baseline) rather
//   than wrapping to a huge load.
// - Rounding (thesis §8 item 1: Alg. 3 takes the ceiling, the code rounds to nearest):
//   a CPU of load costs a core once more than half of it is used (available_cores).
//
// Parsing is separate from reading (text in, values out), so tests replay recorded lines
// and fake /proc trees; the readers take the /proc root for the same reason.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

namespace aloe::coord {

/// Machine-wide CPU time since boot from /proc/stat, in USER_HZ ticks.
struct cpu_jiffies {
    std::uint64_t busy = 0;  ///< user + nice + system + irq + softirq + steal
    std::uint64_t idle = 0;  ///< idle + iowait
};

/// The aggregate `cpu ` line, which must be the first line of `text` (/proc/stat's whole
/// text or just that line). Takes 4 to 10 counters (old kernels have fewer; fields a
/// future kernel adds after guest_nice are ignored). nullopt when the first line is not
/// the aggregate line, has fewer than 4 counters, or holds anything but decimal numbers.
std::optional<cpu_jiffies> parse_proc_stat(std::string_view text);

/// utime + stime (fields 14 and 15) of one /proc/<pid>/stat line: the CPU time of all the
/// process's threads. The command name (field 2) may hold blanks and ')', so fields are
/// counted from the last ')'. nullopt when the line is cut short or not of that shape.
std::optional<std::uint64_t> parse_pid_stat_jiffies(std::string_view text);

/// One client's CPU time at one sample.
struct pid_jiffies {
    pid_t pid = 0;
    std::uint64_t jiffies = 0;  ///< utime + stime, as parse_pid_stat_jiffies returns
};

/// Turns successive samples (once a second in aloed) into the background load over each
/// interval. Not thread-safe: one lookout thread owns it.
class background_load_meter {
public:
    /// `cpus`: the CPUs /proc/stat's aggregate line covers (the machine's online CPUs),
    /// not the daemon's share of them.
    explicit background_load_meter(unsigned cpus) noexcept : cpus_(cpus) {}

    /// CPUs' worth of time used by uncontrolled processes since the previous sample, in
    /// [0, cpus]; 0 on the first sample and after a machine counter went backwards.
    /// `controlled`: every client pid alive now, each once. A pid counts only if it was in
    /// the previous sample too; a pid whose counter fell (pid reused) counts 0 this time.
    double sample(const cpu_jiffies& machine, std::span<const pid_jiffies> controlled);

    /// A client that joined now, with its CPU time so far: from here on its time counts as
    /// controlled (without it, the joining interval would count a newcomer's own time as
    /// background and shrink its first allocation). A pid already known is left alone.
    void joined(pid_jiffies client) { last_pid_.try_emplace(client.pid, client.jiffies); }

private:
    unsigned cpus_;
    std::optional<cpu_jiffies> last_machine_;
    std::unordered_map<pid_t, std::uint64_t> last_pid_;
};

/// The load a whole core must be more than to cost one (thesis notes §1.5, §8 item 1).
inline constexpr double default_load_threshold = 0.5;

/// Cores left for the daemon's clients: `cores` − ⌈load − threshold⌉ (none taken when the
/// load is at most `threshold`), never below 1. With 0.5 this rounds half down: a 0.3-CPU
/// blip takes no core from two programs sharing two cores, a busy loop (≈1.0) takes one.
/// A NaN or negative load takes none.
unsigned available_cores(unsigned cores, double uncontrolled_cpus, double threshold = default_load_threshold);

/// parse_proc_stat of `proc_root`/stat; nullopt when it cannot be read or parsed.
std::optional<cpu_jiffies> read_machine_jiffies(const std::string& proc_root = "/proc");

/// parse_pid_stat_jiffies of `proc_root`/<pid>/stat; nullopt when the process is gone
/// (a normal event between listing clients and reading them) or the line is bad.
std::optional<std::uint64_t> read_pid_jiffies(pid_t pid, const std::string& proc_root = "/proc");

}  // namespace aloe::coord

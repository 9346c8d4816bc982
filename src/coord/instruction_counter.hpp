// Instruction counts from perf_event_open, for the `instructions` efficiency measure
// (efficiency_meter.hpp has the arithmetic, docs/daemon.md the user's side).
//
// SCAF read PAPI's IPC of the master thread. aloe counts instructions per wall second
// instead: a serial sample's rate on the one thread that ran it, a parallel run's rate
// summed over every thread of the process; speedup ≈ parallel rate / serial rate. Wall
// time, not cycles: a thread that is descheduled or slowed down executes no instructions,
// so the rate already says so (SCAF scaled its IPC by CPU/wall time for the same reason),
// and one event per thread halves the file descriptors and reads. Only user-space
// instructions are counted (exclude_kernel: what perf_event_paranoid=2 allows).
//
// Two scopes:
// - thread: the calling thread alone (pid 0, no inherit). Serial samples run on the thread
//   that plans them; idle team threads, which may spin through the sample, are left out.
// - process: every thread. An event with `inherit` covers the threads created after it
//   opened, not those already running, and the counter opens lazily, when the team
//   exists. So there is one event per thread listed in /proc/self/task, each with inherit
//   (a thread started later descends from one of them, so its counts fold into that
//   event), and a read sums them. Trade-off: one descriptor per thread at open and one
//   read() per descriptor (each read also interrupts the CPUs where inherited threads
//   run), against a single descriptor opened before any thread, which a library loaded
//   into a running program cannot arrange. The list is read again after opening; if a
//   thread appeared meanwhile it may or may not be covered, so everything is closed and
//   opened again (up to 4 times, then the counter is unavailable, said so). Events are
//   inherited by threads only (inherit_thread, Linux 5.13; older kernels also pass them
//   to child processes, whose work is then counted too) and close on exec.
//
// Everything the kernel is asked goes through counter_source, so tests replay a fake one;
// kernel_counter_source() is the real one. A descriptor is opened with O_CLOEXEC; in a fork
// child the parent's events would count the parent, so the child drops them
// (instruction_measure::drop_after_fork, from pthread_atfork) and opens its own at first
// use.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aloe::coord {

/// One event's value and the time the kernel had it enabled and actually counting (they
/// differ when more events are open than the PMU has counters: multiplexing).
struct counter_value {
    std::uint64_t value = 0;
    std::uint64_t enabled = 0;  ///< ns
    std::uint64_t running = 0;  ///< ns
};

/// The value scaled for multiplexing, value · enabled / running (perf's estimate); 0 when
/// the event never ran.
double scaled_count(const counter_value& v) noexcept;

/// What the counters need from the kernel. Tests give a fake one.
class counter_source {
public:
    virtual ~counter_source() = default;
    /// Opens a counting event on thread `tid` (0: the caller), with `inherit`, close-on-exec;
    /// returns a descriptor, or -errno.
    virtual int open(int tid, bool inherit) = 0;
    /// Reads `fd` (PERF_FORMAT_TOTAL_TIME_ENABLED | _RUNNING); false when it cannot.
    virtual bool read(int fd, counter_value& out) = 0;
    virtual void close(int fd) = 0;
    /// The process's threads (/proc/self/task); empty when they cannot be listed.
    virtual std::vector<int> threads() = 0;
    /// /proc/sys/kernel/perf_event_paranoid, nullopt when unreadable.
    virtual std::optional<int> paranoid() = 0;
};

/// What a kernel source counts: instructions (the measure), or the task clock, a software
/// event every kernel has (tests exercise the real path with it on machines without a PMU).
enum class counted_event { instructions, task_clock };

/// The kernel's perf_event_open. Stateless: one per process is enough.
std::unique_ptr<counter_source> kernel_counter_source(counted_event event = counted_event::instructions);

/// Why an open failed with `error`, in one clause: "no hardware counters (ENOENT: a VM
/// without a virtual PMU, or a CPU without the event)", "perf_event_paranoid=3 forbids it".
std::string unavailable_reason(int error, std::optional<int> paranoid);

enum class count_scope { thread, process };

/// One counter of one scope (see the top of this file). Not thread-safe: open and drop by
/// one thread at a time; reads may run concurrently once open.
class instruction_counter {
public:
    instruction_counter(counter_source& source, count_scope scope) noexcept : source_(&source), scope_(scope) {}
    ~instruction_counter() { close_all(); }
    instruction_counter(const instruction_counter&) = delete;
    instruction_counter& operator=(const instruction_counter&) = delete;

    /// Opens the events (again, after drop()); true when counting, else reason() says why.
    bool open();
    bool counting() const noexcept { return !fds_.empty(); }
    const std::string& reason() const noexcept { return reason_; }
    /// The instructions counted so far, scaled for multiplexing and summed over the events.
    std::optional<double> read() const;
    /// Closes the events (a fork child's are its parent's).
    void drop() noexcept { close_all(); }
    std::size_t events() const noexcept { return fds_.size(); }

private:
    void close_all() noexcept;
    bool fail(std::string why);

    counter_source* source_;
    count_scope scope_;
    std::vector<int> fds_;
    std::string reason_;
};

/// The process's instruction measure: opened at first use, said once when it cannot be
/// (I702) or when it is (I703), dropped in fork children. Counts other than serial samples
/// are limited by their cost (a read of the process's events interrupts the CPUs its
/// threads run on): see begin(). Thread-safe.
class instruction_measure {
public:
    explicit instruction_measure(counter_source& source) noexcept : source_(&source), process_(source, count_scope::process) {}

    enum class state { untried, available, unavailable };
    /// Opens the process counter on the first call (later calls only look).
    bool available();
    state now() const noexcept;
    /// Why it is unavailable (empty while available or untried).
    std::string reason() const;

    /// A reading taken before a run.
    struct start {
        double instructions = 0;
        double at = 0;                                 ///< seconds, when it was read
        std::unique_ptr<instruction_counter> thread;   ///< the run's own thread counter (one thread), else null
        unsigned generation = 0;                       ///< fork children start a new one
    };
    /// Reads a counter for a run about to start at `now`: the calling thread's (opened for
    /// this run) when the run has one thread, else the process's. nullopt: not counted.
    /// Serial samples are always counted; other runs only while counting has cost at most
    /// `count_budget` of the time since the first count, and at most one per
    /// `least_seconds_between_counts`.
    std::optional<start> begin(bool one_thread, bool sample, double now);
    /// The run's instructions per second, read after it ended; `now` is when.
    std::optional<double> finish(start& s, double now);

    /// In a fork child: closes the parent's events, back to untried.
    void drop_after_fork() noexcept;

private:
    counter_source* source_;
    mutable std::mutex mutex_;           // opening, the budget, reads of the process counter
    std::atomic<state> state_{state::untried};  // also read without the lock (every run)
    unsigned generation_ = 0;
    instruction_counter process_;
    double first_count_ = -1;   // when counting started (-1: not yet)
    std::atomic<double> last_count_{-1e300};  // a lock-free first look for most runs
    double spent_ = 0;          // seconds spent opening and reading counters
};

inline constexpr double count_budget = 0.01;
inline constexpr double least_seconds_between_counts = 0.01;

/// The process's measure, over the kernel (registers its fork handler on first use).
instruction_measure& process_instruction_measure();

/// For `aloe info`: whether this machine counts instructions for this user, and if not why
/// (opens and closes one event on the calling thread).
struct instruction_probe {
    bool available = false;
    std::string reason;  ///< empty when available
};
instruction_probe probe_instructions(counter_source& source);

}  // namespace aloe::coord

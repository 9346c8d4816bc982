#include "runtime/borrowed_cores.hpp"

#include "runtime/clock.hpp"
#include "runtime/local_ranks.hpp"
#include "runtime/spin_lock.hpp"

#include <algorithm>
#include <array>
#include <mutex>
#include <sys/syscall.h>
#include <unistd.h>

namespace aloe::runtime {
namespace {

// Enough for the spares of any node we know (a window per allocation names up to 64).
constexpr std::size_t borrowable_most_named = 256;

constinit std::atomic<int> borrowed_count{0};
constinit std::atomic<std::uint32_t> borrowed_generation{0};
constinit std::array<std::atomic<int>, borrowable_most_named> borrowed_named_cpu{};  // -1 past the named ones
constinit std::atomic<int> borrowed_named{0};
constinit std::atomic<bool> daemon_socket_seen{false};
constinit std::atomic<borrowing_threads_source> borrowing_source{nullptr};
constinit std::atomic<guests_home_hook> guests_home{nullptr};
constinit std::atomic<std::uint64_t> kept_without_guests{0};

// The process team's spares on a borrowed CPU, by spare index (pin_to_borrowed_cpu): a
// take-back moves them home at once, a chunk in progress included (set_borrowed_cores).
// Left there, a guest finished its chunk only when the returned lender's time slice let it
// (4.0 ms median at 10 and 100 us chunks, bench/results/reclaim-bound-20261127b), and its loop waited.
struct guest_thread {
    int tid = 0;   // 0: no spare pinned itself here yet
    int cpu = -1;  // the borrowed CPU it is pinned to; -1: home
    cpu_set_t home{};
};
struct guest_table {
    spin_lock lock;  // a spare's pin and a take-back's moves (both rare: per lend)
    std::array<guest_thread, borrowable_most_named> slots{};
    int used = 0;
};
guest_table& guests_on_borrowed_cpus() noexcept {
    static guest_table t;
    return t;
}

// The running total of borrowed core-seconds: held count × time, summed at each change.
struct borrowed_time {
    spin_lock lock;
    double total_core_s = 0;
    double since_s = 0;  // the last change
    int held = 0;
};
borrowed_time& borrowed_clock() noexcept {
    static borrowed_time t;
    return t;
}


}  // namespace

int spare_workers_for_lending(lend_mode mode, bool daemon_reachable, int local_ranks, int own, int node_cpus) noexcept {
    if (mode == lend_mode::off || local_ranks <= 1 || own < 1) return 0;
    if (mode == lend_mode::automatic && !daemon_reachable) return 0;
    const long others = static_cast<long>(local_ranks - 1) * own;
    return static_cast<int>(std::clamp<long>(std::min<long>(others, node_cpus - own), 0, borrowable_most_named));
}

void note_daemon_socket_present() noexcept { daemon_socket_seen.store(true, std::memory_order_relaxed); }
bool daemon_socket_present() noexcept { return daemon_socket_seen.load(std::memory_order_relaxed); }

int default_spare_workers(int own) {
    const config& cfg = current_config();
    if (cfg.lend == lend_mode::off) return 0;
    const int ranks = local_ranks_from(process_environment());
    if (ranks <= 1) return 0;
    const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
    return spare_workers_for_lending(cfg.lend, daemon_socket_present(), ranks, own,
                                     online > 0 ? static_cast<int>(online) : own);
}

int borrowed_core_count() noexcept { return borrowed_count.load(std::memory_order_relaxed); }

std::uint32_t borrowed_placement_generation() noexcept { return borrowed_generation.load(std::memory_order_acquire); }

double borrowed_core_seconds() noexcept {
    borrowed_time& t = borrowed_clock();
    std::lock_guard lock(t.lock);
    // Nothing held now (a rank that never borrows): the total as it stands, no clock read.
    return t.total_core_s + (t.held > 0 ? t.held * (monotonic_seconds() - t.since_s) : 0.0);
}

void set_borrowed_cores(int n, const std::vector<int>& cpus) noexcept {
    {
        borrowed_time& t = borrowed_clock();
        const double now = monotonic_seconds();
        std::lock_guard lock(t.lock);
        if (t.held > 0) t.total_core_s += t.held * (now - t.since_s);
        t.since_s = now;
        t.held = std::max(n, 0);
    }
    const std::size_t k = std::min(cpus.size(), borrowable_most_named);
    for (std::size_t i = 0; i < borrowable_most_named; ++i) borrowed_named_cpu[i].store(i < k ? cpus[i] : -1, std::memory_order_relaxed);
    borrowed_named.store(static_cast<int>(k), std::memory_order_relaxed);
    borrowed_count.store(std::max(n, 0), std::memory_order_relaxed);
    borrowed_generation.fetch_add(1, std::memory_order_release);  // publishes the CPUs to a spare's acquire
    move_guests_off_taken_back_cpus();
    if (const guests_home_hook h = guests_home.load(std::memory_order_acquire)) h(false);
}

bool cpu_borrowed_now(int cpu) noexcept {
    const int named = borrowed_cores_named();
    for (int i = 0; i < named; ++i)
        if (borrowed_named_cpu[static_cast<std::size_t>(i)].load(std::memory_order_relaxed) == cpu) return true;
    return false;
}

void move_guests_off_taken_back_cpus() noexcept {
    guest_table& t = guests_on_borrowed_cpus();
    std::lock_guard lock(t.lock);
    for (int i = 0; i < t.used; ++i) {
        guest_thread& g = t.slots[static_cast<std::size_t>(i)];
        if (g.cpu < 0 || cpu_borrowed_now(g.cpu)) continue;
        g.cpu = -1;
        // Only a thread of this process (a thread id is reused only once its thread is gone).
        if (g.tid > 0 && syscall(SYS_tgkill, getpid(), g.tid, 0) == 0) sched_setaffinity(g.tid, sizeof g.home, &g.home);
    }
}

int borrowed_cpu_for_spare(int index) noexcept {
    if (index < 0 || index >= borrowed_named.load(std::memory_order_relaxed)) return -1;
    return borrowed_named_cpu[static_cast<std::size_t>(index)].load(std::memory_order_relaxed);
}

int borrowed_cores_named() noexcept {
    return std::min(borrowed_named.load(std::memory_order_relaxed), borrowed_count.load(std::memory_order_relaxed));
}

void pin_to_borrowed_cpu(int index, const cpu_set_t& otherwise) noexcept {
    const int cpu = borrowed_cpu_for_spare(index);
    cpu_set_t set;
    CPU_ZERO(&set);
    const bool borrowed = cpu >= 0 && cpu < CPU_SETSIZE;
    if (borrowed) CPU_SET(cpu, &set);
    else set = otherwise;
    const bool moved = sched_setaffinity(0, sizeof set, &set) == 0;
    set_on_lent_cpu(borrowed && moved);
    if (index < 0 || static_cast<std::size_t>(index) >= borrowable_most_named) return;
    const int tid = static_cast<int>(syscall(SYS_gettid));  // rare: at a change of borrowed CPUs
    guest_table& t = guests_on_borrowed_cpus();
    std::lock_guard lock(t.lock);
    guest_thread& g = t.slots[static_cast<std::size_t>(index)];
    g.tid = tid;  // a team made later may have another thread as spare `index`
    g.home = otherwise;
    g.cpu = borrowed && moved ? cpu : -1;
    t.used = std::max(t.used, index + 1);
}

namespace lent_cpu_detail {
thread_local bool on_lent_cpu __attribute__((tls_model("initial-exec"))) = false;
}

namespace {
constinit thread_local ticks next_yield __attribute__((tls_model("initial-exec"))) = 0;
constinit std::atomic<std::uint64_t> yields{0};
}  // namespace

void set_on_lent_cpu(bool on) noexcept { lent_cpu_detail::on_lent_cpu = on; }

void yield_to_lender() noexcept {
    static const ticks every = static_cast<ticks>(100e-6 * ticks_per_second());
    const ticks now = now_ticks();
    if (now < next_yield) return;
    next_yield = now + every;
    sched_yield();
    yields.fetch_add(1, std::memory_order_relaxed);
}

std::uint64_t guest_yields() noexcept { return yields.load(std::memory_order_relaxed); }

namespace {
constinit std::atomic<int> in_mpi_calls{0};
}  // namespace

void note_mpi_call(bool entering) noexcept { in_mpi_calls.fetch_add(entering ? 1 : -1, std::memory_order_relaxed); }

int threads_in_mpi_calls() noexcept { return in_mpi_calls.load(std::memory_order_relaxed); }

void wait_awake_on_lent_cpu(const std::atomic<std::uint32_t>& word, std::uint32_t old, std::uint32_t placed,
                            ticks most) noexcept {
    if (!on_lent_cpu() || most == 0) return;
    const ticks end = now_ticks() + most;
    // A pure spin with the guest's periodic yield, not a yield each round: a yielding
    // thread lets the lender's SCHED_IDLE sentinel run, which would take the CPU for idle.
    while (word.load(std::memory_order_acquire) == old && in_mpi_calls.load(std::memory_order_relaxed) == 0 &&
           borrowed_placement_generation() == placed && now_ticks() < end) {
        cpu_relax();
        yield_to_lender();
    }
}

void set_guests_home_hook(guests_home_hook hook) noexcept {
    guests_home.store(hook, std::memory_order_release);
}

void note_region_kept_without_guests() noexcept { kept_without_guests.fetch_add(1, std::memory_order_relaxed); }

std::uint64_t regions_kept_without_guests() noexcept { return kept_without_guests.load(std::memory_order_relaxed); }

void send_idle_guests_home(bool everyone) noexcept {
    if (const guests_home_hook h = guests_home.load(std::memory_order_acquire)) h(everyone);
}

void set_borrowing_threads_source(borrowing_threads_source source) noexcept {
    borrowing_source.store(source, std::memory_order_release);
}

int registered_borrowing_threads() noexcept {
    const borrowing_threads_source source = borrowing_source.load(std::memory_order_acquire);
    return source != nullptr ? source() : -1;
}

}  // namespace aloe::runtime

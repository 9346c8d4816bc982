#include "mpi/rank_lending.hpp"

#include "coord/daemon_client.hpp"
#include "mpi/call_table.hpp"
#include "mpi/idle_core_watch.hpp"
#include "mpi/lend_cost.hpp"
#include "mpi/lending_rule.hpp"
#include "mpi/lending_steps.hpp"
#include "mpi/slack_board.hpp"
#include "runtime/borrowed_cores.hpp"
#include "runtime/clock.hpp"
#include "runtime/config.hpp"
#include "runtime/local_ranks.hpp"
#include "runtime/report.hpp"
#include "runtime/team.hpp"

#include <aloe/team.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <limits>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include <sched.h>

namespace aloe::mpi {
namespace {

// Predictive: kept waits per one whose following phase is measured (the lend cost's
// baseline, lend_cost.hpp; every phase after a lend is measured).
constexpr unsigned keep_sample_every = 16;

// What phase sizing (lending_rule.hpp) remembers of a call path, as if the rank had run the
// phase before it on its own cores (a phase run with cores lent is scaled back: its compute
// by the cores it kept, its closing wait by the cores the other rank then had).
struct path_phase {
    double compute_s = -1;          // the phase that ends at this path's call; < 0: not seen
    double slack_s = -1;            // the call's wait
    std::uint32_t next_plus_1 = 0;  // the path of the polite wait that came after it, + 1
    unsigned guarded = 0;           // phases ending here left without phase lending (a miss)
};

struct lender {
    lending_settings rule;
    bool point_to_point = false;
    bool collectives = false;
    unsigned team_spare = 0;               // the process team's spare workers (no interposer)
    unsigned own_threads = 1;              // its own count, while no daemon tells its share
    std::atomic<bool> busy{false};         // one polite wait at a time lends
    bool asking = false;                   // a request stands (under busy)
    std::atomic<std::uint64_t> waits{0}, lends{0}, lends_at_entry{0}, asks{0}, take_backs{0};
    std::atomic<double> lent_s{0};
    // Phase sizing (predictive), under busy: the last polite wait's path and return, and
    // the cores lent for the phase running now.
    std::vector<path_phase> paths;
    std::size_t last_row_plus_1 = 0;
    double last_return_s = -1;  // monotonic seconds (clock_at); < 0: no wait yet
    // The ticks clock anchored to CLOCK_MONOTONIC once: a wait reads the cheap ticks and the
    // report gets the clock every process shares.
    runtime::ticks anchor_ticks = runtime::now_ticks();
    double anchor_s = runtime::monotonic_seconds();
    double clock_at(runtime::ticks t) const noexcept {
        return anchor_s + (t >= anchor_ticks ? runtime::ticks_to_seconds(t - anchor_ticks)
                                             : -runtime::ticks_to_seconds(anchor_ticks - t));
    }
    unsigned phase_cores = 0;
    lending_steps steps;        // the per-step report (under busy; read at the end)
    std::atomic<std::uint64_t> phase_lends{0}, phase_misses{0};
    std::atomic<double> phase_core_s{0};
    // Predictive, under busy: what a lend costs the lender (lend_cost.hpp), and the thread
    // and CPU time at the last return, for the phase that starts there.
    lend_cost cost;
    const void* return_thread = nullptr;
    double return_cpu_s = -1;  // < 0: not read at the last return
    bool returned_from_lend = false;
    unsigned kept_unsampled = 0;  // kept waits since the last one whose phase was measured
    std::atomic<double> lend_cost_s{0};           // the last estimate, for the statistics
    std::atomic<std::uint64_t> refused_for_cost{0};
};

// Tells the threads apart for the thread CPU clock (a polite wait may come from any thread).
thread_local char cpu_clock_thread [[gnu::tls_model("initial-exec")]] = 0;

lender& lender_state() noexcept {
    static lender* const l = new lender;  // never destroyed: calls may come during exit
    return *l;
}

// The process's client, registered as what the process is: under `aloe run` the
// interposer's regions borrow (it registered their count), else the native team does.
coord::daemon_client& client() {
    static const std::uint32_t kind =
        runtime::registered_borrowing_threads() >= 0 ? coord::client_interposed : coord::client_native;
    return coord::daemon_client::process(kind);
}

// Cores this process could use beyond its share now: the interposer's regions' (they stop
// borrowing once the program reads omp_get_max_threads()), else the team's spare workers.
unsigned spare_now(const lender& l) noexcept {
    const int registered = runtime::registered_borrowing_threads();
    return registered >= 0 ? static_cast<unsigned>(registered) : l.team_spare;
}

bool lend_now(void*) noexcept {
    try {
        coord::daemon_client& c = client();
        // Only regions and loops read the daemon's answers otherwise: a rank that waits
        // before its first region (or inside one long region) would never see its share.
        c.refresh();
        const unsigned share = c.share();
        if (share == 0 || !c.in_lending_job()) {
            // Connected but not answered yet (the first waits right after MPI_Init): no
            // warning until it has lasted this many waits.
            static std::atomic<unsigned> unanswered{0};
            if (c.connected() && unanswered.fetch_add(1, std::memory_order_relaxed) < 64) return false;
            static std::atomic<bool> said{false};
            // The job's first rank warns (lending was asked for); the others say it at info.
            const bool first = runtime::current_config().job_rank <= 0;
            if (!said.exchange(true, std::memory_order_relaxed))
                runtime::report_once({first ? runtime::report_level::warning : runtime::report_level::info,
                                      runtime::report_category::mpi, first ? "W604" : "I604",
                                      "libaloe-mpi: ALOE_LEND=" + std::string(runtime::to_string(lender_state().rule.mode)) +
                                          ", but a rank waited and could not lend its cores (" + c.describe() + ")",
                                      "waits that do not lend, until a daemon answers in this job"});
            return false;
        }
        return c.lend(share, /*whole=*/true);
    } catch (...) {
        return false;
    }
}

// Between the tests of a lent wait: up to `seconds`, less once the lent core is idle.
void nap_until_idle(double seconds) noexcept { (void)idle_core_watch::process().nap(seconds); }

void add(std::atomic<double>& a, double v) noexcept {
    for (double old = a.load(std::memory_order_relaxed); !a.compare_exchange_weak(old, old + v, std::memory_order_relaxed);) {
    }
}

// A polite wait of path `row` entered at `entry` and waited `waited_s`, closing a phase run
// with `lent` of the rank's cores lent: what the path remembers for phase sizing.
void note_phase(lender& l, std::size_t row, double entry_s, double waited_s, unsigned lent) {
    if (l.paths.empty()) return;
    path_phase& p = l.paths[row];
    if (l.last_row_plus_1 != 0) {
        l.paths[l.last_row_plus_1 - 1].next_plus_1 = static_cast<std::uint32_t>(row + 1);
        const double compute = std::max(0.0, entry_s - l.last_return_s);
        const double own = std::max(1u, client().share());
        // As on the own cores: the phase's compute ran on own − lent of them; the rank it
        // waited for had own + lent (it borrowed them, by the model) and finished when this
        // wait ended.
        p.compute_s = compute * (own - lent) / own;
        p.slack_s = lent > 0 ? (compute + waited_s) * (own + lent) / own - p.compute_s : waited_s;
        if (lent > 0) add(l.phase_core_s, lent * (compute + waited_s));
    }
    l.last_row_plus_1 = row + 1;
    // The guard: a phase run with cores lent after which the rank hardly waited lent too
    // much, or its prediction missed.
    if (lent > 0 && waited_s < l.rule.least_slack_s) {
        p.guarded = l.rule.guard_phases;
        l.phase_misses.fetch_add(1, std::memory_order_relaxed);
    } else if (p.guarded > 0) {
        --p.guarded;
    }
}

// The wait into the per-step report: what was lent over the phase and the wait (the whole
// share from the wait's entry when it lent, an approximation of a lend made after the
// grace; a phase's cores from its start), and the borrowed core-seconds so far.
void note_step(lender& l, std::size_t row, double entry_s, const wait_outcome& out, std::optional<double> predicted,
               unsigned phase_cores) {
    phase_sample s;
    s.path = row;
    s.entry_s = entry_s;
    s.end_s = entry_s + out.waited_s;
    s.phase_start_s = l.last_return_s >= 0 ? l.last_return_s : entry_s;
    s.predicted_s = predicted;
    const unsigned share = client().share();
    s.own_threads = share > 0 ? share : l.own_threads;
    // A phase's cores until the wait's entry, or its end when the wait lent nothing more.
    s.lent_core_s = (out.lent ? s.own_threads * out.waited_s : 0.0) +
                    phase_cores * ((out.lent ? s.entry_s : s.end_s) - s.phase_start_s);
    s.borrowed_total_core_s = runtime::borrowed_core_seconds();
    const std::uint64_t before = l.steps.completed();
    l.steps.add(s);
    if (l.steps.completed() == before) return;
    // A step ended: the daemon shows it (status, top); the client sends a few a second.
    const lending_step& t = l.steps.last();
    coord::step_message m;
    m.steps = static_cast<std::uint32_t>(std::min<std::uint64_t>(l.steps.completed(), ~0u));
    m.own_threads = std::min(t.own_threads, coord::max_threads);
    m.seconds = std::clamp(t.seconds, 0.0, 1e9);
    m.waited_s = std::clamp(t.waited_s, 0.0, 1e9);
    m.predicted_s = t.predicted_s < 0 ? -1.0 : std::min(t.predicted_s, 1e9);
    m.threads_used = std::clamp(t.threads_used(), 0.0, static_cast<double>(coord::max_threads));
    (void)client().step(m);
}

// Predictive: lends, until the next polite wait, the cores its phase does not need
// (lending_rule.hpp: cores_for_phase), from what the path of that wait remembers.
void lend_for_next_phase(lender& l, std::size_t row) {
    if (l.paths.empty() || l.rule.mode != runtime::lend_mode::predictive) return;
    const std::uint32_t next = l.paths[row].next_plus_1;
    if (next == 0) return;
    const path_phase& p = l.paths[next - 1];
    if (p.guarded > 0 || p.compute_s < 0) return;
    coord::daemon_client& c = client();
    const unsigned x = cores_for_phase(l.rule, c.share(), p.compute_s, p.slack_s);
    if (x == 0 || !c.in_lending_job() || !c.lend(x, /*whole=*/false)) return;
    l.phase_cores = x;
    l.phase_lends.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

void lending_after_init(MPI_Comm world) noexcept {
    lender& l = lender_state();
    const runtime::config& cfg = runtime::current_config();
    runtime::lend_mode mode = cfg.lend;
    const int local = runtime::local_ranks_from(runtime::process_environment());
    if (mode == runtime::lend_mode::automatic)
        mode = runtime::daemon_socket_present() && local > 1 ? runtime::lend_mode::predictive : runtime::lend_mode::off;
    l.rule.mode = mode;
    l.point_to_point = mode == runtime::lend_mode::reactive || mode == runtime::lend_mode::predictive;
    const int by_name = l.point_to_point && cfg.lend != runtime::lend_mode::automatic ? 1 : 0;
    // Lending asked for by name: dial the daemon now, so that the job can say at once when a
    // rank cannot reach one (a rank that never waits, the critical one, would say nothing).
    int unreachable = 0;
    if (by_name != 0) {
        try {
            coord::daemon_client& c = client();
            (void)c.threads(1);
            unreachable = c.connected() ? 0 : 1;
        } catch (...) {
            unreachable = 1;
        }
    }
    // Threads for borrowed cores: the interposer's regions' under `aloe run` (none under auto,
    // omp/team_region.cpp), else the process team's spare workers.
    if (l.point_to_point && runtime::registered_borrowing_threads() < 0) {
        try {
            l.team_spare = static_cast<unsigned>(aloe::team::global().workers().spare());
        } catch (...) {
        }
    }
    const int can_borrow = l.point_to_point && spare_now(l) > 0 ? 1 : 0;
    // Collective on a duplicate: the job agrees (MAX: polite everywhere when anyone lends),
    // learns whether any rank could borrow, and counts the ranks that could not reach a daemon.
    MPI_Comm comm = MPI_COMM_NULL;
    int mine[4] = {l.point_to_point ? 1 : 0, unreachable, can_borrow, by_name};
    int any[4] = {mine[0], 0, mine[2], mine[3]}, missing = unreachable;
    int world_rank = 0;
    if (PMPI_Comm_dup(world, &comm) == MPI_SUCCESS) {
        PMPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
        if (PMPI_Allreduce(mine, any, 4, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS) any[0] = any[1] = 0;
        if (any[1] != 0 && PMPI_Allreduce(&unreachable, &missing, 1, MPI_INT, MPI_SUM, comm) != MPI_SUCCESS) missing = 0;
        PMPI_Comm_rank(comm, &world_rank);
        PMPI_Comm_free(&comm);
    } else {
        any[0] = 0;
    }
    // Lending chosen by auto on every rank, and no rank able to take a core (OpenMP programs
    // under `aloe run`, whose regions borrow only by name): a lend would help no one, and its
    // naps cost the lender (2% at one region a step of jacobi3d-mpi 1:3): no lending in the
    // job. Every rank decides alike (the collectives must all be polite or all blocking).
    if (any[0] != 0 && any[2] == 0 && any[3] == 0) {
        any[0] = 0;
        l.point_to_point = false;
        l.rule.mode = runtime::lend_mode::off;
        runtime::report_once({runtime::report_level::info, runtime::report_category::mpi, "I607",
                              "libaloe-mpi: no rank of the job asked for lending by name (ALOE_LEND auto or off) "
                              "and none can take a lent core",
                              "no lending"});
    }
    l.collectives = any[0] != 0;
    if (missing > 0 && world_rank == 0)
        runtime::report_once({runtime::report_level::warning, runtime::report_category::mpi, "W606",
                              "libaloe-mpi: ALOE_LEND=" + std::string(runtime::to_string(mode)) + ", but " +
                                  std::to_string(missing) + (missing == 1 ? " rank" : " ranks") +
                                  " of the job could not reach a node daemon at MPI_Init (each rank's "
                                  "ALOE_DAEMON_SOCKET, else the default socket; `aloe info` on the node says why)",
                              "no lending on those ranks until a daemon answers"});
    if (!l.point_to_point) return;
    try {
        l.paths.resize(call_table::rows_total);
        cpu_set_t mask;
        const int configured = cfg.num_threads;
        l.own_threads = configured > 0 ? static_cast<unsigned>(configured)
                        : sched_getaffinity(0, sizeof mask, &mask) == 0 ? static_cast<unsigned>(std::max(1, CPU_COUNT(&mask)))
                                                                        : 1u;
        coord::daemon_client& c = client();
        (void)c.threads(1);  // dials now: the hello's answer comes while the program starts
        c.poll_fast(true);
        (void)c.listen_for_answers();
        runtime::report_once({runtime::report_level::info, runtime::report_category::mpi, "I603",
                              "libaloe-mpi: lending " + std::string(runtime::to_string(mode)) + ", " +
                                  std::to_string(local) + " ranks on this node, " + std::to_string(spare_now(l)) +
                                  " threads for borrowed cores" +
                                  (l.collectives ? ", blocking collectives wait politely" : ""),
                              ""});
    } catch (...) {
        l.point_to_point = false;
    }
}

bool polite_point_to_point() noexcept { return lender_state().point_to_point; }
bool polite_collectives() noexcept { return lender_state().collectives; }

// How long this wait waits before it lends (lending_rule.hpp), from its path's recent slacks
// (reactive needs none). Predictive: the phase that ends at this wait tells what the last
// lend cost (when the same thread returned from the last wait), and the rule counts it
// against every lend, except on a probe (lend_cost.hpp).
double wait_before_this_lend(lender& l, std::size_t row, double entry_s) noexcept {
    lending_settings rule = l.rule;
    if (rule.mode != runtime::lend_mode::predictive) return wait_before_lending(rule, {}).after_s;
    if (l.return_thread == &cpu_clock_thread && l.return_cpu_s >= 0) {
        const double cpu_s = runtime::thread_cpu_seconds();
        if (cpu_s >= 0) l.cost.phase_ended(l.returned_from_lend, entry_s - l.last_return_s, cpu_s - l.return_cpu_s);
    }
    std::array<double, slack_predictor::window> seen{};
    const std::span<const double> recent{seen.data(), process_calls().recent_slacks(row, seen)};
    const lending_wait without_cost = wait_before_lending(rule, recent);
    rule.lend_cost_s = l.cost.cost_s();
    l.lend_cost_s.store(rule.lend_cost_s, std::memory_order_relaxed);
    const lending_wait with_cost = wait_before_lending(rule, recent);
    if (without_cost.paid && without_cost.after_s < with_cost.after_s) {  // the cost alone holds the lend back
        if (l.cost.probe_instead_of_refusing()) return without_cost.after_s;
        l.refused_for_cost.fetch_add(1, std::memory_order_relaxed);
    }
    return with_cost.after_s;
}

wait_outcome lend_during(std::size_t row, int (*test)(void*, bool&), void* ctx) noexcept {
    lender& l = lender_state();
    const auto run_test = [&](bool& done) { return test(ctx, done); };
    if (!l.point_to_point || l.busy.exchange(true, std::memory_order_acquire)) {
        // Another thread's call lends (or nothing does): wait as the library would.
        return wait_politely(run_test, std::numeric_limits<double>::infinity(), std::nullopt, lend_link{});
    }
    const slack_board& board = process_board();
    const std::optional<double> predicted =
        board.known(row) ? std::optional<double>(board.predicted_s(row)) : std::nullopt;
    l.waits.fetch_add(1, std::memory_order_relaxed);
    runtime::send_idle_guests_home(false);  // guests on cores taken back leave them
    const double entry_s = l.clock_at(runtime::now_ticks());
    const double lend_after_s = wait_before_this_lend(l, row, entry_s);
    const wait_outcome out = wait_politely(run_test, lend_after_s, predicted, lend_link{&lend_now, nullptr, &nap_until_idle});
    const unsigned phase_cores = l.phase_cores;
    l.phase_cores = 0;
    // After the call: take the cores back (asking for more while it computes), or change the
    // standing request when the rule changed its mind. A wait that lends drops the request
    // (the daemon replaces it with the offer) and the take-back renews it.
    const unsigned spare = spare_now(l);
    const bool ask = spare > 0 && ask_after(l.rule);
    try {
        note_phase(l, row, entry_s, out.waited_s, phase_cores);
        note_step(l, row, entry_s, out, predicted, phase_cores);
        if (out.lent || phase_cores > 0) {
            if (out.lent) {
                l.lends.fetch_add(1, std::memory_order_relaxed);
                if (out.lent_at_entry) l.lends_at_entry.fetch_add(1, std::memory_order_relaxed);
                add(l.lent_s, out.waited_s);
            }
            if (client().want(ask ? spare : 0)) l.take_backs.fetch_add(1, std::memory_order_relaxed);
            l.asking = ask;
        } else if (ask != l.asking && client().in_lending_job()) {
            if (client().want(ask ? spare : 0)) l.asks.fetch_add(1, std::memory_order_relaxed);
            l.asking = ask;
        }
        lend_for_next_phase(l, row);
    } catch (...) {
    }
    l.last_return_s = l.clock_at(runtime::now_ticks());
    if (l.rule.mode == runtime::lend_mode::predictive) {
        // The thread CPU clock is a system call on a VM (0.4 us, against 0.02 us for the
        // monotonic one): two a wait were half of predictive's cost per call. Read it around
        // every lend, whose cost it measures, and around one kept wait in keep_sample_every
        // for the baseline; the next wait's entry reads it only after a return that did.
        const bool sample = out.lent || ++l.kept_unsampled >= keep_sample_every;
        if (sample) l.kept_unsampled = 0;
        l.return_cpu_s = sample ? runtime::thread_cpu_seconds() : -1;
        l.return_thread = &cpu_clock_thread;
        l.returned_from_lend = out.lent;
    }
    l.busy.store(false, std::memory_order_release);
    return out;
}

std::string lending_steps_json() {
    lender& l = lender_state();
    return l.steps.json_members();
}

std::string lending_trace_events(long pid, int rank) {
    return lender_state().steps.trace_events(pid, rank);
}

std::string lending_summary(int rank) {
    lender& l = lender_state();
    return l.steps.summary_text(rank, runtime::to_string(l.rule.mode).data());
}

lending_totals lending_statistics() noexcept {
    const lender& l = lender_state();
    lending_totals t;
    t.polite_waits = l.waits.load(std::memory_order_relaxed);
    t.lends = l.lends.load(std::memory_order_relaxed);
    t.lends_at_entry = l.lends_at_entry.load(std::memory_order_relaxed);
    t.lent_s = l.lent_s.load(std::memory_order_relaxed);
    t.asks = l.asks.load(std::memory_order_relaxed);
    t.take_backs = l.take_backs.load(std::memory_order_relaxed);
    t.phase_lends = l.phase_lends.load(std::memory_order_relaxed);
    t.phase_misses = l.phase_misses.load(std::memory_order_relaxed);
    t.phase_core_s = l.phase_core_s.load(std::memory_order_relaxed);
    t.lend_cost_s = l.lend_cost_s.load(std::memory_order_relaxed);
    t.refused_for_cost = l.refused_for_cost.load(std::memory_order_relaxed);
    t.idle_core_wakes = idle_core_watch::process().early_wakes();
    t.idle_core_watch = idle_core_watch::process().watching();
    t.mode = runtime::to_string(l.rule.mode).data();
    t.collectives = l.collectives;
    return t;
}

}  // namespace aloe::mpi

#include "mpi/rank_lending.hpp"

#include "coord/daemon_client.hpp"
#include "mpi/slack_board.hpp"
#include "runtime/borrowed_cores.hpp"
#include "runtime/config.hpp"
#include "runtime/local_ranks.hpp"
#include "runtime/report.hpp"
#include "runtime/team.hpp"

#include <aloe/team.hpp>

#include <atomic>
#include <mutex>
#include <string>

namespace aloe::mpi {
namespace {

struct lender {
    lending_settings rule;
    bool point_to_point = false;
    bool collectives = false;
    unsigned spare = 0;                    // cores this process could use beyond its share
    std::atomic<bool> busy{false};         // one polite wait at a time lends
    bool asking = false;                   // a request stands (under busy)
    std::atomic<std::uint64_t> waits{0}, lends{0}, asks{0}, take_backs{0};
    std::atomic<double> lent_s{0};
};

lender& lender_state() noexcept {
    static lender* const l = new lender;  // never destroyed: calls may come during exit
    return *l;
}

coord::daemon_client& client() { return coord::daemon_client::process(); }

bool lend_now(void*) noexcept {
    try {
        coord::daemon_client& c = client();
        const unsigned share = c.share();
        if (share == 0 || !c.in_lending_job()) {
            static std::atomic<bool> said{false};
            if (!said.exchange(true, std::memory_order_relaxed))
                runtime::report_once({runtime::report_level::info, runtime::report_category::mpi, "I604",
                                  "libaloe-mpi: a rank waited but could not lend its cores (" + c.describe() + ")",
                                  "waiting without lending until a daemon answers in this job"});
            return false;
        }
        return c.lend(share, /*whole=*/true);
    } catch (...) {
        return false;
    }
}

void add(std::atomic<double>& a, double v) noexcept {
    for (double old = a.load(std::memory_order_relaxed); !a.compare_exchange_weak(old, old + v, std::memory_order_relaxed);) {
    }
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
    // Collective on a duplicate: the job agrees (MAX: polite everywhere when anyone lends).
    MPI_Comm comm = MPI_COMM_NULL;
    int mine = l.point_to_point ? 1 : 0, any = mine;
    if (PMPI_Comm_dup(world, &comm) == MPI_SUCCESS) {
        PMPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
        if (PMPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS) any = 0;
        PMPI_Comm_free(&comm);
    } else {
        any = 0;
    }
    l.collectives = any != 0;
    if (!l.point_to_point) return;
    try {
        // Threads for borrowed cores: the interposer's regions' under `aloe run`, else the
        // process team's spare workers.
        const int registered = runtime::registered_borrowing_threads();
        l.spare = static_cast<unsigned>(registered >= 0 ? registered : aloe::team::global().workers().spare());
        coord::daemon_client& c = client();
        (void)c.threads(1);  // dials now: the hello's answer comes while the program starts
        c.poll_fast(true);
        runtime::report_once({runtime::report_level::info, runtime::report_category::mpi, "I603",
                              "libaloe-mpi: lending " + std::string(runtime::to_string(mode)) + ", " +
                                  std::to_string(local) + " ranks on this node, " + std::to_string(l.spare) +
                                  " spare workers for borrowed cores" +
                                  (l.collectives ? ", blocking collectives wait politely" : ""),
                              ""});
    } catch (...) {
        l.point_to_point = false;
    }
}

bool polite_point_to_point() noexcept { return lender_state().point_to_point; }
bool polite_collectives() noexcept { return lender_state().collectives; }

wait_outcome lend_during(std::size_t row, int (*test)(void*, bool&), void* ctx) noexcept {
    lender& l = lender_state();
    const auto run_test = [&](bool& done) { return test(ctx, done); };
    if (!l.point_to_point || l.busy.exchange(true, std::memory_order_acquire)) {
        // Another thread's call lends (or nothing does): wait as the library would.
        return wait_politely(run_test, lending_settings{}, std::nullopt, lend_link{});
    }
    const slack_board& board = process_board();
    const std::optional<double> predicted =
        board.known(row) ? std::optional<double>(board.predicted_s(row)) : std::nullopt;
    l.waits.fetch_add(1, std::memory_order_relaxed);
    const wait_outcome out = wait_politely(run_test, l.rule, predicted, lend_link{&lend_now, nullptr});
    // After the call: take the cores back (asking for more, when this rank is critical), or
    // change the standing request when the rule changed its mind.
    const bool ask = l.spare > 0 && ask_after(l.rule, predicted);
    try {
        if (out.lent) {
            l.lends.fetch_add(1, std::memory_order_relaxed);
            add(l.lent_s, out.waited_s);
            if (client().want(ask ? l.spare : 0)) l.take_backs.fetch_add(1, std::memory_order_relaxed);
            l.asking = ask;
        } else if (ask != l.asking && client().in_lending_job()) {
            if (client().want(ask ? l.spare : 0)) l.asks.fetch_add(1, std::memory_order_relaxed);
            l.asking = ask;
        }
    } catch (...) {
    }
    l.busy.store(false, std::memory_order_release);
    return out;
}

lending_totals lending_statistics() noexcept {
    const lender& l = lender_state();
    lending_totals t;
    t.polite_waits = l.waits.load(std::memory_order_relaxed);
    t.lends = l.lends.load(std::memory_order_relaxed);
    t.lent_s = l.lent_s.load(std::memory_order_relaxed);
    t.asks = l.asks.load(std::memory_order_relaxed);
    t.take_backs = l.take_backs.load(std::memory_order_relaxed);
    t.mode = runtime::to_string(l.rule.mode).data();
    t.collectives = l.collectives;
    return t;
}

}  // namespace aloe::mpi

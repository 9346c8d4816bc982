// The `node-share` policy kinds: the node daemon's allocation, applied to every loop aloe
// runs and every OpenMP region under `aloe run` (policy_chain.hpp). A link caps the plan's
// thread count at the process's allocation (daemon_client.hpp); it never raises it above
// what the program would use alone. It also measures the site's efficiency (serial samples
// and run times, efficiency_meter.hpp; instruction counts where the machine has them,
// instruction_counter.hpp) and sends the process's report when one is due.
//
// Two kinds, one per scope, so that each costs only where it acts:
// - loops (aloe's own): a kind every loop site consults makes each loop take its site's
//   chain (a lock and a plan, well under a microsecond) and stops the interposer batching
//   its taken loops' statistics. So it is registered when the library loads only if a
//   daemon's socket is there (or ALOE_DAEMON=on), and in ALOE_DAEMON=auto it leaves again
//   as soon as the first look finds no daemon answering. An aloe-native program started
//   before its daemon therefore does not join it (docs/daemon.md).
// - tasks (aloe's task pool): no chain plans them, so the pool asks a share source
//   (runtime/thread_share.hpp) installed here with the loop kind, at every round of a thread
//   waiting for tasks, and lets only that many slots run tasks. Task programs report no
//   efficiency (no run to time): the daemon counts them as an average client.
// - regions (the interposer): every region watches for a daemon with a clock read
//   (watch_daemon_for_regions: a program under `aloe run` joins a daemon started after it
//   within a second) and the region kind is in the chains only while one is joined: a
//   chain plan and observe cost about 150 ns a region, a tenth of a small region's fork
//   and join, and EPCC's PARALLEL overhead would show it. In such a process the loop kind
//   is dropped: its OpenMP loops run on their region's team, whose size the region kind
//   already set.
#include "coord/daemon_client.hpp"
#include "coord/efficiency_meter.hpp"
#include "coord/instruction_counter.hpp"
#include "coord/node_share_policy.hpp"
#include "loop/participant_limit.hpp"
#include "loop/policy_chain.hpp"
#include "runtime/borrowed_cores.hpp"
#include "runtime/clock.hpp"
#include "runtime/config.hpp"
#include "runtime/thread_share.hpp"
#include "coord/daemon_address.hpp"

#include <atomic>
#include <optional>
#include <string>
#include <unistd.h>

namespace aloe::coord {
namespace {

constinit std::atomic<bool> keep{false};           // set by the interposer
constinit std::atomic<bool> watching{false};       // regions watch for a daemon (the interposer, not off)
constinit std::atomic<bool> region_listed{false};  // the region kind is in the chains

bool applies(const loop::policy_site&) noexcept { return true; }

class node_share_link final : public loop::site_policy {
public:
    explicit node_share_link(loop::policy_scope scope) : scope_(scope) {}
    std::string_view name() const noexcept override { return "node-share"; }
    bool serves(const schedule*) const noexcept override { return true; }

    void plan(std::uint64_t, loop::loop_plan& p) override;
    void observe(const loop::loop_outcome& outcome) override;
    policy_status status() const override {
        policy_status s;
        s.name = "node-share";
        s.state = acting_ ? policy_state::acting : policy_state::idle;
        s.choice = acting_ ? "threads=" + std::to_string(last_) + (sampling_ ? " (serial sample)" : "") : "";
        s.threads = last_;
        return s;
    }

private:
    daemon_client& client() const {
        return daemon_client::process(scope_ == loop::policy_scope::region ? client_interposed : client_native);
    }

    loop::policy_scope scope_;
    bool acting_ = false;
    bool sampling_ = false;
    int last_ = 0;
    unsigned limit_changes_ = 0;  // participant_limit_changes() at plan
    site_efficiency efficiency_;
    site_instruction_rates rates_;
    std::optional<instruction_measure::start> counted_;  // this run's counter reading
};

std::unique_ptr<loop::site_policy> make(const loop::policy_site& site) {
    return std::make_unique<node_share_link>(site.scope);
}

constexpr loop::policy_kind loop_kind{"node-share", &applies, &make, nullptr, /*adaptive_only=*/false,
                                      /*slack_sites=*/false, /*scopes=*/1};
constexpr loop::policy_kind region_kind{"node-share", &applies, &make, nullptr, /*adaptive_only=*/false,
                                        /*slack_sites=*/false, /*scopes=*/2};

// The task pool's share (runtime/thread_share.hpp): asked by threads waiting for tasks. As
// the loop kind, it stops asking in ALOE_DAEMON=auto once the first look finds no daemon.
unsigned task_share(unsigned own) noexcept {
    try {
        daemon_client& c = daemon_client::process(client_native);
        const unsigned share = c.threads(own);
        if (!c.allocated() && !c.connected() && !keep.load(std::memory_order_relaxed) &&
            runtime::current_config().daemon == runtime::daemon_mode::automatic)
            runtime::set_thread_share_source(nullptr);
        return share;
    } catch (...) {  // no memory for the client: the program's own count
        return own;
    }
}

bool switched_off() {
    const auto mode = runtime::process_environment()("ALOE_DAEMON");
    return mode && (*mode == "off" || *mode == "OFF" || *mode == "Off");
}

void node_share_link::plan(std::uint64_t, loop::loop_plan& p) {
    daemon_client& c = client();
    const unsigned own = static_cast<unsigned>(std::max(p.threads, 1));
    const unsigned allowed = c.threads(own);
    limit_changes_ = loop::participant_limit_changes();
    acting_ = c.allocated();
    if (allowed < own) p.threads = static_cast<int>(std::max(allowed, 1u));
    // A serial sample only while another program shares the node (alone, efficiency
    // decides nothing), and never under a link that is measuring its own choice.
    const double now = monotonic_seconds();
    // Never while borrowing: a sample would leave the lent cores idle.
    sampling_ = acting_ && c.clients() >= 2 && p.threads > 1 && !p.measuring && c.borrowed() == 0 &&
                efficiency_.wants_sample(now) && process_meter().may_sample(now);
    if (sampling_) p.threads = 1;
    last_ = p.threads;
    // Instruction counts where the counters open (the first try says which measure is used).
    counted_.reset();
    if (acting_ && c.clients() >= 2 && !p.measuring && process_instruction_measure().available())
        counted_ = process_instruction_measure().begin(p.threads <= 1, sampling_, monotonic_seconds());
    if (!c.allocated() && !c.connected() && !keep.load(std::memory_order_relaxed) &&
        runtime::current_config().daemon == runtime::daemon_mode::automatic)
        loop::unregister_policy_kind(&loop_kind);  // no daemon at the first look: stop paying for it
}

void node_share_link::observe(const loop::loop_outcome& outcome) {
    daemon_client& c = client();
    if (!c.connected() || outcome.join <= outcome.fork) return;
    const double seconds = static_cast<double>(runtime::ticks_to_ns(outcome.join - outcome.fork)) * 1e-9;
    // Work per iteration where it is counted (a site's runs may differ in length: a loop's
    // count, a region's worksharing loops, e.g. a multigrid level), else per run.
    const bool loop = scope_ == loop::policy_scope::loop;
    const bool counted = outcome.iterations > 0;
    const double units = counted ? static_cast<double>(outcome.iterations) : 1.0;
    const unsigned threads = loop && !outcome.records.empty() ? static_cast<unsigned>(outcome.records.size())
                                                               : static_cast<unsigned>(std::max(last_, 1));
    const double now = monotonic_seconds();
    if (sampling_) process_meter().sampled(seconds);  // its cost counts whatever happened
    // Participants left this run half-way (the share moved while it ran): its time belongs to
    // no one thread count, so it measures nothing.
    if (loop::participant_limit_changes() != limit_changes_) {
        counted_.reset();
        return;
    }
    std::optional<double> e = efficiency_.observe(threads, units, seconds, now);
    efficiency_measure measure = counted ? efficiency_measure::loop_progress : efficiency_measure::region_time;
    if (process_instruction_measure().now() == instruction_measure::state::available) {
        std::optional<double> rate;
        // A reading on the thread's counter speaks of a run on one thread only.
        if (counted_ && (counted_->thread != nullptr) == (threads <= 1))
            rate = process_instruction_measure().finish(*counted_, now);
        counted_.reset();
        e = rates_.observe(threads, rate);
        measure = efficiency_measure::instructions;
    }
    process_meter().add(e, seconds, threads, now);
    if (auto r = process_meter().take(now, measure)) c.report(*r);
}

// At load, from the environment alone: the rest of the configuration is read at first use
// (a program may still set its variables before its first loop).
struct install_at_load {
    install_at_load() {
        if (switched_off() || keep.load(std::memory_order_relaxed)) return;  // the interposer came first
        const auto env = runtime::process_environment();
        bool present = false;
        if (const auto mode = env("ALOE_DAEMON"); mode && (*mode == "on" || *mode == "ON" || *mode == "On")) present = true;
        for (const auto& a : client_addresses(env, ::geteuid())) present = present || daemon_may_listen(a.path);
        if (present) {
            runtime::note_daemon_socket_present();  // ALOE_LEND=auto: spares for borrowed cores
            loop::register_policy_kind(&loop_kind);
            runtime::set_thread_share_source(&task_share);
        }
    }
} const installer;

}  // namespace

void keep_node_share_policy() noexcept {
    keep.store(true, std::memory_order_relaxed);
    loop::unregister_policy_kind(&loop_kind);
    watching.store(!switched_off(), std::memory_order_relaxed);
}

void watch_daemon_for_regions(unsigned own) noexcept {
    if (!watching.load(std::memory_order_relaxed)) return;
    daemon_client& c = daemon_client::process(client_interposed);
    (void)c.threads(own);
    const bool joined = c.connected();
    bool listed = region_listed.load(std::memory_order_relaxed);
    if (joined == listed || !region_listed.compare_exchange_strong(listed, joined, std::memory_order_relaxed)) return;
    if (joined) loop::register_policy_kind(&region_kind);
    else loop::unregister_policy_kind(&region_kind);
}

}  // namespace aloe::coord

extern "C" {
ALOE_API extern const int aloe_coord_linked;
const int aloe_coord_linked = 1;
}

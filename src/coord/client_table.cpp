#include "coord/client_table.hpp"

#include "coord/speedup_model.hpp"

#include <algorithm>
#include <sched.h>

namespace aloe::coord {
namespace {

// Reports covering less parallel time than this say more about the timer than the program.
constexpr double least_parallel_seconds = 1e-3;

std::vector<int> affinity_of(pid_t pid) {
    std::vector<int> cpus;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(pid, sizeof set, &set) != 0) return cpus;  // gone: names nothing
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
        if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
    return cpus;
}

bool same_allocation(const allocation_message& a, const allocation_message& b) {
    return a.threads == b.threads && a.share == b.share && a.lent == b.lent && a.borrowed == b.borrowed &&
           a.cpu_base == b.cpu_base && a.cpu_mask == b.cpu_mask;
}

}  // namespace

client_table::client_table(unsigned cores, policy_id policy, unsigned chunk)
    : cpus_of_(&affinity_of), cores_(std::max(cores, 1u)), available_(std::max(cores, 1u)), chunk_(std::max(chunk, 1u)),
      policy_(policy) {}

client_record& client_table::add(int connection, pid_t pid, uid_t uid, const hello_message& hello,
                                 std::string name, double now) {
    remove(connection);
    client_record c;
    c.connection = connection;
    c.pid = pid;
    c.uid = uid;
    c.name = std::move(name);
    c.job = std::string(text_of(hello.job));
    c.flags = hello.flags;
    c.own_threads = std::max(hello.own_threads, 1u);
    c.joined = now;
    c.last_heard = now;
    clients_.push_back(std::move(c));
    return clients_.back();
}

bool client_table::report(int connection, const report_message& r, double now) {
    client_record* c = find(connection);
    if (c == nullptr) return false;
    c->last_heard = now;
    c->flags = r.flags;
    c->measure = r.measure;
    ++c->reports;
    if (r.measure == efficiency_measure::none || r.parallel_seconds < least_parallel_seconds) return true;
    const double recent = blended_efficiency(r.efficiency, r.parallel_seconds, r.serial_seconds, r.threads);
    // The first report is taken as it is: SCAF's prior of 0.5 takes about 3 RC (12 s) to
    // wash out, longer than many programs run; later ones are smoothed.
    if (c->slope <= 0) c->efficiency.restart(recent);
    else c->efficiency.update(recent, r.parallel_seconds + r.serial_seconds);
    c->slope = log_speedup_slope(c->efficiency.value(), r.threads, c->slope);
    return true;
}

bool client_table::remove(int connection) {
    const auto it = std::find_if(clients_.begin(), clients_.end(),
                                 [&](const client_record& c) { return c.connection == connection; });
    if (it == clients_.end()) return false;
    clients_.erase(it);
    return true;
}

client_record* client_table::find(int connection) {
    for (auto& c : clients_)
        if (c.connection == connection) return &c;
    return nullptr;
}

client_record* client_table::find_pid(pid_t pid) {
    for (auto& c : clients_)
        if (c.pid == pid) return &c;
    return nullptr;
}

void client_table::offer(client_record& c, const offer_message& m, double now) {
    c.offered = m.cores;
    c.offered_whole = (m.flags & offer_whole) != 0;
    c.offer_ends = m.milliseconds > 0 ? now + m.milliseconds / 1000.0 : offer_no_end;
    c.requested = 0;
}

void client_table::request(client_record& c, const request_message& m) {
    c.requested = m.cores;
    c.offered = 0;
    c.offered_whole = false;
    c.offer_ends = offer_no_end;
}

bool client_table::expire(double now) {
    bool any = false;
    for (auto& c : clients_)
        if (c.offered > 0 && now >= c.offer_ends) {
            c.offered = 0;
            c.offered_whole = false;
            c.offer_ends = offer_no_end;
            any = true;
        }
    return any;
}

double client_table::next_offer_end() const {
    double first = offer_no_end;
    for (const auto& c : clients_)
        if (c.offered > 0) first = std::min(first, c.offer_ends);
    return first;
}

void senders_last(std::vector<allocation_update>& updates, const std::vector<int>& senders) {
    std::stable_partition(updates.begin(), updates.end(), [&](const allocation_update& u) {
        return std::find(senders.begin(), senders.end(), u.connection) == senders.end();
    });
}

std::vector<allocation_update> client_table::rebalance(bool everyone, double now) {
    std::vector<client_view> views;
    views.reserve(clients_.size());
    for (const auto& c : clients_) {
        // A non-malleable client keeps its own thread count; it is confined to its share
        // of CPUs by affinity, so its share still comes from the policy, capped the same.
        unsigned limit = c.own_threads;
        if (c.cap > 0) limit = std::min(limit, c.cap);
        views.push_back({c.slope, limit});
    }
    const allocation_result result = allocate(policy_, views, available_, chunk_);
    oversubscribed_ = result.oversubscribed;
    std::vector<lending_view> lending;
    lending.reserve(clients_.size());
    for (std::size_t i = 0; i < clients_.size(); ++i) {
        client_record& c = clients_[i];
        c.share = std::max(result.threads[i], 1u);
        // A request names what the rank can run beyond its share (its spare workers for
        // borrowed cores, runtime/borrowed_cores.hpp): more than its own count, never more
        // than the user's cap.
        lending.push_back({c.pid, c.uid, c.job, c.share, c.cap, c.offered, c.offer_ends, c.requested, c.offered_whole});
    }
    const lending_result lent = lend_cores(lending, now);
    for (std::size_t i = 0; i < clients_.size(); ++i) {
        client_record& c = clients_[i];
        c.lent = lent.lent[i];
        c.borrowed = lent.borrowed[i];
        c.allocated = std::max(lent.threads[i], 1u);
    }
    name_borrowed_cpus(lent);
    std::vector<allocation_update> changed;
    for (client_record& c : clients_) {
        const allocation_message m = allocation_for(c);
        if (!everyone && same_allocation(m, c.sent)) continue;
        c.sent = m;
        changed.push_back({c.connection, m});
    }
    return changed;
}

// A borrower's extra threads should run on its lenders' cores, not on its own (a rank bound
// to one core would otherwise stack them there): each transfer names that many of the
// lender's CPUs that the borrower may not already use and no other borrower got this round,
// from the end of the lender's mask: a rank that lends part of its share keeps running on
// its first CPUs, where its workers are placed first (runtime/topology.hpp).
// Unbound ranks (every CPU in every mask) name none: the kernel places those threads.
void client_table::name_borrowed_cpus(const lending_result& lent) {
    for (client_record& c : clients_) c.borrowed_cpus.clear();
    if (lent.transfers.empty()) return;
    std::vector<std::optional<std::vector<int>>> masks(clients_.size());
    const auto mask_of = [&](std::size_t i) -> const std::vector<int>& {
        if (!masks[i]) masks[i] = cpus_of_ ? cpus_of_(clients_[i].pid) : std::vector<int>{};
        return *masks[i];
    };
    std::vector<int> given;
    for (const lending_transfer& t : lent.transfers) {
        const std::vector<int>& own = mask_of(t.borrower);
        std::vector<int>& to = clients_[t.borrower].borrowed_cpus;
        unsigned left = t.cores;
        const std::vector<int>& lender = mask_of(t.lender);
        for (auto at = lender.rbegin(); at != lender.rend(); ++at) {
            const int cpu = *at;
            if (left == 0) break;
            if (std::find(own.begin(), own.end(), cpu) != own.end()) continue;
            if (std::find(given.begin(), given.end(), cpu) != given.end()) continue;
            to.push_back(cpu);
            given.push_back(cpu);
            --left;
        }
    }
    for (client_record& c : clients_) std::sort(c.borrowed_cpus.begin(), c.borrowed_cpus.end());
}

allocation_message client_table::allocation_for(const client_record& c) const {
    allocation_message m;
    m.threads = std::max(c.allocated, 1u);
    m.clients = static_cast<std::uint32_t>(clients_.size());
    m.available = available_;
    m.policy = policy_;
    m.flags = 0;
    if (clients_.size() == 1) m.flags |= allocation_alone;
    if (oversubscribed_) m.flags |= allocation_oversubscribed;
    m.share = c.share;
    m.lent = c.lent;
    m.borrowed = c.borrowed;
    // One window of 64 CPUs from the lowest named (a job's ranks on one node sit close);
    // CPUs beyond it are left to the kernel.
    if (!c.borrowed_cpus.empty()) {
        m.cpu_base = static_cast<std::uint32_t>(c.borrowed_cpus.front());
        for (const int cpu : c.borrowed_cpus)
            if (static_cast<std::uint32_t>(cpu) - m.cpu_base < 64) m.cpu_mask |= std::uint64_t{1} << (cpu - static_cast<int>(m.cpu_base));
    }
    return m;
}

}  // namespace aloe::coord

#include "mpi/call_table.hpp"

#include <algorithm>
#include <mutex>

namespace aloe::mpi {

std::size_t call_table::find(const call_path& path) noexcept {
    const std::uint64_t key = path_key(path);
    std::size_t i = static_cast<std::size_t>(key >> 40) & (capacity - 1);
    for (std::size_t probes = 0; probes < max_probes; ++probes, i = (i + 1) & (capacity - 1)) {
        slot& s = slots_[i];
        std::uint64_t seen = s.key.load(std::memory_order_acquire);
        if (seen == 0 && s.key.compare_exchange_strong(seen, key, std::memory_order_acq_rel)) {
            s.path = path;
            s.ready.store(true, std::memory_order_release);
            return i;
        }
        if (seen == key) return i;
    }
    return capacity + static_cast<std::size_t>(path.call);
}

std::uint64_t call_table::swap_entry(std::size_t index, std::uint64_t now) noexcept {
    return slots_[index].last_entry.exchange(now, std::memory_order_relaxed);
}

recorded call_table::record(std::size_t index, mpi_call call, const invocation& inv) noexcept {
    slot& s = slots_[index];
    type_state& t = types_[static_cast<std::size_t>(call)];
    const double naive_s = naive();
    std::lock_guard lock(s.lock);
    if (!s.seeded) {
        s.predictor = slack_predictor(naive_s);
        s.seeded = true;
    }
    ++s.calls;
    s.inside_s += inv.inside_s;
    s.max_s = std::max(s.max_s, inv.inside_s);
    // MPI_Init and MPI_Finalize wait for no rank's work: timed, never slack, never predicted.
    if (cost_class_of(call) == cost_class::none) return {0, 0};
    s.least_inside_s = std::min(s.least_inside_s, inv.inside_s);
    const double slack = slack_of(inv.inside_s, inv.model_cost_s, s.least_inside_s);
    s.slack_s += slack;
    s.cost_s += inv.inside_s - slack;
    {
        std::lock_guard type_lock(t.lock);
        const double type_prediction = t.seeded ? t.last_s : naive_s;
        s.type_last.add(type_prediction, slack, inv.since_previous_s);
        t.error.add(type_prediction, slack, 0);
        t.last_s = slack;
        t.seeded = true;
    }
    s.naive.add(naive_s, slack, inv.since_previous_s);
    s.predictor.observe(slack, inv.since_previous_s);
    return {slack, s.predictor.predict_median()};
}

std::size_t call_table::recent_slacks(std::size_t index, std::span<double, slack_predictor::window> out) const noexcept {
    const slot& s = slots_[index];
    std::lock_guard lock(s.lock);
    const std::span<const double> seen = s.predictor.recent();
    std::copy(seen.begin(), seen.end(), out.begin());
    return seen.size();
}

call_path call_table::path_of(std::size_t index) const noexcept {
    if (index >= capacity) return {static_cast<mpi_call>(index - capacity), nullptr, 0};
    return slots_[index].ready.load(std::memory_order_acquire) ? slots_[index].path : call_path{};
}

std::vector<call_site_record> call_table::rows() const {
    std::vector<call_site_record> out;
    for (std::size_t i = 0; i < rows_total; ++i) {
        const slot& s = slots_[i];
        call_path path;
        if (i < capacity) {
            if (!s.ready.load(std::memory_order_acquire)) continue;
            path = s.path;
        } else {
            path.call = static_cast<mpi_call>(i - capacity);
        }
        std::lock_guard lock(s.lock);
        if (s.calls == 0) continue;
        out.push_back({path, s.calls, s.inside_s, s.max_s, s.slack_s, s.cost_s, s.predictor.error_of_last(),
                       s.predictor.error_of_median(), s.type_last, s.naive, s.predictor.changes()});
    }
    return out;
}

std::vector<std::pair<mpi_call, prediction_error>> call_table::type_errors() const {
    std::vector<std::pair<mpi_call, prediction_error>> out;
    for (int c = 0; c < mpi_call_count; ++c) {
        const type_state& t = types_[static_cast<std::size_t>(c)];
        std::lock_guard lock(t.lock);
        if (t.error.predictions > 0) out.emplace_back(static_cast<mpi_call>(c), t.error);
    }
    return out;
}

void call_table::clear() noexcept {
    for (slot& s : slots_) {
        std::lock_guard lock(s.lock);
        s.key.store(0, std::memory_order_relaxed);
        s.ready.store(false, std::memory_order_relaxed);
        s.last_entry.store(0, std::memory_order_relaxed);
        s.path = {};
        s.calls = 0;
        s.inside_s = s.max_s = s.slack_s = s.cost_s = 0;
        s.least_inside_s = 1e300;
        s.seeded = false;
        s.predictor = slack_predictor();
        s.type_last = s.naive = {};
    }
    for (type_state& t : types_) {
        std::lock_guard lock(t.lock);
        t.seeded = false;
        t.last_s = 0;
        t.error = {};
    }
    naive_s_.store(0, std::memory_order_relaxed);
}

call_table& process_calls() noexcept {
    static call_table* const table = new call_table;
    return *table;
}

}  // namespace aloe::mpi

#include "mpi/slack_board.hpp"

namespace aloe::mpi {

std::uint64_t slack_board::call_begins(std::size_t row) noexcept {
    const std::uint64_t ordinal = next_.fetch_add(1, std::memory_order_acq_rel);
    begun& b = begun_[ordinal % ring];
    b.ordinal_plus_1.store(0, std::memory_order_relaxed);  // torn while the row changes
    b.row.store(static_cast<std::uint32_t>(row), std::memory_order_relaxed);
    b.ordinal_plus_1.store(ordinal + 1, std::memory_order_release);
    return ordinal;
}

void slack_board::call_ended(std::size_t row, double predicted_next_s, double slack_s) noexcept {
    path_slack& p = paths_[row];
    p.predicted_s.store(predicted_next_s, std::memory_order_relaxed);
    p.last_s.store(slack_s, std::memory_order_relaxed);
    p.known.store(true, std::memory_order_release);
}

std::optional<std::size_t> slack_board::row_of(std::uint64_t ordinal) const noexcept {
    const begun& b = begun_[ordinal % ring];
    if (b.ordinal_plus_1.load(std::memory_order_acquire) != ordinal + 1) return std::nullopt;
    const std::size_t row = b.row.load(std::memory_order_relaxed);
    // Still the same call after reading its row (a writer a whole ring later changes both).
    if (b.ordinal_plus_1.load(std::memory_order_acquire) != ordinal + 1) return std::nullopt;
    return row;
}

double slack_board::predicted_s(std::size_t row) const noexcept {
    return paths_[row].predicted_s.load(std::memory_order_relaxed);
}
double slack_board::last_slack_s(std::size_t row) const noexcept {
    return paths_[row].last_s.load(std::memory_order_relaxed);
}
bool slack_board::known(std::size_t row) const noexcept { return paths_[row].known.load(std::memory_order_acquire); }

void slack_board::loop_ran(std::uint64_t ordinal, double seconds) noexcept {
    std::lock_guard lock(gaps_mutex_);
    gap& g = gaps_[ordinal % ring];
    if (g.ordinal_plus_1 != ordinal + 1) g = {ordinal + 1, 0};
    g.loops_s += seconds;
}

double slack_board::loops_in_gap(std::uint64_t ordinal) const noexcept {
    std::lock_guard lock(gaps_mutex_);
    const gap& g = gaps_[ordinal % ring];
    return g.ordinal_plus_1 == ordinal + 1 ? g.loops_s : 0;
}

void slack_board::clear() noexcept {
    next_.store(0, std::memory_order_relaxed);
    for (begun& b : begun_) b.ordinal_plus_1.store(0, std::memory_order_relaxed);
    for (path_slack& p : paths_) {
        p.predicted_s.store(0, std::memory_order_relaxed);
        p.last_s.store(0, std::memory_order_relaxed);
        p.known.store(false, std::memory_order_relaxed);
    }
    std::lock_guard lock(gaps_mutex_);
    gaps_.fill({});
}

slack_board& process_board() noexcept {
    static slack_board* const board = new slack_board;
    return *board;
}

}  // namespace aloe::mpi

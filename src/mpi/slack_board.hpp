// Where the MPI layer's slack meets the loops (issue 15, item 3). Every outermost intercepted
// call takes the next ordinal of the process; a loop that ends notes the ordinal the next
// call will take, so at its next invocation it can ask which call followed it (its gap's
// call) and what slack that call's path is predicted to have next. Loops that share a gap
// share its slack by their time (each adds its length to the gap's total).
//
// Process-wide, not per thread: in a code whose communication thread calls MPI while the
// team computes (jacobi3d-mpi's overlap mode), the call that follows a loop is on another
// thread. Lock-free for the MPI side; the gaps' loop totals take a mutex (loop joins only).
#pragma once

#include "mpi/call_table.hpp"

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>

namespace aloe::mpi {

class slack_board {
public:
    static constexpr std::size_t ring = 256;  // calls remembered: far more than a step makes

    /// At an outermost call's entry, with its path's row: the call's ordinal.
    std::uint64_t call_begins(std::size_t row) noexcept;
    /// After it: the path's prediction of its next slack, and the slack this call had.
    void call_ended(std::size_t row, double predicted_next_s, double slack_s) noexcept;

    /// The ordinal the next call will take.
    std::uint64_t next_ordinal() const noexcept { return next_.load(std::memory_order_acquire); }
    /// The row of call `ordinal`, while it is in the ring and has begun.
    std::optional<std::size_t> row_of(std::uint64_t ordinal) const noexcept;
    double predicted_s(std::size_t row) const noexcept;
    double last_slack_s(std::size_t row) const noexcept;
    /// Whether the path at `row` has completed at least once.
    bool known(std::size_t row) const noexcept;

    /// A loop of `seconds` ran in the gap before call `ordinal`.
    void loop_ran(std::uint64_t ordinal, double seconds) noexcept;
    /// The loops' total time in that gap (0 when it has left the ring).
    double loops_in_gap(std::uint64_t ordinal) const noexcept;

    void clear() noexcept;

private:
    struct begun {
        std::atomic<std::uint64_t> ordinal_plus_1{0};
        std::atomic<std::uint32_t> row{0};
    };
    struct gap {
        std::uint64_t ordinal_plus_1 = 0;
        double loops_s = 0;
    };
    struct path_slack {
        std::atomic<double> predicted_s{0};
        std::atomic<double> last_s{0};
        std::atomic<bool> known{false};
    };

    std::atomic<std::uint64_t> next_{0};
    std::array<begun, ring> begun_{};
    std::array<path_slack, call_table::rows_total> paths_{};
    mutable std::mutex gaps_mutex_;
    std::array<gap, ring> gaps_{};
};

/// The process's board (never destroyed).
slack_board& process_board() noexcept;

}  // namespace aloe::mpi

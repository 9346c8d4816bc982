// Time inside each intercepted MPI call and its slack, per call path (mpi/call_path.hpp).
// Finding a path's slot takes no lock and allocates nothing: a fixed open-addressing table
// whose slots are claimed with one compare-and-swap, so threads of an MPI_THREAD_MULTIPLE
// program record side by side. Past its capacity a call's paths share one overflow row per
// call. What a slot learns about slack (the cost floor, the predictors, their errors) sits
// behind a spin lock per slot, which only threads recording the same path can contend.
//
// Per invocation (record): slack = time inside − cost (communication_cost.hpp); then the
// predictions made before it are scored (the path's last value and median, the call type's
// last value, the naive constant), the path's and the type's predictors learn it, and the
// path's next prediction (the median's) is returned for the slack board.
#pragma once

#include "mpi/call_path.hpp"
#include "mpi/communication_cost.hpp"
#include "mpi/slack_prediction.hpp"
#include "runtime/spin_lock.hpp"

#include <array>
#include <atomic>
#include <cstdint>
#include <span>
#include <vector>

namespace aloe::mpi {

/// What one path's slot holds, as the statistics read it.
struct call_site_record {
    call_path path;  ///< site nullptr: the overflow row of `path.call`
    std::uint64_t calls = 0;
    double inside_s = 0;
    double max_s = 0;
    double slack_s = 0;  ///< sum of the invocations' slack
    double cost_s = 0;   ///< sum of the invocations' communication cost (inside − slack)
    prediction_error path_last, path_median, type_last, naive;
    std::uint64_t changes = 0;  ///< the median predictor's detected phase changes
};

/// One invocation, as the wrapper measured it.
struct invocation {
    double inside_s = 0;
    double since_previous_s = 0;  ///< from the previous invocation's entry at the path (0: first)
    double model_cost_s = 0;      ///< the calibrated cost of the call with its bytes
};

/// What record() learnt: this invocation's slack and the path's next prediction.
struct recorded {
    double slack_s = 0;
    double next_s = 0;
};

class call_table {
public:
    static constexpr std::size_t capacity = 1024;  // call paths; a program has tens
    static constexpr std::size_t max_probes = 32;
    static constexpr std::size_t rows_total = capacity + mpi_call_count;

    /// The slot of `path` (claimed on first sight), or its call's overflow row: an index
    /// below rows_total, stable for the process's life.
    std::size_t find(const call_path& path) noexcept;

    /// Records one invocation at slot `index`.
    recorded record(std::size_t index, mpi_call call, const invocation& inv) noexcept;

    /// Copies the path's last slacks (slack_predictor::recent) into `out`; returns how many.
    std::size_t recent_slacks(std::size_t index, std::span<double, slack_predictor::window> out) const noexcept;

    /// The entry time of the previous invocation at `index` (ticks; 0: none), replaced by `now`.
    std::uint64_t swap_entry(std::size_t index, std::uint64_t now) noexcept;

    /// The naive prediction (the calibration's mean slack): the score of the naive key and the
    /// seed of every path and type seen after it is set.
    void set_naive(double slack_s) noexcept { naive_s_.store(slack_s, std::memory_order_relaxed); }
    double naive() const noexcept { return naive_s_.load(std::memory_order_relaxed); }

    /// The path a row records (an overflow row: its call, no site).
    call_path path_of(std::size_t index) const noexcept;

    /// Every row with calls, in slot order, then the overflow rows.
    std::vector<call_site_record> rows() const;
    /// One row per call type with calls: the type key's own predictor (last value) and error.
    std::vector<std::pair<mpi_call, prediction_error>> type_errors() const;

    /// Back to empty (tests; a forked child).
    void clear() noexcept;

private:
    struct slot {
        std::atomic<std::uint64_t> key{0};  // 0: free; else path_key()
        std::atomic<bool> ready{false};     // path below written (after the claim)
        call_path path;
        std::atomic<std::uint64_t> last_entry{0};
        mutable runtime::spin_lock lock;    // guards what follows
        std::uint64_t calls = 0;
        double inside_s = 0, max_s = 0, slack_s = 0, cost_s = 0;
        double least_inside_s = 1e300;
        bool seeded = false;
        slack_predictor predictor;
        prediction_error type_last, naive;
    };
    struct type_state {  // the type key predicts its last value: no window to keep
        mutable runtime::spin_lock lock;  // taken inside a slot's lock, never the other way
        bool seeded = false;
        double last_s = 0;
        prediction_error error;
    };

    std::array<slot, rows_total> slots_{};  // [0, capacity): paths; then one overflow row per call
    std::array<type_state, mpi_call_count> types_{};
    std::atomic<double> naive_s_{0};
};

/// The process's table (never destroyed: calls may come from threads that outlive statics).
call_table& process_calls() noexcept;

}  // namespace aloe::mpi

// What lending did in each step of this rank (issue 19): the rank's own threads, the
// threads it used on average, the core-seconds it lent and borrowed, and its waits' actual
// and predicted slack. Fed by rank_lending.cpp at the end of every polite wait; read out as
// the `steps` of ALOE_MPI_STATS's `lending` object, as trace events under `aloe run
// --trace`, and as a few summary lines under `aloe run`.
//
// A step is the cycle between two waits of the first call path to recur: a time-stepping
// code's blocking calls recur once a step (a halo's Waitall, a residual's Allreduce), while
// its set-up calls (a Barrier after reading input) do not. A step runs from the end of one
// wait of that path to the end of the next; the waits before the first recurrence are no
// step's, and a code whose paths never recur has none.
//
// Times are CLOCK_MONOTONIC seconds: every process of the node shares that clock, so the
// trace's steps line up with the interposer's regions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace aloe::mpi {

/// One polite wait and the compute phase before it.
struct phase_sample {
    std::size_t path = 0;              ///< the wait's call-path row
    double phase_start_s = 0;          ///< the previous wait's end (this phase's start)
    double entry_s = 0;                ///< the wait's entry
    double end_s = 0;                  ///< the wait's end
    std::optional<double> predicted_s; ///< the wait's predicted slack, when its path had one
    double lent_core_s = 0;            ///< core-seconds lent during the phase and the wait
    double borrowed_total_core_s = 0;  ///< the process's borrowed core-seconds so far (a running total)
    unsigned own_threads = 1;          ///< the rank's own cores (its share)
};

struct lending_step {
    double start_s = 0;
    double seconds = 0;
    double compute_s = 0;
    double waited_s = 0;
    double predicted_s = -1;  ///< the waits' predicted slack summed; -1: none had a prediction
    double lent_core_s = 0;
    double borrowed_core_s = 0;
    unsigned own_threads = 1;
    unsigned waits = 0;

    /// Threads running the rank's work on average over the step: its own, less what it
    /// lent, plus what it borrowed.
    double threads_used() const noexcept {
        return seconds > 0 ? own_threads + (borrowed_core_s - lent_core_s) / seconds : own_threads;
    }
};

class lending_steps {
public:
    static constexpr std::size_t most_kept = 100'000;  ///< steps beyond are counted, not kept

    void add(const phase_sample& s);
    /// The steps completed so far (a step still open is not among them).
    const std::vector<lending_step>& steps() const noexcept { return steps_; }
    std::uint64_t dropped() const noexcept { return dropped_; }
    /// Steps completed, kept or not, and the last of them (valid when completed() > 0).
    std::uint64_t completed() const noexcept { return steps_.size() + dropped_; }
    const lending_step& last() const noexcept { return last_; }

    /// `"steps": [...], "steps_dropped": n` (members of the lending object).
    std::string json_members() const;
    /// Chrome trace events, comma-joined (no document around them): per step a slice on its
    /// own track of process `pid`, and counters of threads used, lent and borrowed.
    std::string trace_events(long pid, int rank) const;
    /// A few lines for `aloe run`'s summary: medians over the steps and the first and last
    /// steps (all of them are in the statistics).
    std::string summary_text(int rank, const char* mode) const;

private:
    std::optional<std::size_t> step_path_;
    std::vector<std::size_t> seen_;  // paths waited at before one recurred
    lending_step open_;
    lending_step last_;
    bool opened_ = false;
    double borrowed_at_open_ = 0;
    std::vector<lending_step> steps_;
    std::uint64_t dropped_ = 0;
};

}  // namespace aloe::mpi

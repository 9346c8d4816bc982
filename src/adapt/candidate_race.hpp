// Racing a few candidate schedules against each other on a loop's own invocations, judged
// by what the noise allows (issue 14). uSched's walk judged each fs by the mean of three
// invocations; inside the 10–40% spreads of a memory-bound loop under background load that
// picks at random (issue 4's matrix: up to 1.58× the best peer). Here:
//
// - Candidates run round robin, the one with the fewest samples first, so a disturbed
//   stretch of time hits all of them alike; within a round in an order drawn at random
//   (seeded), so periodic noise does not strike the same candidate every round.
// - Each keeps Welford's running mean and variance of its time per iteration (runs whose
//   trip counts differ pool; samples carried over from an earlier run pool too).
// - A candidate is out when its one-sided 95% confidence interval lies wholly above the
//   best one's (Student's t on the samples it has, its variance at least the relative
//   variance pooled over all candidates: two quiet samples do not make a narrow interval):
//   wide spreads need more samples before anything is dropped, narrow ones settle in a
//   round or two.
// - Before that, a candidate far behind goes at its second sample: its least time 15% above
//   the best least time (warming up and noise only add time; exploring one far slower costs
//   a whole invocation each time).
// - The race ends when one candidate is left, or when the budget of invocations is spent:
//   then the best mean among those still in wins ("could not separate"), which is the best
//   schedule seen so far.
// - After the end, every `recheck_every`-th invocation runs one of the others still in (and
//   any candidate added late, e.g. a fitted fs) in turn; one whose mean drops below the
//   winner's takes over. The cost is bounded by recheck_every: a candidate still in is
//   within the noise of the winner.
//
// Not thread-safe: the adaptive policy calls it under its site's mutex.
#pragma once

#include "adapt/site_memory.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace aloe::adapt {

/// Welford's running mean and variance.
struct running_stats {
    std::uint64_t n = 0;
    double mean = 0;
    double m2 = 0;
    double least = 0;  ///< least sample seen (0 when none)

    void add(double x) noexcept;
    double variance() const noexcept { return n > 1 ? m2 / static_cast<double>(n - 1) : 0.0; }
    /// Half-width of the one-sided 95% confidence interval of the mean (infinite below 2
    /// samples).
    double half_width() const noexcept;
};

/// One-sided 95% Student's t for `dof` degrees of freedom (≥ 1).
double student_t95(std::uint64_t dof) noexcept;

struct race_options {
    int budget = 18;         ///< invocations the race may take, counting carried-over samples
    int recheck_every = 10;  ///< after the race: one invocation in this many re-checks another
    double gross_gap = 0.15; ///< out at two samples: a least time this far above the best least time
};

class candidate_race {
public:
    enum class verdict { racing, separated, best_mean };

    struct entry {
        std::string name;
        running_stats stats;
        bool in = true;      ///< not eliminated
        bool late = false;   ///< added after the race ended
    };

    explicit candidate_race(std::vector<std::string> names, race_options options = {});

    /// The candidate the next invocation runs.
    int to_run() noexcept;
    /// The run of `index` took `per_iteration_s` per iteration.
    void observe(int index, double per_iteration_s);
    /// Adds a candidate (a fitted fs, say); it runs in the re-check slots. Returns its index,
    /// or that of the candidate of that name already in the race.
    int add(const std::string& name);

    bool decided() const noexcept { return verdict_ != verdict::racing; }
    verdict how() const noexcept { return verdict_; }
    int winner() const noexcept { return winner_; }
    /// Becomes true once after the winner changes through a re-check; reading clears it.
    bool take_winner_changed() noexcept;
    int samples_in_race() const noexcept { return spent_; }
    const std::vector<entry>& entries() const noexcept { return entries_; }
    int find(const std::string& name) const noexcept;

    /// For the next run of the program (site_memory.hpp), and back.
    std::vector<candidate_memory> remember() const;
    /// Carries samples over: candidates of the same name pool them; `was_decided` and `winner`
    /// (a name) restore a finished race.
    void recall(const std::vector<candidate_memory>& memory, bool was_decided, const std::string& winner);

private:
    int best_in() const noexcept;
    double pooled_relative_variance() const noexcept;
    double half_width(const running_stats& s, double pooled) const noexcept;
    void eliminate();
    void finish();

    std::vector<entry> entries_;
    race_options options_;
    verdict verdict_ = verdict::racing;
    int winner_ = -1;
    bool winner_changed_ = false;
    int spent_ = 0;               ///< samples taken while racing
    std::uint64_t since_end_ = 0; ///< invocations after the end, for the re-check slots
    std::size_t recheck_turn_ = 0;
    std::uint64_t draw_ = 0x9e3779b97f4a7c15u;  ///< xorshift state for the order within a round
};

}  // namespace aloe::adapt

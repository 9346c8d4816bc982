// Where a loop's work lies along its iteration space, learned from the times of its static
// blocks, and the split of the space into blocks of equal cost (the race's `replay`).
//
// The space [0, n) is seen as [0, 1) in bins of equal width, each with a cost density
// (seconds per unit of the space), so loops whose trip count changes between invocations
// (adaptive meshes) share one profile. A static run tells the time of each thread's block
// and nothing finer: every bin whose centre lies in a block is scaled by measured / modelled
// time of the block, which keeps the shape inside the block and fixes its total. As blocks
// move to balance, their edges cross bins already known, so the shape sharpens run by run
// (a ramp is balanced to 1% in three runs on two threads; the test measures it).
//
// Why not per-thread speeds (the first replay, issue 14): a thread's speed on its block
// depends on where the block lies, so weights set to speeds move towards balance only by
// halves and settle where a noise event left them; spmv and barnes-hut never got there in
// their budget. Per-chunk timing would give the shape at once, but costs a clock read per
// chunk on every run; block times come free with every static run.
//
// A slow core is folded in too: its block looks costlier, so it gets fewer iterations, as
// long as threads keep their order (they do: thread t always runs block t).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace aloe::adapt {

class cost_profile {
public:
    /// One measured block: [begin, end) as fractions of the space, and its busy seconds.
    struct block_time {
        double begin = 0;
        double end = 0;
        double seconds = 0;
    };

    /// The bins are allocated at the first observation: a site that never runs uneven static
    /// blocks holds none (a program may have thousands of adaptive sites).
    explicit cost_profile(std::size_t bins = 128) noexcept;

    /// Folds one static run in. The first three are taken whole; later ones move each bin by
    /// `step` of the way in log terms (a one-off noise event in a block moves it by half).
    void observe(std::span<const block_time> blocks, double step = 0.5);
    /// The profile whose equal-cost split is `weights` (uniform inside each block): what a
    /// tuning file recalls, before any run is seen.
    void assume_split(std::span<const double> weights);
    /// Shares of the space for `weights.size()` blocks of equal modelled cost, in order, as
    /// weights (summing to the block count; equal while nothing was observed).
    void split(std::span<double> weights) const;
    /// Max/mean of the modelled block costs for `weights` (1: balanced).
    double imbalance(std::span<const double> weights) const;
    bool known() const noexcept { return runs_ > 0; }
    std::size_t runs() const noexcept { return runs_; }

private:
    double cost_between(double begin, double end) const noexcept;
    void allocate();
    std::size_t bins_;
    std::vector<double> density_;  // empty until the first observation: uniform
    std::vector<double> factor_;   // observe's scratch (kept: no allocation per run)
    std::size_t runs_ = 0;
};

}  // namespace aloe::adapt

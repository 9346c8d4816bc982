// Whether threads on borrowed cores make a region site slower (issue 19), measured per site.
//
// A guest costs a region its wake-up on another core, the cross-core traffic, and, once the
// lender takes its core back, a share of that core; a team that synchronises inside its
// region (NAS LU-MZ's pipelined sweeps spin on each other's flags) stalls whenever the guest
// is descheduled. NAS's multi-zone codes run 80-140 regions a step, many of them 1.5-4 us with
// their one own thread, 12-230 us with a guest. Lending into them made the borrowing rank
// the late one, and on LU-MZ class W a trap followed: the lender waited 3 ms a step for it
// and lent every step (predictive took 1.58x the time of no lending). So each site keeps
// the time of its regions with guests and without (exponential averages, weight 1/32, over
// its calls: a site called on zones of different sizes mixes them alike in both; a region
// whose guest had to move to its core first is left out) and takes no guests while they
// make it more than `most_loss` slower. That is a loss, not a missing gain, and a long
// average: with guests a site's regions are mostly faster, but the one the lender's return
// stretches can take several times as long, so a site where guests pay overall
// (jacobi3d-mpi's, 0.9 ms a region) may average about the same with and without. A bar of a
// 3% gain, or weight 1/8, let those outliers refuse guests that paid (1:3, 20 regions a
// step: 0.98x and 1.07x of no lending, against 0.83-0.84x). NAS's sites are called hundreds
// of times a step, so they are judged within one. Every `probe_every`-th region refused takes
// guests anyway, so a site where they stopped costing is seen again. A site that has run only
// with guests runs every `probe_every`-th region without them: on BT-MZ a rank that lends
// from its first wait on (no prediction yet: the reactive rule) put guests into every region
// at the end of the borrower's step, whose own time was then never seen (in one run the
// borrower computed 13 ms a step, refused no region, against 9 ms a step without lending).
#pragma once

#include <atomic>
#include <cstdint>

namespace aloe::omp {

class guest_payoff {
public:
    static constexpr unsigned probe_every = 16;
    static constexpr double most_loss = 0.10;

    /// A region of this site ran `seconds` (fork to join), with guests or without.
    void region_ran(bool with_guests, double seconds) noexcept;

    /// Whether the next region takes guests (until both averages exist: always, or, once only
    /// regions with guests were seen, all but every probe_every-th). Counts refusals.
    bool take_guests() noexcept;

    double with_guests_s() const noexcept { return with_.load(std::memory_order_relaxed); }
    double without_guests_s() const noexcept { return without_.load(std::memory_order_relaxed); }
    std::uint64_t refused() const noexcept { return refused_.load(std::memory_order_relaxed); }

private:
    std::atomic<double> with_{-1};  // < 0: not seen yet
    std::atomic<double> without_{-1};
    std::atomic<std::uint64_t> considered_{0}, refused_{0};
};

}  // namespace aloe::omp

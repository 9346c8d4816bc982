// What a lend costs the lender (issue 19): the CPU time its thread did not get in the
// compute phase after it took its cores back, beyond what it does not get after a wait that
// kept them. A borrower's thread on a lent core leaves at its next chunk (aloe's loops) or
// at its region's end (OpenMP programs under `aloe run`, whose static share of a region
// cannot move), and until then the two share the core (bench/results/reclaim-bound-20261126:
// the guest stays 4.0-5.6 ms median on the lent CPU; the lender loses up to 1.0 ms median).
// Lending for less slack than the lender loses makes it the late rank, so the predictive
// rule lends only where the predicted slack exceeds `least_slack` plus this cost
// (lending_rule.hpp); DLB's LeWI has no such measure. (A sleeping lender wakes with the
// scheduler's favour, so the loss may fall on the guest instead: omp/guest_payoff.hpp.)
//
// Measured per phase as wall time minus the waiting thread's CPU time, averaged
// exponentially (weight 1/4) apart for phases after a lend and after a kept wait. A lend the
// cost refuses goes ahead every `probe_every`-th time, so a cost that fell is seen again.
// MPI-free: the tests feed it phases.
#pragma once

#include <cstdint>

namespace aloe::mpi {

class lend_cost {
public:
    static constexpr unsigned probe_every = 16;

    /// A compute phase ended: `wall_s` long, `cpu_s` of it on the CPU, after a wait that
    /// lent (`after_lend`) or kept its cores.
    void phase_ended(bool after_lend, double wall_s, double cpu_s) noexcept;

    /// The extra time a lend costs the lender's next phase (0 until a phase after a lend was seen).
    double cost_s() const noexcept;

    /// A lend the cost refuses: whether it goes ahead anyway to measure the cost again
    /// (every probe_every-th time). Counts the lends refused.
    bool probe_instead_of_refusing() noexcept;
    std::uint64_t refused() const noexcept { return refused_; }

private:
    double after_lend_s_ = -1;  // < 0: no phase seen yet
    double after_keep_s_ = -1;
    std::uint64_t considered_ = 0;
    std::uint64_t refused_ = 0;
};

}  // namespace aloe::mpi

// Whether a thread on a borrowed core pays for itself in an OpenMP region (issue 19).
//
// A region's static share of iterations cannot move: a thread that joins a region on a core
// another rank lent keeps its share to the region's end, and once the lender takes the core
// back the two share it, so the region's end waits for the guest. With `own` threads at full
// speed and one guest that gets a fraction e of its core, the region takes W/(own+1)/e
// against W/own without it: the guest pays only when e > own/(own+1) (1/2 for one own
// thread, 4/5 for four). The guests measure e (CPU time over the wall time of their seat,
// averaged with weight 1/4); a region takes guests only while the average is above that
// bound, and every `probe_every`-th region it refuses takes them anyway, so a program whose
// lends grew longer takes them again. DLB's LeWI adds the threads whatever they get. The process team's spare workers (aloe's own loops) do not
// ask: they take chunks, so a slow guest takes fewer of them and delays no one by more than one.
#pragma once

#include <atomic>
#include <cstdint>

namespace aloe::runtime {

class guest_efficiency {
public:
    static constexpr unsigned probe_every = 16;
    static constexpr double shortest_seat_s = 50e-6;  ///< shorter seats say nothing (clock granularity)

    /// A guest left its borrowed core: `wall_s` seated, `cpu_s` of it running. Thread-safe.
    void seat_ended(double wall_s, double cpu_s) noexcept;

    /// The average fraction of their core the guests got; < 0 before the first seat.
    double average() const noexcept { return average_.load(std::memory_order_relaxed); }

    /// Whether a region of `own` threads takes guests now (counts the regions refused).
    bool worth_a_guest(int own) noexcept;
    std::uint64_t refused() const noexcept { return refused_.load(std::memory_order_relaxed); }
    /// A region another guard kept without guests (omp/guest_payoff.hpp: they made its site
    /// slower): counted with these, as `regions_without_guests` in the statistics.
    void note_kept_without_guests() noexcept { refused_.fetch_add(1, std::memory_order_relaxed); }

private:
    std::atomic<double> average_{-1};
    std::atomic<std::uint64_t> considered_{0}, refused_{0};
};

/// The process's guests (omp/team_region.cpp feeds and asks it; libaloe-mpi reports it).
guest_efficiency& process_guest_efficiency() noexcept;

}  // namespace aloe::runtime

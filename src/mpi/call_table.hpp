// Time inside each intercepted MPI call, per call and call site (the wrapper's return
// address: where the program called MPI). Recording takes no lock and allocates nothing:
// a fixed open-addressing table whose slots are claimed with one compare-and-swap, then
// counted with relaxed atomic adds, so threads of an MPI_THREAD_MULTIPLE program record
// side by side. Past its capacity a call's records share one overflow row per call.
#pragma once

#include "mpi/intercepted_calls.hpp"

#include <array>
#include <atomic>
#include <cstdint>
#include <vector>

namespace aloe::mpi {

struct call_site_record {
    mpi_call call{};
    const void* site = nullptr;  ///< nullptr: the overflow row of `call`
    std::uint64_t calls = 0;
    std::uint64_t inside_ticks = 0;  ///< runtime/clock.hpp ticks: converted when reported
    std::uint64_t max_ticks = 0;
};

class call_table {
public:
    static constexpr std::size_t capacity = 1024;  // call sites; a program has tens
    static constexpr std::size_t max_probes = 32;

    void record(mpi_call call, const void* site, std::uint64_t inside_ticks) noexcept;

    /// Every row with calls, in slot order, then the overflow rows.
    std::vector<call_site_record> rows() const;

    /// Back to empty (tests; a forked child).
    void clear() noexcept;

private:
    struct slot {
        std::atomic<std::uint64_t> key{0};  // 0: free; else the site with the call in the top byte
        std::atomic<std::uint64_t> calls{0};
        std::atomic<std::uint64_t> inside_ticks{0};
        std::atomic<std::uint64_t> max_ticks{0};
    };
    static void add(slot& s, std::uint64_t inside_ticks) noexcept;

    std::array<slot, capacity> slots_{};
    std::array<slot, mpi_call_count> overflow_{};
};

/// The process's table (never destroyed: calls may come from threads that outlive statics).
call_table& process_calls() noexcept;

}  // namespace aloe::mpi

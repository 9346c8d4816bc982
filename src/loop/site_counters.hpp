// A loop site's counters in the registry (runtime/counters.hpp), HPX-style:
// `/loop{site#N}/parallel-runs`, `…/iterations`, `…/chunks`, `…/steals`, `…/time` (fork to
// join), `…/time/busy` and `…/time/wait` (summed over the participants), where N is the site
// record's index (site_registry.hpp): bounded like the records, and site_stats::counters
// says which instance a site has. A record given to another site keeps its counters; a
// reader made for the new site starts from their values then (counter_reader's baseline).
// Registered at the record's first plan or parallel run, added to by the thread that
// commits each run (one add per counter, in its own block), read by anyone: the statistics,
// a policy's counter_reader (policy_chain.hpp: loop_outcome::counters), a printer.
#pragma once

#include "runtime/counters.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace aloe::loop {

struct site_counters {
    runtime::counter_handle runs, iterations, chunks, steals, time, busy, wait;
    std::string instance;  ///< empty until registered

    /// Under the site's mutex, once per record (instance `site#<record>`). A full registry
    /// leaves the handles disabled (adds dropped) and says so once (W304).
    void register_for(std::uint32_t record);
    /// Runs' sums over their participants (loop_stats.cpp's count_loop and count_runs make them).
    struct run_totals {
        std::uint64_t runs = 1;
        std::uint64_t iterations = 0, chunks = 0, steals = 0, busy_ns = 0, wait_ns = 0, time_ns = 0;
    };
    void add_run(const run_totals& t) const noexcept;
};

}  // namespace aloe::loop

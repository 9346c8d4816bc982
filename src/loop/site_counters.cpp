#include "loop/site_counters.hpp"

#include "runtime/report.hpp"

namespace aloe::loop {

void site_counters::register_for(std::uint32_t record) {
    instance = "site#" + std::to_string(record);
    using runtime::register_counter;
    using unit = aloe::counter_unit;
    try {
        runs = register_counter({"loop", "parallel-runs", unit::count, "runs of the site on more than one thread", instance});
        iterations = register_counter({"loop", "iterations", unit::count, "iterations of its parallel runs", instance});
        chunks = register_counter({"loop", "chunks", unit::count, "dynamic chunks taken", instance});
        steals = register_counter({"loop", "steals", unit::count, "chunks taken from another thread's share", instance});
        time = register_counter({"loop", "time", unit::nanoseconds, "fork to join, summed over runs", instance});
        busy = register_counter({"loop", "time/busy", unit::nanoseconds, "participants' busy time, summed", instance});
        wait = register_counter({"loop", "time/wait", unit::nanoseconds, "participants' wait for the last one, summed", instance});
    } catch (const std::exception& e) {
        runtime::report_once({runtime::report_level::warning, runtime::report_category::loop, "W304",
                              std::string("cannot register a loop site's counters: ") + e.what(),
                              "that site's counts are not kept"});
    }
}

void site_counters::add_run(const run_totals& t) const noexcept {
    runs.add(t.runs);
    iterations.add(t.iterations);
    chunks.add(t.chunks);
    steals.add(t.steals);
    time.add(t.time_ns);
    busy.add(t.busy_ns);
    wait.add(t.wait_ns);
}

}  // namespace aloe::loop

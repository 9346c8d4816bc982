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

void site_counters::add_run(std::span<const worker_record> records, runtime::ticks t0, runtime::ticks t1) const noexcept {
    std::uint64_t its = 0, chs = 0, sts = 0;
    runtime::ticks busy_t = 0, wait_t = 0;
    for (const worker_record& r : records) {
        its += r.static_iterations + r.dynamic_iterations;
        chs += r.chunks;
        sts += r.steals;
        if (r.end > r.start) busy_t += r.end - r.start;
        if (t1 > r.end) wait_t += t1 - r.end;
    }
    runs.add(1);
    iterations.add(its);
    chunks.add(chs);
    steals.add(sts);
    time.add(runtime::ticks_to_ns(t1 > t0 ? t1 - t0 : 0));
    busy.add(runtime::ticks_to_ns(busy_t));
    wait.add(runtime::ticks_to_ns(wait_t));
}

}  // namespace aloe::loop

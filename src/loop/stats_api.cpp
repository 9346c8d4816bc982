// The public statistics functions of include/aloe/stats.hpp.
#include "loop/loop_stats.hpp"
#include "loop/site_registry.hpp"
#include "runtime/counters.hpp"
#include "runtime/output_file.hpp"

#include <aloe/stats.hpp>


namespace aloe {

std::vector<site_stats> all_site_stats() { return loop::site_registry::instance().snapshot(); }

std::optional<site_stats> stats_of(const loop_site& site) { return loop::site_registry::instance().snapshot(site); }

std::string tuning_json(const tuning_stats& t) { return loop::format_tuning_json(t); }

std::string stats_json() { return loop::format_stats_json(all_site_stats()); }

bool write_stats_json(const std::string& path, std::string* error_message) {
    std::string error;
    if (runtime::write_output_file(path, stats_json(), error)) return true;
    if (error_message) *error_message = error;
    return false;
}

void reset_site_history() { loop::site_registry::instance().reset(); }

std::optional<std::uint64_t> counter_value(std::string_view name) { return runtime::read_counter(name); }

std::vector<std::pair<std::string, std::uint64_t>> all_counters() { return runtime::read_all_counters(); }

}  // namespace aloe

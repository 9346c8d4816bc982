// The public statistics functions of include/aloe/stats.hpp.
#include "loop/loop_stats.hpp"
#include "loop/site_registry.hpp"
#include "runtime/counter_window.hpp"
#include "runtime/counters.hpp"
#include "runtime/output_file.hpp"

#include <aloe/stats.hpp>

#include <memory>
#include <utility>

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

std::optional<std::uint64_t> counter_value(std::string_view name) {
    const std::optional<counter_sample> sample = runtime::read_counter(name);
    if (!sample) return std::nullopt;
    return sample->value;
}

std::vector<std::pair<std::string, std::uint64_t>> all_counters() { return runtime::read_all_counters(); }

std::string_view unit_name(counter_unit unit) noexcept { return runtime::counter_unit_name(unit); }

std::string to_string(const counter_sample& sample) { return runtime::format_sample(sample); }

std::vector<counter_description> list_counters() { return runtime::list_counters(); }

std::optional<counter_sample> read_counter(std::string_view name) { return runtime::read_counter(name); }

std::vector<counter_sample> read_counters(std::string_view pattern) { return runtime::read_counters(pattern); }

// The reader is a runtime::counter_window behind the public header's opaque pointer.
struct counter_reader::state {
    runtime::counter_window window;
};

counter_reader::counter_reader(std::string pattern)
    : state_(std::make_unique<state>(state{runtime::counter_window(std::move(pattern))})) {}

counter_reader::counter_reader(const counter_reader& other) : state_(std::make_unique<state>(*other.state_)) {}

counter_reader& counter_reader::operator=(const counter_reader& other) {
    if (this != &other) *state_ = *other.state_;
    return *this;
}

counter_reader::~counter_reader() = default;

std::vector<counter_sample> counter_reader::delta() { return state_->window.delta(); }

std::vector<counter_sample> counter_reader::peek() { return state_->window.peek(); }

void counter_reader::reset() { state_->window.reset(); }

const std::string& counter_reader::pattern() const noexcept { return state_->window.pattern(); }

}  // namespace aloe

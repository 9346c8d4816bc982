// The public statistics functions of include/aloe/stats.hpp.
#include "loop/loop_stats.hpp"
#include "loop/site_registry.hpp"
#include "runtime/counters.hpp"
#include "runtime/output_file.hpp"

#include <aloe/stats.hpp>

#include <algorithm>
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

counter_reader::counter_reader(std::string pattern) : pattern_(std::move(pattern)), shape_(~std::uint64_t{0}) { reset(); }

std::vector<counter_sample> counter_reader::delta() { return read(true); }

std::vector<counter_sample> counter_reader::peek() { return read(false); }

void counter_reader::reset() { read(true); }

std::vector<counter_sample> counter_reader::read(bool move_baseline) {
    // Resolve the pattern again when the registry changed shape (a counter or a worker slot
    // appeared): known instances keep their baseline, new ones start from 0 (all their counts
    // came after this reader last looked).
    if (const std::uint64_t shape = runtime::counter_shape(); shape != shape_) {
        std::vector<std::uint64_t> keys;
        std::vector<counter_sample> base;
        for (runtime::counter_instance& found : runtime::find_counters(pattern_)) {
            const auto known = std::find(keys_.begin(), keys_.end(), found.key);
            found.sample.value = known == keys_.end() ? 0 : base_[static_cast<std::size_t>(known - keys_.begin())].value;
            keys.push_back(found.key);
            base.push_back(std::move(found.sample));
        }
        keys_ = std::move(keys);
        base_ = std::move(base);
        shape_ = shape;
    }
    std::vector<std::uint64_t> now(keys_.size());
    const std::uint64_t epoch = runtime::read_counter_values(keys_, now);
    if (epoch != epoch_) {  // a fork child: every count restarted from 0
        for (counter_sample& b : base_) b.value = 0;
        epoch_ = epoch;
    }
    std::vector<counter_sample> out = base_;
    for (std::size_t i = 0; i < out.size(); ++i) {
        // A count below its baseline can only have restarted: all of it is new.
        out[i].value = now[i] >= base_[i].value ? now[i] - base_[i].value : now[i];
        if (move_baseline) base_[i].value = now[i];
    }
    return out;
}

}  // namespace aloe

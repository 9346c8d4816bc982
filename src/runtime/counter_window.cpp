#include "runtime/counter_window.hpp"

#include <algorithm>
#include <unordered_map>
#include <utility>

namespace aloe::runtime {

counter_window::counter_window(std::string pattern, baseline from) : pattern_(std::move(pattern)) {
    if (from == baseline::now) {
        reset();
    } else {
        resolve(counter_shape());
        epoch_ = read_counter_values({}, {});
    }
}

void counter_window::resolve(std::uint64_t shape) {
    std::unordered_map<counter_key, std::uint64_t> old_base;  // raw instances known before
    for (std::size_t i = 0; i < raw_keys_.size(); ++i) old_base.emplace(raw_keys_[i], raw_base_[i]);
    raw_keys_.clear();
    raw_base_.clear();
    readings_.clear();
    std::unordered_map<counter_key, std::uint32_t> slots;  // where each sits in raw_keys_
    // Where `key` sits, added with its old baseline (0 when it is new).
    const auto slot_of = [&](counter_key key) {
        if (key == counter_formula::none) return absent;
        const auto [it, added] = slots.try_emplace(key, static_cast<std::uint32_t>(raw_keys_.size()));
        if (added) {
            const auto known = old_base.find(key);
            raw_keys_.push_back(key);
            raw_base_.push_back(known == old_base.end() ? 0 : known->second);
        }
        return it->second;
    };
    for (counter_instance& found : find_counters(pattern_)) {
        const counter_formula& f = found.formula;
        const std::uint32_t a = slot_of(f.a), b = slot_of(f.b), c = slot_of(f.c);
        readings_.push_back({std::move(found.sample), a, b, c, f.scale, f.empty_value});
    }
    shape_ = shape;
}

std::vector<aloe::counter_sample> counter_window::read(bool move_baseline) {
    // The shape is read before the instances are: a counter registered in between is found
    // now and again at the next read, never missed.
    if (const std::uint64_t shape = counter_shape(); shape != shape_) resolve(shape);
    std::vector<std::uint64_t> now(raw_keys_.size());
    const std::uint64_t epoch = read_counter_values(raw_keys_, now);
    if (epoch != epoch_) {  // a fork child: every count restarted from 0
        std::fill(raw_base_.begin(), raw_base_.end(), 0);
        epoch_ = epoch;
    }
    std::vector<std::uint64_t> change(now.size());
    for (std::size_t i = 0; i < now.size(); ++i) {
        // A count below its baseline can only have restarted: all of it is new.
        change[i] = now[i] >= raw_base_[i] ? now[i] - raw_base_[i] : now[i];
        if (move_baseline) raw_base_[i] = now[i];
    }
    const auto value = [&](std::uint32_t slot, std::uint64_t if_absent) { return slot == absent ? if_absent : change[slot]; };
    std::vector<aloe::counter_sample> out;
    out.reserve(readings_.size());
    for (const reading& r : readings_) {
        const counter_formula f{.scale = r.scale, .empty_value = r.empty_value};
        aloe::counter_sample s = r.sample;
        s.value = f.apply(value(r.a, 0), value(r.b, 0), value(r.c, 1));
        out.push_back(std::move(s));
    }
    return out;
}

}  // namespace aloe::runtime

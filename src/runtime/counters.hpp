// Counters: named, cheap, always-on measurements, readable by name at any time.
//
// A counter is one relaxed atomic. Hot paths never touch counters directly: workers keep
// their per-chunk tallies in private records, and the thread that ends a loop folds them
// into the counters once per loop, so an update is an uncontended add.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aloe::runtime {

class counter {
public:
    explicit counter(std::string name) : name_(std::move(name)) {}
    void add(std::uint64_t v) noexcept { value_.fetch_add(v, std::memory_order_relaxed); }
    std::uint64_t value() const noexcept { return value_.load(std::memory_order_relaxed); }
    const std::string& name() const noexcept { return name_; }
    /// Back to 0: only for a child of fork(), whose counts start afresh.
    void reset() noexcept { value_.store(0, std::memory_order_relaxed); }

private:
    std::string name_;
    std::atomic<std::uint64_t> value_{0};
};

/// The counter called `name`, created on first use; the reference stays valid for the
/// life of the process. Thread-safe; call once and keep the reference.
counter& register_counter(std::string_view name);

std::optional<std::uint64_t> read_counter(std::string_view name);

/// Every counter, in registration order.
std::vector<std::pair<std::string, std::uint64_t>> read_all_counters();

}  // namespace aloe::runtime

// One consumer's view of the counter instances a pattern names: each one's change since the
// consumer's own baseline (aloe::counter_reader, the counter printer).
//
// The baseline is kept per raw instance, not per instance read: a derived instance's change
// is its formula applied to its operands' changes (counters.hpp, counter_formula), so the
// idle-rate of an interval is (Δoverall − Δcumulative) / Δoverall, never the difference of two
// rates. A raw instance is its own operand ((a − 0) × 1 / 1).
//
// Re-resolved when the registry changes shape (a counter or worker slot appeared): raw
// instances already known keep their baseline, new ones start from 0 (all their counts came
// after this window last looked; a derived counter registered after raw operands that had
// already counted is the one case where that is not so, and its first change then includes
// those counts). A child of fork() starts every count afresh (the registry's epoch changes):
// every baseline drops to 0 there.
#pragma once

#include "runtime/counters.hpp"

#include <aloe/stats.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace aloe::runtime {

/// Not thread-safe: one window per consumer. Copyable (the copy moves on its own).
class counter_window {
public:
    /// Where the baseline starts: at the values now, or at 0 (a printer's cumulative view).
    enum class baseline { now, zero };

    explicit counter_window(std::string pattern, baseline from = baseline::now);

    /// Each instance's change since the baseline (registration order, each counter's total
    /// before its workers), then moves the baseline to now. Takes the registry's lock once.
    std::vector<aloe::counter_sample> delta() { return read(true); }
    /// The same changes, leaving the baseline where it is.
    std::vector<aloe::counter_sample> peek() { return read(false); }
    /// Moves the baseline to now.
    void reset() { (void)read(true); }

    const std::string& pattern() const noexcept { return pattern_; }

private:
    // An instance and where its operands sit in raw_keys_ (absent: `absent`).
    static constexpr std::uint32_t absent = ~std::uint32_t{0};
    struct reading {
        aloe::counter_sample sample;  // name and unit
        std::uint32_t a = absent, b = absent, c = absent;
        std::uint64_t scale = 1, empty_value = 0;
    };

    std::vector<aloe::counter_sample> read(bool move_baseline);
    void resolve(std::uint64_t shape);

    std::string pattern_;
    std::uint64_t shape_ = ~std::uint64_t{0};  // the registry's shape when resolved
    std::uint64_t epoch_ = 0;                  // the registry's reset epoch of the baselines
    std::vector<reading> readings_;            // one per instance the pattern names
    std::vector<counter_key> raw_keys_;        // every operand of every instance, once each
    std::vector<std::uint64_t> raw_base_;      // their values at the baseline
};

}  // namespace aloe::runtime

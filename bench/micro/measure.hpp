// The measurement itself: the clocks, the variants a test group compares, the interleaved
// loop that times them (every variant once per repetition, in a rotated order) and the
// statistics over repetitions that the reports print.
#pragma once

#include "options.hpp"

#include <chrono>
#include <cstdint>
#include <ctime>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace aloe_overhead {

// ---------------------------------------------------------------------------------------
// Clocks

inline double now_us() {
    using clock = std::chrono::steady_clock;
    return std::chrono::duration<double, std::micro>(clock::now().time_since_epoch()).count();
}

inline double process_cpu_us() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) * 1e-3;
}

inline void sleep_us(double us) {
    if (us > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::micro>(us));
}

// ---------------------------------------------------------------------------------------
// Variants and groups

enum class runtime_kind { ref, gomp, aloe };

struct variant {
    std::string name;   // e.g. "aloe dynamic,chunk=4", "gomp dynamic,4", "reference"
    runtime_kind rt = runtime_kind::ref;
    std::string peer;   // the variant it is compared with ("" for none)
    std::int64_t chunk = 0;
    double units = 1;   // chunks (or loops) per construct, for the per-unit cost
    std::function<void(int)> run;  // runs `inner` constructs
    int inner = 1;
    std::vector<double> us;        // per-construct time of each repetition, µs
};

struct group {
    std::string test;  // fork | balanced | chunk
    std::vector<variant> v;  // v.front() is the reference
};

struct runner {
    const options& opt;
    double settle_us = 0;

    void settle() const { sleep_us(settle_us); }

    /// Times `inner` constructs after one untimed construct (it wakes sleeping workers).
    double time_batch(variant& v, int inner) const {
        v.run(1);
        const double t0 = now_us();
        v.run(inner);
        return (now_us() - t0) / inner;
    }

    /// Sizes each variant's batch, then runs opt.reps repetitions of the group, interleaved.
    void run(group& g) const;
};

// ---------------------------------------------------------------------------------------
// Statistics

double quantile(std::vector<double> v, double q);
double median(const std::vector<double>& v);

struct summary_row {
    const variant* v;
    double median_us, min_us, max_us, spread;
    double per_unit_us;  // median over repetitions of (test − reference) / units
};

summary_row summarise(const group& g, const variant& v);

/// The variant of g with this name, or nullptr.
const variant* find(const group& g, const std::string& name);

/// Repetitions in which a's per-unit cost was no higher than b's (paired by repetition).
int wins(const group& g, const variant& a, const variant& b);

}  // namespace aloe_overhead

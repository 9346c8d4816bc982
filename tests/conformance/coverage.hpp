// Shared helpers of the conformance tests (black-box tests of the public API).
//
// coverage: one atomic hit counter per iteration of a loop (first, last, step), mapped by
// (i - first) / step, plus a record of everything that should never happen (an index
// outside the loop, a subrange with a wrong bound or step, a thread id outside the team).
// exactly_once() turns all of it into one gtest assertion with a readable message.
//
// Also here: the schedule strings of each family, the range shapes every schedule is run
// over, a deterministic per-iteration delay plan, and compile-time sanitizer detection.
#pragma once

#include <aloe/aloe.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace aloe_conformance {

// ---- Sanitizers (compile-time) ----------------------------------------------------------

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ALOE_CONFORMANCE_TSAN 1
#endif
#if __has_feature(address_sanitizer)
#define ALOE_CONFORMANCE_ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__) && !defined(ALOE_CONFORMANCE_TSAN)
#define ALOE_CONFORMANCE_TSAN 1
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(ALOE_CONFORMANCE_ASAN)
#define ALOE_CONFORMANCE_ASAN 1
#endif

#if defined(ALOE_CONFORMANCE_TSAN)
inline constexpr bool under_tsan = true;
#else
inline constexpr bool under_tsan = false;
#endif
#if defined(ALOE_CONFORMANCE_TSAN) || defined(ALOE_CONFORMANCE_ASAN)
inline constexpr bool under_sanitizer = true;
#else
inline constexpr bool under_sanitizer = false;
#endif

/// Scales a repetition count down under sanitizers (they run 5-20x slower), never below 1.
inline int scaled(int normal) { return under_sanitizer ? std::max(1, normal / 5) : normal; }

// ---- Teams --------------------------------------------------------------------------------

/// Twice the hardware threads (oversubscribed on purpose), capped at 64 so that a test on a
/// very wide machine stays quick; at least 2.
inline int oversubscribed_team_size() {
    const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    return static_cast<int>(std::clamp(2u * hw, 2u, 64u));
}

/// The team sizes every schedule is run on: 1, 2, 3 and twice the hardware threads.
inline std::vector<int> team_sizes() {
    std::vector<int> sizes{1, 2, 3};
    const int big = oversubscribed_team_size();
    if (std::find(sizes.begin(), sizes.end(), big) == sizes.end()) sizes.push_back(big);
    return sizes;
}

// ---- Iteration spaces ---------------------------------------------------------------------

inline constexpr std::int64_t i64_max = std::numeric_limits<std::int64_t>::max();
inline constexpr std::int64_t i64_min = std::numeric_limits<std::int64_t>::min();

__extension__ using int128 = __int128;

/// The number of iterations of `for (i = first; step > 0 ? i < last : i > last; i += step)`
/// computed in 128-bit arithmetic, independently of the library.
inline std::uint64_t reference_count(std::int64_t first, std::int64_t last, std::int64_t step) {
    const int128 f = first, l = last, s = step;
    if (s > 0 && l > f) return static_cast<std::uint64_t>((l - f + s - 1) / s);
    if (s < 0 && l < f) return static_cast<std::uint64_t>((f - l + (-s) - 1) / (-s));
    return 0;
}

/// The k-th index of the loop (k < count), in 128-bit arithmetic.
inline std::int64_t reference_index(std::int64_t first, std::int64_t step, std::uint64_t k) {
    return static_cast<std::int64_t>(static_cast<int128>(first) + static_cast<int128>(k) * step);
}

struct range_shape {
    const char* name;
    std::int64_t first;
    std::int64_t last;
    std::int64_t step;
};

inline std::ostream& operator<<(std::ostream& o, const range_shape& r) {
    return o << r.name << " [first=" << r.first << ", last=" << r.last << ", step=" << r.step << "]";
}

/// Every range shape of the exactly-once sweep.
inline std::vector<range_shape> range_shapes() {
    constexpr std::int64_t two_60 = std::int64_t{1} << 60;
    return {
        {"empty first==last", 5, 5, 1},
        {"empty last<first step>0", 10, 3, 1},
        {"empty last>first step<0", 3, 10, -1},
        {"empty max..min step>0", i64_max, i64_min, 1},
        {"single", 7, 8, 1},
        {"single big step", 0, 100, 1000},
        {"single negative step", 7, 6, -1},
        {"two (fewer than threads)", 0, 2, 1},
        {"prime 1009", 0, 1009, 1},
        {"large 100003", 0, 100003, 1},
        {"negative bounds", -500, -17, 1},
        {"across zero", -1000, 1000, 1},
        {"step 7", 3, 1000, 7},
        {"negative step -5", 1000, -3, -5},
        {"touching INT64_MAX step 7", i64_max - 50, i64_max, 7},
        {"touching INT64_MIN step -3", i64_min + 40, i64_min, -3},
        {"full range step 2^60", i64_min, i64_max, two_60},
        {"full range step -2^60", i64_max, i64_min, -two_60},
        {"full range step INT64_MAX", i64_min, i64_max, i64_max},
        {"full range step INT64_MIN", i64_max, i64_min, i64_min},
    };
}

// ---- Coverage -----------------------------------------------------------------------------

/// Hit counts of one run of one loop. hit() and check_subrange() are thread-safe.
class coverage {
public:
    coverage(std::int64_t first, std::int64_t last, std::int64_t step, int team_size = 1 << 30)
        : first_(first),
          last_(last),
          step_(step),
          count_(reference_count(first, last, step)),
          team_size_(team_size),
          hits_(std::make_unique<std::atomic<std::uint32_t>[]>(count_)) {
        for (std::uint64_t k = 0; k < count_; ++k) hits_[k].store(0, std::memory_order_relaxed);
    }
    explicit coverage(const range_shape& r, int team_size = 1 << 30)
        : coverage(r.first, r.last, r.step, team_size) {}

    std::uint64_t count() const { return count_; }
    std::int64_t first() const { return first_; }
    std::int64_t last() const { return last_; }
    std::int64_t step() const { return step_; }

    /// The slot of index i, or nothing when i is not an iteration of the loop.
    std::optional<std::uint64_t> slot_of(std::int64_t i) const {
        const int128 d = static_cast<int128>(i) - first_;
        if (d % step_ != 0) return std::nullopt;
        const int128 k = d / step_;
        if (k < 0 || k >= static_cast<int128>(count_)) return std::nullopt;
        return static_cast<std::uint64_t>(k);
    }

    /// Records one execution of index i; returns its slot (nothing for a stray index).
    std::optional<std::uint64_t> hit(std::int64_t i) noexcept {
        const auto k = slot_of(i);
        if (!k) {
            if (strays_.fetch_add(1, std::memory_order_relaxed) == 0) first_stray_.store(i, std::memory_order_relaxed);
            return std::nullopt;
        }
        hits_[*k].fetch_add(1, std::memory_order_relaxed);
        return k;
    }

    /// Checks a subrange handed to a subrange body (step, bound, thread id) and hits its
    /// indices. Returns the slots [begin, end) it covered (begin == end when empty or bad).
    std::pair<std::uint64_t, std::uint64_t> check_subrange(const aloe::subrange& r, int thread) noexcept {
        if (thread < 0 || thread >= team_size_) {
            if (bad_threads_.fetch_add(1, std::memory_order_relaxed) == 0)
                first_bad_thread_.store(thread, std::memory_order_relaxed);
        }
        if (r.step() != step_) note_bad_subrange(r);
        if (r.empty()) {
            empty_subranges_.fetch_add(1, std::memory_order_relaxed);
            return {0, 0};
        }
        const auto begin = slot_of(r.first());
        if (!begin || *begin + r.size() > count_) {
            note_bad_subrange(r);
            for (const std::int64_t i : r) hit(i);
            return {0, 0};
        }
        const std::uint64_t end = *begin + r.size();
        const std::int64_t want_bound = end == count_ ? last_ : reference_index(first_, step_, end);
        if (r.bound() != want_bound) note_bad_subrange(r);
        std::uint64_t yielded = 0;
        for (const std::int64_t i : r) {
            hit(i);
            ++yielded;
        }
        if (yielded != r.size()) note_bad_subrange(r);
        return {*begin, end};
    }

    /// How often slot k ran.
    std::uint32_t hits(std::uint64_t k) const { return hits_[k].load(std::memory_order_relaxed); }

    /// Every slot ran exactly once and nothing else happened.
    ::testing::AssertionResult exactly_once() const { return check([](std::uint64_t) { return true; }); }

    /// Every slot for which expected(k) is true ran exactly once, every other slot never
    /// ran, and nothing else happened.
    template <class Pred>
    ::testing::AssertionResult exactly_once_where(Pred expected) const {
        return check(expected);
    }

    /// Forgets all hits (for re-running the same loop).
    void clear() {
        for (std::uint64_t k = 0; k < count_; ++k) hits_[k].store(0, std::memory_order_relaxed);
        strays_ = 0;
        bad_threads_ = 0;
        bad_subranges_ = 0;
        empty_subranges_ = 0;
    }

private:
    void note_bad_subrange(const aloe::subrange& r) noexcept {
        if (bad_subranges_.fetch_add(1, std::memory_order_relaxed) == 0) {
            bad_first_.store(r.first(), std::memory_order_relaxed);
            bad_bound_.store(r.bound(), std::memory_order_relaxed);
            bad_step_.store(r.step(), std::memory_order_relaxed);
            bad_size_.store(r.size(), std::memory_order_relaxed);
        }
    }

    template <class Pred>
    ::testing::AssertionResult check(Pred expected) const {
        std::uint64_t missed = 0, repeated = 0, unexpected = 0;
        std::ostringstream detail;
        int shown = 0;
        for (std::uint64_t k = 0; k < count_; ++k) {
            const std::uint32_t h = hits(k);
            const std::uint32_t want = expected(k) ? 1 : 0;
            if (h == want) continue;
            if (want == 1 && h == 0) ++missed;
            else if (want == 1) ++repeated;
            else ++unexpected;
            if (shown++ < 8)
                detail << "\n  slot " << k << " (index " << reference_index(first_, step_, k) << ") ran " << h
                       << " times, expected " << want;
        }
        const std::uint64_t strays = strays_.load(), bad_threads = bad_threads_.load(), bad_subranges = bad_subranges_.load();
        if (missed == 0 && repeated == 0 && unexpected == 0 && strays == 0 && bad_threads == 0 && bad_subranges == 0)
            return ::testing::AssertionSuccess();
        auto failure = ::testing::AssertionFailure();
        failure << "loop first=" << first_ << " last=" << last_ << " step=" << step_ << " (" << count_
                << " iterations): " << missed << " never ran, " << repeated << " ran more than once, " << unexpected
                << " ran but should not have";
        if (strays) failure << "; " << strays << " indices outside the loop (first: " << first_stray_.load() << ")";
        if (bad_threads) failure << "; " << bad_threads << " calls with a thread id outside [0, " << team_size_
                                 << ") (first: " << first_bad_thread_.load() << ")";
        if (bad_subranges)
            failure << "; " << bad_subranges << " malformed subranges (first: first=" << bad_first_.load()
                    << " bound=" << bad_bound_.load() << " step=" << bad_step_.load() << " size=" << bad_size_.load()
                    << ")";
        failure << detail.str();
        return failure;
    }

    std::int64_t first_, last_, step_;
    std::uint64_t count_;
    int team_size_;
    std::unique_ptr<std::atomic<std::uint32_t>[]> hits_;
    std::atomic<std::uint64_t> strays_{0};
    std::atomic<std::int64_t> first_stray_{0};
    std::atomic<std::uint64_t> bad_threads_{0};
    std::atomic<int> first_bad_thread_{0};
    std::atomic<std::uint64_t> bad_subranges_{0};
    std::atomic<std::uint64_t> empty_subranges_{0};
    std::atomic<std::int64_t> bad_first_{0}, bad_bound_{0}, bad_step_{0};
    std::atomic<std::uint64_t> bad_size_{0};
};

// ---- Coverage of huge loops ---------------------------------------------------------------

/// Exactly-once coverage at chunk level, for loops too long to count iteration by
/// iteration (up to 2^64 - 1 iterations): every subrange becomes an interval of slots,
/// intervals must not overlap, and in the end they must merge into [0, count).
/// Adjacent intervals are merged as they come, so memory stays small. Thread-safe.
class interval_coverage {
public:
    interval_coverage(std::int64_t first, std::int64_t last, std::int64_t step)
        : first_(first), last_(last), step_(step), count_(reference_count(first, last, step)) {}

    std::uint64_t count() const { return count_; }

    void add(const aloe::subrange& r) {
        std::lock_guard lock(mutex_);
        ++chunks_;
        if (r.empty()) return;
        const auto b = slot_of(r.first());
        if (!b || r.step() != step_ || r.size() > count_ - *b) {
            note("subrange outside the loop", r);
            return;
        }
        const std::uint64_t e = *b + r.size();
        const std::int64_t want_bound = e == count_ ? last_ : reference_index(first_, step_, e);
        if (r.bound() != want_bound) note("wrong bound", r);
        auto next = intervals_.upper_bound(*b);
        if (next != intervals_.end() && next->first < e) note("overlaps a later chunk", r);
        if (next != intervals_.begin()) {
            auto prev = std::prev(next);
            if (prev->second > *b) note("overlaps an earlier chunk", r);
        }
        std::uint64_t begin = *b, end = e;
        if (next != intervals_.end() && next->first == end) {
            end = next->second;
            next = intervals_.erase(next);
        }
        if (next != intervals_.begin()) {
            auto prev = std::prev(next);
            if (prev->second == begin) {
                prev->second = end;
                return;
            }
        }
        intervals_.emplace_hint(next, begin, end);
    }

    ::testing::AssertionResult exactly_once() const {
        std::lock_guard lock(mutex_);
        const bool whole = count_ == 0 ? intervals_.empty()
                                       : intervals_.size() == 1 && intervals_.begin()->first == 0 &&
                                             intervals_.begin()->second == count_;
        if (whole && problems_ == 0) return ::testing::AssertionSuccess();
        auto failure = ::testing::AssertionFailure();
        failure << "loop first=" << first_ << " last=" << last_ << " step=" << step_ << " (" << count_
                << " iterations) in " << chunks_ << " chunks: " << problems_ << " bad chunks" << first_problem_
                << "; covered slot intervals:";
        int shown = 0;
        for (const auto& [b, e] : intervals_) {
            if (shown++ == 6) {
                failure << " ...";
                break;
            }
            failure << " [" << b << ", " << e << ")";
        }
        return failure;
    }

private:
    std::optional<std::uint64_t> slot_of(std::int64_t i) const {
        const int128 d = static_cast<int128>(i) - first_;
        if (d % step_ != 0) return std::nullopt;
        const int128 k = d / step_;
        if (k < 0 || k >= static_cast<int128>(count_)) return std::nullopt;
        return static_cast<std::uint64_t>(k);
    }
    void note(const char* what, const aloe::subrange& r) {
        if (problems_++ == 0) {
            std::ostringstream o;
            o << " (first: " << what << ": first=" << r.first() << " bound=" << r.bound() << " step=" << r.step()
              << " size=" << r.size() << ")";
            first_problem_ = o.str();
        }
    }

    std::int64_t first_, last_, step_;
    std::uint64_t count_;
    mutable std::mutex mutex_;
    std::map<std::uint64_t, std::uint64_t> intervals_;
    std::uint64_t chunks_ = 0;
    std::uint64_t problems_ = 0;
    std::string first_problem_;
};

// ---- Schedules ----------------------------------------------------------------------------

/// A schedule family and the strings the sweep runs for it.
struct schedule_family {
    const char* name;
    std::vector<std::string> specs;
};

inline std::ostream& operator<<(std::ostream& o, const schedule_family& f) { return o << f.name; }

/// Every family of schedule.hpp's table, each with parameters that hit its edge cases
/// (chunk 1, chunk larger than some ranges, fs 0 and 1, more tasklets than iterations).
inline std::vector<schedule_family> schedule_families() {
    return {
        {"static", {"static"}},
        {"static_chunk", {"static,chunk=1", "static,chunk=3", "static,chunk=64"}},
        {"dynamic", {"dynamic,chunk=1", "dynamic,chunk=5", "dynamic,chunk=1000"}},
        {"guided", {"guided,chunk=1", "guided,chunk=4", "guided,chunk=500"}},
        {"hybrid", {"hybrid,fs=0,chunk=1", "hybrid,fs=0.5,chunk=3", "hybrid,fs=0.9,chunk=1", "hybrid,fs=1,chunk=2"}},
        {"staggered_atomic",
         {"staggered,fs=0,chunk=1,queue=atomic", "staggered,fs=0.7,chunk=4,queue=atomic",
          "staggered,fs=1,chunk=1,queue=atomic", "staggered,fs=0.3,chunk=100,queue=atomic"}},
        {"staggered_mutex",
         {"staggered,fs=0,chunk=1,queue=mutex", "staggered,fs=0.5,chunk=3,queue=mutex",
          "staggered,fs=1,chunk=2,queue=mutex"}},
        {"weighted", {"weighted,fs=1,chunk=1", "weighted,fs=0.5,chunk=3", "weighted,fs=0,chunk=2"}},
        {"tasklets",
         {"tasklets,n=1,fs=0,skew=1,locality=1", "tasklets,n=7,fs=0.25,skew=4,locality=0",
          "tasklets,n=64,fs=0.5,skew=1,locality=1", "tasklets,n=1000,fs=0,skew=100,locality=0",
          "tasklets,n=13,fs=1,skew=2,locality=1"}},
        // Each loop at a site is one step of adaptive's probing and search, so these cover
        // static, staggered with and without weights as the tuner moves.
        {"adaptive",
         {"adaptive,search=race,chunk=auto,delay=optimistic", "adaptive,search=sweep,chunk=3,delay=pessimistic",
          "adaptive,search=nlopt,chunk=auto,delay=optimistic"}},
    };
}

/// Every schedule string of every family.
inline std::vector<std::string> all_schedule_specs() {
    std::vector<std::string> out;
    for (const schedule_family& f : schedule_families()) out.insert(out.end(), f.specs.begin(), f.specs.end());
    return out;
}

// ---- Delays -------------------------------------------------------------------------------

/// A seeded plan of which iterations are slow: most do nothing, some spin a few µs, a few
/// sleep. The first quarter of the loop is slower than the rest, so schedules with a
/// dynamic part really rebalance and staggered really steals. Read-only once built, so
/// bodies on any thread may use it.
class delay_plan {
public:
    delay_plan(std::uint64_t count, std::uint32_t seed) : kind_(count, 0) {
        std::mt19937 rng(seed);
        std::uniform_int_distribution<int> pct(0, 99);
        for (std::uint64_t k = 0; k < count; ++k) {
            const bool heavy = k < count / 4;
            const int p = pct(rng);
            if (p < (heavy ? 6 : 1)) kind_[k] = 2;         // sleep
            else if (p < (heavy ? 40 : 8)) kind_[k] = 1;   // spin
        }
    }

    /// Delays slot k according to the plan.
    void apply(std::uint64_t k) const {
        if (k >= kind_.size()) return;
        if (kind_[k] == 1) {
            const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(3);
            while (std::chrono::steady_clock::now() < until) {
            }
        } else if (kind_[k] == 2) {
            std::this_thread::sleep_for(std::chrono::microseconds(5));
        }
    }

private:
    std::vector<std::uint8_t> kind_;
};

}  // namespace aloe_conformance

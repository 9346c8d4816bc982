// `weighted,fs=f,chunk=c` (Kale thesis ch. 3): static shares proportional to each worker's
// measured speed at this loop site, for cores that are persistently slow (a daemon pinned
// to them, a slower core). The first floor(f·n) iterations are split by weight into one
// contiguous block per worker, in worker order; the rest is a dynamic pool of chunks of c.
//
// Weights: after each run, speed_t = static iterations / static time of worker t; the new
// weight is speed_t / mean speed, smoothed with the previous weight and clamped (see
// weighted.cpp). The thesis's multiplicative update k_t ← k_t·avg(s)/s_t has the same
// fixed point; smoothing and the clamp keep one noisy run from swinging the shares, and
// the shares are rounded so they sum to exactly floor(f·n) (the thesis leaves both open).
// The first run, and any run on a team of another size, uses equal weights.
#pragma once

#include "loop/partition.hpp"
#include "loop/schedule.hpp"
#include "loop/schedules/spec_text.hpp"

namespace aloe::loop {

class weighted_split {
public:
    explicit weighted_split(const loop_setup& s);

    /// Reads offsets_[id] and offsets_[id+1]: written before the fork, read-only after.
    bool next_static(worker_cursor& w, chunk& c) noexcept {
        if (w.static_done) return false;
        w.static_done = true;
        const auto id = static_cast<std::size_t>(w.id);
        c = {offsets_[id], offsets_[id + 1]};
        return c.begin < c.end;
    }
    take next_dynamic(worker_cursor&, chunk& c) noexcept {
        if (counter_ == nullptr) return take::none;
        return claim(counter_->next, chunk_, count_, use_cas_, c) ? take::own : take::none;
    }
    void commit(std::span<const worker_record> records, site_history& h) const;

    /// Splits `total` into shares proportional to `weights`, summing exactly to `total`
    /// (largest remainder). Exposed for tests.
    static void split_by_weight(std::uint64_t total, std::span<const double> weights, std::span<std::uint64_t> shares);

    /// The next weights from the previous ones and one run's records. Exposed for tests.
    static void update_weights(std::span<double> weights, std::span<const worker_record> records);

    /// The smoothing and clamp of update_weights, from speeds measured elsewhere (any
    /// positive unit; adaptive measures whole-run speed): weights move halfway to speed/mean.
    static void blend_weights(std::span<double> weights, std::span<const double> speeds);

private:
    std::span<std::uint64_t> offsets_;  // p+1 entries
    shared_counter* counter_ = nullptr;
    std::uint64_t count_;
    std::uint64_t chunk_;
    bool use_cas_;
};

/// `weighted[,fs=f][,chunk=c]` as text: parse, print, defaults and the builder (spec_text.hpp; weighted_spec.cpp).
template <>
struct kind_text<schedule_kind::weighted> {
    static constexpr std::string_view name = "weighted";
    static constexpr std::string_view keys = "fs, chunk";
    static constexpr bool bare_chunk = false;
    static void defaults(schedule& s) noexcept;
    static bool read(schedule& s, std::string_view key, std::string_view value, const spec_reader& r);
    static bool finish(const spec_reader& r);
    static std::string print(const schedule& s);
    static schedule make(double fs, std::int64_t chunk);
};

}  // namespace aloe::loop

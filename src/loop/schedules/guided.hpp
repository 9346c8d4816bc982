// `guided,chunk=c,divisor=k`: each take claims ceil(remaining / (k·p)) iterations, at least
// c, so chunks shrink as the loop drains (Polychronopoulos & Kuck). k = 1 (the default) is
// libgomp's rule; k = 2 is LLVM libomp's, whose first chunks leave half the loop to balance
// (on two threads k = 1 hands out half the loop at once: static's split, and its imbalance).
//
// Hot path: a relaxed CAS loop on the shared counter's line (the chunk size depends on the
// value read, so fetch_add cannot be used). Contended CAS retries are the cost.
#pragma once

#include "loop/partition.hpp"
#include "loop/schedule.hpp"
#include "loop/schedules/spec_text.hpp"

namespace aloe::loop {

class guided_chunks {
public:
    explicit guided_chunks(const loop_setup& s);

    bool next_static(worker_cursor&, chunk&) noexcept { return false; }
    take next_dynamic(worker_cursor&, chunk& c) noexcept {
        std::uint64_t b = counter_->next.load(std::memory_order_relaxed);
        std::uint64_t size = 0;
        do {
            if (b >= count_) return take::none;
            const std::uint64_t left = count_ - b;
            size = std::min(left, std::max(chunk_, left / threads_ + (left % threads_ != 0)));
        } while (!counter_->next.compare_exchange_weak(b, b + size, std::memory_order_relaxed));
        c = {b, b + size};
        return take::own;
    }
    void commit(std::span<const worker_record>, site_history&) const {}
    /// One shared pool, no cursor: a participant on a borrowed core may join mid-way.
    static constexpr bool guests_welcome = true;
    /// Ready to run the same loop again (shared_loop's rewind: nothing else changed).
    void rewind() noexcept { counter_->next.store(0, std::memory_order_relaxed); }

private:
    shared_counter* counter_;
    std::uint64_t count_;
    std::uint64_t chunk_;
    std::uint64_t threads_;
};

/// `guided[,chunk=c]` as text: parse, print, defaults and the builder (spec_text.hpp; guided_spec.cpp).
template <>
struct kind_text<schedule_kind::guided> {
    static constexpr std::string_view name = "guided";
    static constexpr std::string_view keys = "chunk, divisor";
    static constexpr bool bare_chunk = true;
    static void defaults(schedule& s) noexcept;
    static bool read(schedule& s, std::string_view key, std::string_view value, const spec_reader& r);
    static bool finish(const spec_reader& r);
    static std::string print(const schedule& s);
    static schedule make(std::int64_t chunk, std::int64_t divisor = 1);
};

}  // namespace aloe::loop

// `dynamic,chunk=c`: every chunk comes from one shared counter.
//
// Hot path (next_dynamic): one relaxed fetch_add on the counter's own cache line (see
// claim() in partition.hpp); no lock. Counters: one chunk per successful take.
#pragma once

#include "loop/partition.hpp"
#include "loop/schedule.hpp"
#include "loop/schedules/spec_text.hpp"

namespace aloe::loop {

class dynamic_chunks {
public:
    explicit dynamic_chunks(const loop_setup& s);

    bool next_static(worker_cursor&, chunk&) noexcept { return false; }
    take next_dynamic(worker_cursor&, chunk& c) noexcept {
        return claim(counter_->next, chunk_, count_, use_cas_, c) ? take::own : take::none;
    }
    void commit(std::span<const worker_record>, site_history&) const {}
    /// One shared pool, no cursor: a participant on a borrowed core may join mid-way.
    static constexpr bool guests_welcome = true;
    /// Ready to run the same loop again (shared_loop's rewind: nothing else changed).
    void rewind() noexcept { counter_->next.store(0, std::memory_order_relaxed); }
    /// The counter, for threads that claim from it directly (loop_driver.hpp); none when a
    /// claim could wrap it (then only the CAS claim is safe).
    std::atomic<std::uint64_t>* direct_next() const noexcept { return use_cas_ ? nullptr : &counter_->next; }
    std::uint64_t chunk_size() const noexcept { return chunk_; }
    std::uint64_t count() const noexcept { return count_; }

private:
    shared_counter* counter_;
    std::uint64_t count_;
    std::uint64_t chunk_;
    bool use_cas_;
};

/// `dynamic[,chunk=c]` as text: parse, print, defaults and the builder (spec_text.hpp; dynamic_spec.cpp).
template <>
struct kind_text<schedule_kind::dynamic> {
    static constexpr std::string_view name = "dynamic";
    static constexpr std::string_view keys = "chunk";
    static constexpr bool bare_chunk = true;
    static void defaults(schedule& s) noexcept;
    static bool read(schedule& s, std::string_view key, std::string_view value, const spec_reader& r);
    static bool finish(const spec_reader& r);
    static std::string print(const schedule& s);
    static schedule make(std::int64_t chunk);
};

}  // namespace aloe::loop

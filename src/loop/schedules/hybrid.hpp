// `hybrid,fs=f,chunk=c` (Kale thesis §2.3, "sd"): the first floor(f·n) iterations are split
// into one block per worker and run with no lock and no shared write; then, with no
// barrier in between, workers take chunks of c from the dynamic remainder [floor(f·n), n)
// through one shared counter. With f = 1 the shared counter is never touched.
#pragma once

#include "loop/partition.hpp"
#include "loop/schedule.hpp"
#include "loop/schedules/spec_text.hpp"

namespace aloe::loop {

class hybrid_split {
public:
    explicit hybrid_split(const loop_setup& s);

    bool next_static(worker_cursor& w, chunk& c) noexcept {
        if (w.static_done) return false;
        w.static_done = true;
        c = block_of(static_cast<std::uint64_t>(w.id), static_count_, threads_);
        return c.begin < c.end;
    }
    take next_dynamic(worker_cursor&, chunk& c) noexcept {
        if (counter_ == nullptr) return take::none;  // no dynamic part
        return claim(counter_->next, chunk_, count_, use_cas_, c) ? take::own : take::none;
    }
    void commit(std::span<const worker_record>, site_history&) const {}
    /// One shared pool, no cursor: a participant on a borrowed core may join mid-way.
    static constexpr bool guests_welcome = true;

private:
    shared_counter* counter_ = nullptr;
    std::uint64_t count_;
    std::uint64_t static_count_;
    std::uint64_t threads_;
    std::uint64_t chunk_;
    bool use_cas_;
};

/// `hybrid,fs=f[,chunk=c]` as text: parse, print, defaults and the builder (spec_text.hpp; hybrid_spec.cpp).
template <>
struct kind_text<schedule_kind::hybrid> {
    static constexpr std::string_view name = "hybrid";
    static constexpr std::string_view keys = "fs, chunk";
    static constexpr bool bare_chunk = false;
    static void defaults(schedule& s) noexcept;
    static bool read(schedule& s, std::string_view key, std::string_view value, const spec_reader& r);
    static bool finish(const spec_reader& r);
    static std::string print(const schedule& s);
    static schedule make(double fs, std::int64_t chunk);
};

}  // namespace aloe::loop

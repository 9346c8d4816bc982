// `static`: one contiguous block per worker (sizes differ by at most one iteration), and
// `static,chunk=c`: chunks of c dealt round-robin (chunk k to worker k mod p). Both are
// OpenMP's static mapping exactly (block_start in partition.hpp: the first n mod p workers
// get the larger blocks), so the interposer can run a program's static loops with them.
// No shared state at all: nothing is written, nothing shared is read.
#pragma once

#include "loop/partition.hpp"
#include "loop/schedule.hpp"
#include "loop/schedules/spec_text.hpp"

namespace aloe::loop {

class static_blocks {
public:
    explicit static_blocks(const loop_setup& s) noexcept
        : count_(s.count), threads_(static_cast<std::uint64_t>(s.threads)) {}

    bool next_static(worker_cursor& w, chunk& c) noexcept {
        if (w.static_done) return false;
        w.static_done = true;
        c = block_of(static_cast<std::uint64_t>(w.id), count_, threads_);
        return c.begin < c.end;
    }
    take next_dynamic(worker_cursor&, chunk&) noexcept { return take::none; }
    void commit(std::span<const worker_record>, site_history&) const {}
    void rewind() noexcept {}  ///< no shared state: each worker's cursor is all

private:
    std::uint64_t count_;
    std::uint64_t threads_;
};

/// cursor.next = how many chunks this worker has taken.
class static_cyclic {
public:
    explicit static_cyclic(const loop_setup& s) noexcept;

    bool next_static(worker_cursor& w, chunk& c) noexcept {
        const std::uint64_t k = static_cast<std::uint64_t>(w.id) + w.next * threads_;
        if (k >= chunks_) return false;
        ++w.next;
        c = clip(k * chunk_, chunk_, count_);
        return true;
    }
    take next_dynamic(worker_cursor&, chunk&) noexcept { return take::none; }
    void commit(std::span<const worker_record>, site_history&) const {}
    void rewind() noexcept {}  ///< no shared state: each worker's cursor is all

private:
    std::uint64_t count_;
    std::uint64_t threads_;
    std::uint64_t chunk_;
    std::uint64_t chunks_;
};

/// `static[,chunk=c]` as text: parse, print, defaults and the builder (spec_text.hpp; static_spec.cpp).
template <>
struct kind_text<schedule_kind::static_block> {
    static constexpr std::string_view name = "static";
    static constexpr std::string_view keys = "chunk";
    static constexpr bool bare_chunk = true;
    static void defaults(schedule& s) noexcept;
    static bool read(schedule& s, std::string_view key, std::string_view value, const spec_reader& r);
    static bool finish(const spec_reader& r);
    static std::string print(const schedule& s);
    static schedule make(std::int64_t chunk);  ///< `static,chunk=c`; plain `static` is schedule()
};

}  // namespace aloe::loop

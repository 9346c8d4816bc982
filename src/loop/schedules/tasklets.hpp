// `tasklets,n=k,fs=f,skew=r,locality=0|1` (Kale & Gropp; Kale thesis §2.4): the first
// floor(f·n) iterations are split into one static block per worker; the rest is cut into k
// tasklets, uniform (r = 1) or skewed largest-first: sizes fall geometrically so the first
// tasklet is r times the last (Kale & Gropp give no formula; their example halves the size
// every few tasklets, which is this with r = 4 over three groups).
//
// Locality: each tasklet is tagged with the worker that ran it the last time this site ran
// (site history). A worker first takes the unclaimed tasklets tagged with its id, in queue
// order, then any unclaimed tasklet in queue order. Tags start (first run, or a changed
// team size or tasklet count) as if tasklet j belonged to worker floor(j·p/k), the static
// owner of its position, so the first run already keeps neighbouring planes together; the
// papers start untagged.
//
// Hot path: own tasklets: a private list position plus one relaxed exchange on the
// tasklet's claim byte; then a relaxed fetch_add on the shared queue cursor and the same
// exchange. A tasklet taken from another worker's list counts as a steal.
#pragma once

#include "loop/partition.hpp"
#include "loop/schedule.hpp"
#include "loop/schedules/spec_text.hpp"

namespace aloe::loop {

class tasklet_queue {
public:
    explicit tasklet_queue(const loop_setup& s);

    bool next_static(worker_cursor& w, chunk& c) noexcept {
        if (w.static_done) return false;
        w.static_done = true;
        c = block_of(static_cast<std::uint64_t>(w.id), static_count_, threads_);
        return c.begin < c.end;
    }

    /// cursor.next: position in this worker's own list.
    take next_dynamic(worker_cursor& w, chunk& c) noexcept {
        const auto id = static_cast<std::size_t>(w.id);
        if (locality_ && !w.own_done) {
            for (std::uint64_t pos = list_start_[id] + w.next; pos < list_start_[id + 1]; ++pos) {
                const std::uint32_t j = own_list_[pos];
                if (try_claim(j, w.id, c)) {
                    w.next = pos + 1 - list_start_[id];
                    return take::own;
                }
            }
            w.own_done = true;
        }
        for (;;) {
            const std::uint64_t j = cursor_->next.fetch_add(1, std::memory_order_relaxed);
            if (j >= tasklets_) return take::none;
            if (try_claim(static_cast<std::uint32_t>(j), w.id, c))
                return locality_ && owner_[j] != w.id ? take::stolen : take::own;
        }
    }

    void commit(std::span<const worker_record> records, site_history& h) const;

    /// Tasklet boundaries for `dynamic` iterations after `first`, largest first by `skew`.
    /// bounds has k+1 entries. Exposed for tests.
    static void cut(std::uint64_t first, std::uint64_t dynamic, double skew, std::span<std::uint64_t> bounds);

private:
    /// Claims tasklet j for worker `id`; false when taken already or empty.
    bool try_claim(std::uint32_t j, int id, chunk& c) noexcept {
        if (claimed_[j].exchange(1, std::memory_order_relaxed) != 0) return false;
        ran_by_[j] = id;  // only the claimer writes this entry; read after the join
        c = {bounds_[j], bounds_[j + 1]};
        return c.begin < c.end;
    }

    std::span<std::uint64_t> bounds_;              // tasklets_+1
    std::span<std::int32_t> owner_;                // tag from history (read-only in the loop)
    std::span<std::int32_t> ran_by_;               // who ran it this time
    std::span<std::atomic<std::uint8_t>> claimed_;
    std::span<std::uint32_t> own_list_;            // tasklets grouped by owner, queue order
    std::span<std::uint64_t> list_start_;          // threads_+1 offsets into own_list_
    shared_counter* cursor_ = nullptr;
    std::uint64_t tasklets_ = 0;
    std::uint64_t static_count_;
    std::uint64_t threads_;
    bool locality_;
};

/// `tasklets,n=k[,fs=f][,skew=r][,locality=0|1]` as text: parse, print, defaults and the builder (spec_text.hpp; tasklets_spec.cpp).
template <>
struct kind_text<schedule_kind::tasklets> {
    static constexpr std::string_view name = "tasklets";
    static constexpr std::string_view keys = "n, fs, skew, locality";
    static constexpr bool bare_chunk = false;
    static void defaults(schedule& s) noexcept;
    static bool read(schedule& s, std::string_view key, std::string_view value, const spec_reader& r);
    static bool finish(const spec_reader& r);
    static std::string print(const schedule& s);
    static schedule make(std::int64_t count, double fs, double skew, bool locality);
};

}  // namespace aloe::loop

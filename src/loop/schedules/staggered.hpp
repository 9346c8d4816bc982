// `staggered,fs=f,chunk=c` (Kale thesis ch. 5, "sds"): worker t owns the block static would
// give it, [n·t/p, n·(t+1)/p). It runs the first f of its block statically, then its own
// queue (the rest of its block, in chunks of c, in order), then steals.
//
// Steal order (find_victim): distance d = 1, 2, …: of t−d and t+d (ids outside [0, p) are
// skipped, not wrapped), try the one with more iterations left; if both are empty, d+1.
// Queues only shrink, so a distance found empty stays empty: the cursor remembers it and
// the whole search costs O(p) reads per worker per loop.
//
// Hot path (own queue): one relaxed fetch_add on the worker's own queue line, which thieves
// touch only once the owner's neighbours have run dry. With queue=mutex the claim takes a
// per-queue std::mutex instead, as in the thesis (kept to measure the difference).
// With no imbalance every worker drains its own queue and the map equals static's.
// Counters: chunks (own and stolen), steals.
//
// Weighted blocks (used by `adaptive` when a core is persistently slow): when the setup
// carries block_weights, worker t's block is its weight's share of [0, n) instead of n/p
// (weighted_split's largest-remainder split), so the slow core starts with less work and
// the dynamic part only absorbs what the weights did not foresee.
#pragma once

#include "loop/partition.hpp"
#include "loop/schedule.hpp"
#include "loop/schedules/spec_text.hpp"

#include <mutex>

namespace aloe::loop {

struct alignas(runtime::cache_line) staggered_queue {
    std::atomic<std::uint64_t> next{0};
    std::uint64_t end = 0;
    std::uint64_t static_begin = 0;  // the owner's static part [static_begin, next's start)
    std::uint64_t static_end = 0;
    std::mutex lock;  // used only by queue=mutex
};

template <queue_claim Claim>
class staggered_queues {
public:
    explicit staggered_queues(const loop_setup& s);

    bool next_static(worker_cursor& w, chunk& c) noexcept {
        if (w.static_done) return false;
        w.static_done = true;
        const staggered_queue& q = queues_[static_cast<std::size_t>(w.id)];
        c = {q.static_begin, q.static_end};
        return c.begin < c.end;
    }

    take next_dynamic(worker_cursor& w, chunk& c) noexcept {
        if (!w.own_done) [[likely]] {
            if (claim_from(queues_[static_cast<std::size_t>(w.id)], c)) return take::own;
            w.own_done = true;
        }
        return steal(w, c);
    }

    void commit(std::span<const worker_record>, site_history&) const {}

private:
    bool claim_from(staggered_queue& q, chunk& c) noexcept {
        if constexpr (Claim == queue_claim::atomic) {
            return claim(q.next, chunk_, q.end, use_cas_, c);
        } else {
            std::lock_guard guard(q.lock);
            const std::uint64_t b = q.next.load(std::memory_order_relaxed);
            if (b >= q.end) return false;
            c = clip(b, chunk_, q.end);
            q.next.store(c.end, std::memory_order_relaxed);
            return true;
        }
    }

    static std::uint64_t remaining(const staggered_queue& q) noexcept {
        const std::uint64_t b = q.next.load(std::memory_order_relaxed);
        return b < q.end ? q.end - b : 0;
    }

    [[gnu::noinline]] take steal(worker_cursor& w, chunk& c) noexcept;

    std::span<staggered_queue> queues_;
    std::uint64_t threads_;
    std::uint64_t chunk_;
    bool use_cas_;
};

extern template class staggered_queues<queue_claim::atomic>;
extern template class staggered_queues<queue_claim::mutex>;

/// `staggered,fs=f[,chunk=c][,queue=atomic|mutex]` as text: parse, print, defaults and the builder (spec_text.hpp; staggered_spec.cpp).
template <>
struct kind_text<schedule_kind::staggered> {
    static constexpr std::string_view name = "staggered";
    static constexpr std::string_view keys = "fs, chunk, queue";
    static constexpr bool bare_chunk = false;
    static void defaults(schedule& s) noexcept;
    static bool read(schedule& s, std::string_view key, std::string_view value, const spec_reader& r);
    static bool finish(const spec_reader& r);
    static std::string print(const schedule& s);
    static schedule make(double fs, std::int64_t chunk, queue_claim claim);
};

}  // namespace aloe::loop

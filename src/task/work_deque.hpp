// A work-stealing deque of task pointers (Chase & Lev, SPAA 2005), with the C11 memory
// orderings of Lê, Pop, Cohen and Zappa Nardelli ("Correct and efficient work-stealing for
// weak memory models", PPoPP 2013), which are proved correct for that algorithm.
//
// One owner pushes and pops at the bottom (LIFO: the newest task, whose data is warm in its
// cache); any thread steals at the top (FIFO: the oldest task, the largest piece of a
// recursive split). Only a take of the last element races with steals; both sides settle it
// with a CAS on `top`.
//
// Orderings (the argument, operation by operation; `t` = top, `b` = bottom):
//   push   store the element (relaxed), release fence, store b+1 (release, for TSan; the
//          fence is what the proof needs): a thief that reads the new b sees the element.
//   pop    b-1 stored (relaxed), then a seq_cst fence, then t loaded: the fence orders the
//          store of b before the load of t against the thief's load of t → fence → load of
//          b; without it both could take the last element. Only when t == b (one element
//          left) does the owner CAS t (seq_cst), racing the thieves.
//   steal  load t (acquire), seq_cst fence, load b (acquire): the pair of seq_cst fences
//          (here and in pop) is the Dekker-style handshake; the element is read before the
//          CAS on t, and a failed CAS discards it (another thief or the owner took it).
// Top, cached: top only grows, so the owner's last acquire reading of it (`top_seen_`) is a
//   lower bound, and b - top_seen_ an upper bound of the size: while that bound leaves room,
//   the cell push writes (b mod capacity, element b - capacity before) is one every thief
//   has finished reading, because the reading of top that showed it taken was an acquire of
//   the taker's CAS (a release), earlier in the owner's order than this write. push re-reads
//   top only when the bound says full. Reading top at every push cost a cache miss per spawn
//   while thieves CAS it (a flood from one thread: the line moves at every steal).
// Growth: the owner copies the live range into a buffer twice as large and publishes it
// with a release store; thieves load the buffer pointer with acquire (consume in the paper).
// Old buffers are kept until the deque dies: a thief may still read from one, and the
// memory is bounded by the largest size reached (the sum of halves).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace aloe::task {

template <class T>
class work_deque {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= sizeof(void*));

public:
    explicit work_deque(std::size_t capacity = 256) {
        std::size_t c = 16;
        while (c < capacity) c *= 2;
        buffers_.push_back(std::make_unique<ring>(c));
        ring_.store(buffers_.back().get(), std::memory_order_relaxed);
    }
    work_deque(const work_deque&) = delete;
    work_deque& operator=(const work_deque&) = delete;

    /// Owner only. May allocate (growth); throws std::bad_alloc then, leaving the deque as it was.
    void push(T item) {
        const std::int64_t b = bottom_.load(std::memory_order_relaxed);
        ring* r = ring_.load(std::memory_order_relaxed);
        if (size_reaches(b, static_cast<std::int64_t>(r->mask) + 1)) r = grow(r, top_seen_, b);
        r->put(b, item);
        std::atomic_thread_fence(std::memory_order_release);
        // Release as well: ThreadSanitizer does not model fences, and without it reports the
        // task's fields, written before the push, as racing with the thief that runs it. The
        // same instruction as a relaxed store on x86.
        bottom_.store(b + 1, std::memory_order_release);
    }

    /// Owner only: the newest element, or false when empty.
    bool pop(T& out) noexcept {
        const std::int64_t b = bottom_.load(std::memory_order_relaxed) - 1;
        ring* r = ring_.load(std::memory_order_relaxed);
        bottom_.store(b, std::memory_order_relaxed);
        std::atomic_thread_fence(std::memory_order_seq_cst);
        std::int64_t t = top_.load(std::memory_order_relaxed);
        if (t > b) {  // it was empty
            bottom_.store(b + 1, std::memory_order_relaxed);
            return false;
        }
        out = r->get(b);
        if (t == b) {  // the last element: race the thieves for it
            const bool won = top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed);
            bottom_.store(b + 1, std::memory_order_relaxed);
            return won;
        }
        return true;
    }

    enum class steal_result { taken, empty, lost };

    /// Any thread: the oldest element. `lost`: another thread took it first (try again).
    steal_result steal(T& out) noexcept {
        std::int64_t t = top_.load(std::memory_order_acquire);
        std::atomic_thread_fence(std::memory_order_seq_cst);
        const std::int64_t b = bottom_.load(std::memory_order_acquire);
        if (t >= b) return steal_result::empty;
        ring* r = ring_.load(std::memory_order_acquire);
        out = r->get(t);
        if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed))
            return steal_result::lost;
        return steal_result::taken;
    }

    enum class take_result { taken, stolen, none };

    /// Owner only, for a spawn past a bound (>= 1): with at least `bound` elements queued,
    /// the oldest, as a thief takes it (`taken`), unless a thief took from the top since the
    /// owner's last call that reached the bound (`stolen`: thieves are taking the oldest
    /// already; the owner's own takes do not count); `none` below the bound, or when a thief
    /// took it first. Reads top only at the bound, as push does (see "Top, cached"). No
    /// fence: the owner's own bottom is current (the fence in steal orders a thief's reading
    /// of bottom after its reading of top, against a pop in flight).
    take_result take_oldest_past(std::int64_t bound, T& out) noexcept {
        if (!size_reaches(bottom_.load(std::memory_order_relaxed), bound)) return take_result::none;
        std::int64_t t = top_seen_;  // current: size_reaches just read top, and t < bottom
        if (t != top_looked_) {
            top_looked_ = t;
            return take_result::stolen;
        }
        out = ring_.load(std::memory_order_relaxed)->get(t);
        const bool won = top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed);
        top_seen_ = top_looked_ = won ? t + 1 : t;  // a failed CAS loaded the current top into t
        return won ? take_result::taken : take_result::none;
    }

    /// A snapshot (any thread); exact only when no one else touches the deque.
    std::int64_t size() const noexcept {
        const std::int64_t b = bottom_.load(std::memory_order_relaxed);
        const std::int64_t t = top_.load(std::memory_order_relaxed);
        return b > t ? b - t : 0;
    }
    bool maybe_empty() const noexcept { return size() == 0; }

private:
    struct ring {
        std::size_t mask;
        std::unique_ptr<std::atomic<T>[]> cells;
        explicit ring(std::size_t capacity) : mask(capacity - 1), cells(new std::atomic<T>[capacity]) {}
        // Relaxed: the fences of push/pop/steal order these accesses.
        void put(std::int64_t i, T v) noexcept { cells[static_cast<std::size_t>(i) & mask].store(v, std::memory_order_relaxed); }
        T get(std::int64_t i) const noexcept { return cells[static_cast<std::size_t>(i) & mask].load(std::memory_order_relaxed); }
    };

    // Owner only, with b its bottom: at least n elements? The cached lower bound of top stands
    // in for top (see "Top, cached"); top, a line the thieves write, is re-read only when the
    // bound says yes, and `top_seen_` is then current.
    bool size_reaches(std::int64_t b, std::int64_t n) noexcept {
        if (b - top_seen_ < n) return false;
        top_seen_ = top_.load(std::memory_order_acquire);
        return b - top_seen_ >= n;
    }

    ring* grow(ring* old, std::int64_t t, std::int64_t b) {
        buffers_.reserve(buffers_.size() + 1);  // may throw before anything changed
        auto bigger = std::make_unique<ring>((old->mask + 1) * 2);
        for (std::int64_t i = t; i < b; ++i) bigger->put(i, old->get(i));
        ring* r = bigger.get();
        buffers_.push_back(std::move(bigger));
        ring_.store(r, std::memory_order_release);
        return r;
    }

    alignas(64) std::atomic<std::int64_t> top_{0};
    alignas(64) std::atomic<std::int64_t> bottom_{0};
    std::int64_t top_seen_ = 0;  // owner only: a lower bound of top (see "Top, cached")
    std::int64_t top_looked_ = 0;  // owner only: top at take_oldest_past's last call that reached its bound
    std::atomic<ring*> ring_{nullptr};
    std::vector<std::unique_ptr<ring>> buffers_;  // owner only: every ring made (see Growth)
};

}  // namespace aloe::task

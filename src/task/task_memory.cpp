// Memory for tasks and shared states: a per-thread cache of blocks in four size classes
// (64, 128, 256, 512 bytes), so a spawn in the steady state takes a block from a list the
// thread alone touches. Blocks drift: a task made on one thread is often freed on another (a
// thief). A cache that grows past two batches hands a batch of `batch` blocks to a shared
// depot, and a thread whose cache is empty takes a batch from there before it cuts a new
// block: one lock per batch, and no malloc/free pair across threads in the steady state
// (glibc's arenas made that 40% of a flat spawn loop's time). New blocks are cut in address
// order from the thread's 64 KiB slab, not asked of malloc one at a time: a graph built
// ahead of its run (a dataflow grid of millions of nodes) then lies in memory in creation
// order, without malloc's headers and alignment padding between blocks (Taskflow's wavefront
// through aloe::dataflow, 4 M joins, took 2.7x the time on one thread with a memalign per
// block). Blocks are never freed one by one: an exiting thread's free blocks and its slab's
// uncut rest go to the depot, and the process keeps its peak, as the depot always did.
// Larger objects use operator new. Under AddressSanitizer and ThreadSanitizer every block
// goes to operator new/delete so the sanitizers see each use.
#include "task/task_memory.hpp"

#include "runtime/team.hpp"

#include <aloe/task.hpp>

#include <array>
#include <atomic>
#include <mutex>
#include <vector>
#include <cstddef>
#include <new>

namespace aloe::detail {

namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool use_cache = false;
#else
constexpr bool use_cache = true;
#endif

constexpr std::size_t classes = 4;
constexpr std::size_t smallest = 64;
constexpr std::size_t batch = 256;
constexpr std::align_val_t block_alignment{64};
constexpr std::size_t slab_bytes = std::size_t{64} << 10;

constexpr int class_of(std::size_t bytes) noexcept {
    std::size_t size = smallest;
    for (int c = 0; c < static_cast<int>(classes); ++c, size *= 2)
        if (bytes <= size) return c;
    return -1;
}

struct free_block {
    free_block* next;
};

// A list of blocks handed between threads: `batch` of them, fewer from an exiting thread.
struct block_list {
    free_block* head;
    std::size_t count;
};

// Batches handed between threads, per class. Never destroyed (threads may exit after static
// destructors ran); the blocks stay reachable from here.
struct depot {
    std::mutex mutex;
    std::array<std::vector<block_list>, classes> batches;
};

// The depot as the fork hooks see it, without the guarded static (a fork during its first
// use would wait on the guard for ever in the child).
constinit std::atomic<depot*> depot_for_fork{nullptr};

// A fork while another thread holds the depot's lock (a batch in flight) would leave it
// held for ever in the child, whose threads then stop at their first refill.
void lock_depot_for_fork() noexcept {
    if (depot* d = depot_for_fork.load(std::memory_order_acquire)) d->mutex.lock();
}
void unlock_depot_after_fork() noexcept {
    if (depot* d = depot_for_fork.load(std::memory_order_acquire)) d->mutex.unlock();
}

depot& shared_depot() {
    static depot* const d = [] {
        auto* made = new depot;
        depot_for_fork.store(made, std::memory_order_release);
        runtime::register_fork_hooks(runtime::fork_rank::task_memory,
                                     {&lock_depot_for_fork, &unlock_depot_after_fork, &unlock_depot_after_fork});
        return made;
    }();
    return *d;
}

struct block_cache {
    std::array<free_block*, classes> heads{};
    std::array<std::size_t, classes> counts{};
    std::array<char*, classes> slab_next{};  // the current slab's first uncut byte
    std::array<char*, classes> slab_end{};
    ~block_cache() {
        // A thread's leftovers, and its slabs' uncut rest, go to the depot: blocks live in
        // slabs and are never freed one by one.
        for (std::size_t c = 0; c < classes; ++c) {
            while (slab_next[c] != slab_end[c]) push(c, cut(c));
            while (counts[c] >= batch) give_batch(c, batch);
            if (counts[c] > 0) give_batch(c, counts[c]);
        }
    }
    void push(std::size_t c, void* p) noexcept {
        auto* b = static_cast<free_block*>(p);
        b->next = heads[c];
        heads[c] = b;
        ++counts[c];
    }
    void* cut(std::size_t c) noexcept {
        char* p = slab_next[c];
        slab_next[c] = p + (smallest << c);
        return p;
    }
    // An empty list's refill: a batch from the depot, else the current slab's next block.
    [[gnu::noinline]] void* refill_or_cut(std::size_t c) {
        if (take_batch(c)) return pop(c);
        if (slab_next[c] == slab_end[c]) {
            slab_next[c] = static_cast<char*>(::operator new(slab_bytes, block_alignment));
            slab_end[c] = slab_next[c] + slab_bytes;
        }
        return cut(c);
    }
    void* pop(std::size_t c) noexcept {
        free_block* b = heads[c];
        heads[c] = b->next;
        --counts[c];
        return b;
    }
    void give_batch(std::size_t c, std::size_t n) noexcept {
        free_block* first = heads[c];
        free_block* last = first;
        for (std::size_t i = 1; i < n; ++i) last = last->next;
        heads[c] = last->next;
        last->next = nullptr;
        counts[c] -= n;
        depot& d = shared_depot();
        std::lock_guard lock(d.mutex);
        try {
            d.batches[c].push_back({first, n});
        } catch (...) {  // no memory for the depot's vector: the batch is lost (slabs are never freed)
        }
    }
    bool take_batch(std::size_t c) noexcept {
        depot& d = shared_depot();
        std::lock_guard lock(d.mutex);
        if (d.batches[c].empty()) return false;
        heads[c] = d.batches[c].back().head;
        counts[c] = d.batches[c].back().count;
        d.batches[c].pop_back();
        return true;
    }
};

block_cache& cache() noexcept {
    static thread_local block_cache c;
    return c;
}

}  // namespace

std::mutex& task_memory_depot_mutex() { return shared_depot().mutex; }

void* task_allocate(std::size_t bytes) {
    const int c = class_of(bytes);
    if (!use_cache || c < 0) return ::operator new(bytes, block_alignment);
    block_cache& bc = cache();
    const auto k = static_cast<std::size_t>(c);
    return bc.heads[k] != nullptr ? bc.pop(k) : bc.refill_or_cut(k);
}

void task_deallocate(void* p, std::size_t bytes) noexcept {
    if (p == nullptr) return;
    const int c = class_of(bytes);
    if (!use_cache || c < 0) return ::operator delete(p, block_alignment);
    block_cache& bc = cache();
    const auto k = static_cast<std::size_t>(c);
    bc.push(k, p);
    if (bc.counts[k] >= 2 * batch) bc.give_batch(k, batch);
}

}  // namespace aloe::detail

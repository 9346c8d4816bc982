// Memory for tasks and shared states: a per-thread cache of blocks in four size classes
// (64, 128, 256, 512 bytes), so a spawn in the steady state takes a block from a list the
// thread alone touches. Blocks drift: a task made on one thread is often freed on another (a
// thief). A cache that grows past two batches hands a batch of `batch` blocks to a shared
// depot, and a thread whose cache is empty takes a batch from there before it asks malloc:
// one lock per batch, and no malloc/free pair across threads in the steady state (glibc's
// arenas made that 40% of a flat spawn loop's time). Larger objects use operator new. Under
// AddressSanitizer and ThreadSanitizer every block goes to operator new/delete so the
// sanitizers see each use.
#include <aloe/task.hpp>

#include <array>
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

constexpr int class_of(std::size_t bytes) noexcept {
    std::size_t size = smallest;
    for (int c = 0; c < static_cast<int>(classes); ++c, size *= 2)
        if (bytes <= size) return c;
    return -1;
}

struct free_block {
    free_block* next;
};

// Batches of `batch` blocks handed between threads, per class. Never destroyed (threads may
// exit after static destructors ran); the blocks stay reachable from here.
struct depot {
    std::mutex mutex;
    std::array<std::vector<free_block*>, classes> batches;
};

depot& shared_depot() {
    static auto* d = new depot;
    return *d;
}

struct block_cache {
    std::array<free_block*, classes> heads{};
    std::array<std::size_t, classes> counts{};
    ~block_cache() {
        // A thread's leftovers go to the depot in batches (others will use them), the rest to
        // the allocator.
        for (std::size_t c = 0; c < classes; ++c) {
            while (counts[c] >= batch) give_batch(c);
            while (free_block* b = heads[c]) {
                heads[c] = b->next;
                ::operator delete(b, block_alignment);
            }
        }
    }
    void give_batch(std::size_t c) noexcept {
        free_block* first = heads[c];
        free_block* last = first;
        for (std::size_t i = 1; i < batch; ++i) last = last->next;
        heads[c] = last->next;
        last->next = nullptr;
        counts[c] -= batch;
        depot& d = shared_depot();
        std::lock_guard lock(d.mutex);
        try {
            d.batches[c].push_back(first);
        } catch (...) {  // no memory for the depot's vector: free the batch
            while (first != nullptr) {
                free_block* next = first->next;
                ::operator delete(first, block_alignment);
                first = next;
            }
        }
    }
    bool take_batch(std::size_t c) noexcept {
        depot& d = shared_depot();
        std::lock_guard lock(d.mutex);
        if (d.batches[c].empty()) return false;
        heads[c] = d.batches[c].back();
        d.batches[c].pop_back();
        counts[c] = batch;
        return true;
    }
};

block_cache& cache() noexcept {
    static thread_local block_cache c;
    return c;
}

}  // namespace

void* task_allocate(std::size_t bytes) {
    const int c = class_of(bytes);
    if (!use_cache || c < 0) return ::operator new(bytes, block_alignment);
    block_cache& bc = cache();
    const auto k = static_cast<std::size_t>(c);
    if (bc.heads[k] != nullptr || bc.take_batch(k)) {
        free_block* b = bc.heads[k];
        bc.heads[k] = b->next;
        --bc.counts[k];
        return b;
    }
    return ::operator new(smallest << c, block_alignment);
}

void task_deallocate(void* p, std::size_t bytes) noexcept {
    if (p == nullptr) return;
    const int c = class_of(bytes);
    if (!use_cache || c < 0) return ::operator delete(p, block_alignment);
    block_cache& bc = cache();
    const auto k = static_cast<std::size_t>(c);
    auto* b = static_cast<free_block*>(p);
    b->next = bc.heads[k];
    bc.heads[k] = b;
    if (++bc.counts[k] >= 2 * batch) bc.give_batch(k);
}

}  // namespace aloe::detail

#include "runtime/arena.hpp"

#include <algorithm>
#include <cstdint>

namespace aloe::runtime {

namespace {

// First block: enough for the per-thread records and queues of a 64-thread team.
constexpr std::size_t first_block_bytes = 16 * 1024;

std::size_t round_up(std::size_t n) { return (n + cache_line - 1) / cache_line * cache_line; }

}  // namespace

void* arena::allocate(std::size_t bytes) {
    bytes = round_up(bytes);
    wanted_ += bytes;
    if (blocks_.empty() || blocks_.back().size - blocks_.back().used < bytes) {
        const std::size_t size = std::max({bytes, first_block_bytes, blocks_.empty() ? 0 : blocks_.back().size * 2});
        block b;
        b.storage = std::make_unique<std::byte[]>(size + cache_line);
        const auto addr = reinterpret_cast<std::uintptr_t>(b.storage.get());
        b.aligned = b.storage.get() + (round_up(addr) - addr);
        b.size = size;
        blocks_.push_back(std::move(b));
    }
    block& b = blocks_.back();
    void* p = b.aligned + b.used;
    b.used += bytes;
    return p;
}

void arena::reset() noexcept {
    if (blocks_.size() > 1) {
        // Keep the largest block only if it alone covers the last round; otherwise drop all
        // and let the next allocate() make one block of the right size.
        std::size_t largest = 0;
        for (const block& b : blocks_) largest = std::max(largest, b.size);
        if (largest >= wanted_) {
            auto it = std::max_element(blocks_.begin(), blocks_.end(),
                                       [](const block& a, const block& b) { return a.size < b.size; });
            block keep = std::move(*it);
            blocks_.clear();
            blocks_.push_back(std::move(keep));
        } else {
            blocks_.clear();
            try {
                (void)allocate(wanted_);
            } catch (...) {
                // Out of memory here only means the next loop allocates again.
            }
        }
    }
    for (block& b : blocks_) b.used = 0;
    wanted_ = 0;
}

std::vector<std::span<const std::byte>> arena::used_regions() const {
    std::vector<std::span<const std::byte>> out;
    for (const block& b : blocks_)
        if (b.used > 0) out.emplace_back(b.aligned, b.used);
    return out;
}

std::size_t arena::capacity() const noexcept {
    std::size_t total = 0;
    for (const block& b : blocks_) total += b.size;
    return total;
}

}  // namespace aloe::runtime

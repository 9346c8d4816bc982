// Scratch memory for one loop's shared state (queues, tasklet tables, per-thread records).
//
// A team owns one arena and resets it before each loop, so the steady state allocates
// nothing: after the first few loops the largest block covers every request. Blocks never
// move, so spans stay valid until reset().
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <span>
#include <type_traits>
#include <vector>

namespace aloe::runtime {

inline constexpr std::size_t cache_line = 64;

class arena {
public:
    /// n value-initialised objects of T, each array aligned to a cache line.
    template <class T>
    std::span<T> make(std::size_t n) {
        static_assert(std::is_trivially_destructible_v<T>, "arena objects are never destroyed");
        static_assert(alignof(T) <= cache_line);
        if (n == 0) return {};
        void* p = allocate(n * sizeof(T));
        T* first = static_cast<T*>(p);
        for (std::size_t i = 0; i < n; ++i) ::new (static_cast<void*>(first + i)) T();
        return {first, n};
    }

    /// Forgets every allocation. When the last round needed several blocks, they are
    /// merged into one block big enough for all of them.
    void reset() noexcept;

    std::size_t capacity() const noexcept;

    /// The bytes handed out since the last reset (tests check that a schedule's static
    /// part writes none of them).
    std::vector<std::span<const std::byte>> used_regions() const;

private:
    struct block {
        std::unique_ptr<std::byte[]> storage;
        std::byte* aligned = nullptr;
        std::size_t size = 0;
        std::size_t used = 0;
    };

    void* allocate(std::size_t bytes);

    std::vector<block> blocks_;
    std::size_t wanted_ = 0;  // bytes asked for since the last reset
};

}  // namespace aloe::runtime

// How many times each iteration of a loop ran, for the tests that check every iteration runs
// exactly once while participants leave or join a running loop.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>

namespace aloe::loop::test {

struct iteration_hits {
    explicit iteration_hits(std::size_t size) : count(new std::atomic<int>[size]), n(size) {
        for (std::size_t i = 0; i < n; ++i) count[i].store(0);
    }
    std::unique_ptr<std::atomic<int>[]> count;
    std::size_t n;
    /// The first index run twice or never, or -1.
    long long first_wrong() const {
        for (std::size_t i = 0; i < n; ++i)
            if (count[i].load() != 1) return static_cast<long long>(i);
        return -1;
    }
};

}  // namespace aloe::loop::test

#include "mpi/call_table.hpp"

namespace aloe::mpi {

namespace {

// User-space addresses fit in 56 bits; the call (plus one, so a key is never 0) goes above.
std::uint64_t key_of(mpi_call call, const void* site) noexcept {
    return (static_cast<std::uint64_t>(call) + 1) << 56 | (reinterpret_cast<std::uintptr_t>(site) & ((1ULL << 56) - 1));
}

std::size_t slot_of(std::uint64_t key) noexcept {
    key ^= key >> 29;
    key *= 0x9E3779B97F4A7C15ULL;
    return static_cast<std::size_t>(key >> 40) & (call_table::capacity - 1);
}

}  // namespace

void call_table::add(slot& s, std::uint64_t inside_ticks) noexcept {
    s.calls.fetch_add(1, std::memory_order_relaxed);
    s.inside_ticks.fetch_add(inside_ticks, std::memory_order_relaxed);
    std::uint64_t max = s.max_ticks.load(std::memory_order_relaxed);
    while (inside_ticks > max && !s.max_ticks.compare_exchange_weak(max, inside_ticks, std::memory_order_relaxed)) {
    }
}

void call_table::record(mpi_call call, const void* site, std::uint64_t inside_ticks) noexcept {
    const std::uint64_t key = key_of(call, site);
    std::size_t i = slot_of(key);
    for (std::size_t probes = 0; probes < max_probes; ++probes, i = (i + 1) & (capacity - 1)) {
        std::uint64_t seen = slots_[i].key.load(std::memory_order_acquire);
        if (seen == 0 && slots_[i].key.compare_exchange_strong(seen, key, std::memory_order_acq_rel)) seen = key;
        if (seen == key) return add(slots_[i], inside_ticks);
    }
    add(overflow_[static_cast<std::size_t>(call)], inside_ticks);
}

std::vector<call_site_record> call_table::rows() const {
    std::vector<call_site_record> out;
    auto row = [&](const slot& s, mpi_call call, const void* site) {
        const std::uint64_t calls = s.calls.load(std::memory_order_relaxed);
        if (calls == 0) return;
        out.push_back({call, site, calls, s.inside_ticks.load(std::memory_order_relaxed), s.max_ticks.load(std::memory_order_relaxed)});
    };
    for (const slot& s : slots_) {
        const std::uint64_t key = s.key.load(std::memory_order_acquire);
        if (key == 0) continue;
        row(s, static_cast<mpi_call>((key >> 56) - 1), reinterpret_cast<const void*>(key & ((1ULL << 56) - 1)));
    }
    for (int c = 0; c < mpi_call_count; ++c) row(overflow_[static_cast<std::size_t>(c)], static_cast<mpi_call>(c), nullptr);
    return out;
}

void call_table::clear() noexcept {
    for (slot& s : slots_) {
        s.key.store(0, std::memory_order_relaxed);
        s.calls.store(0, std::memory_order_relaxed);
        s.inside_ticks.store(0, std::memory_order_relaxed);
        s.max_ticks.store(0, std::memory_order_relaxed);
    }
    for (slot& s : overflow_) {
        s.calls.store(0, std::memory_order_relaxed);
        s.inside_ticks.store(0, std::memory_order_relaxed);
        s.max_ticks.store(0, std::memory_order_relaxed);
    }
}

call_table& process_calls() noexcept {
    static call_table* const table = new call_table;
    return *table;
}

}  // namespace aloe::mpi

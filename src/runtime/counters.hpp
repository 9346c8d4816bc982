// Counters: the one registry of named, cheap, always-on measurements, readable at any time
// (DESIGN.md, "Concepts": feedback reads counters). Modelled on HPX's performance counters.
//
// Names. `/object{instance}/counter`. A counter is registered once as (object, counter name,
// unit, help). A process-wide counter (no instance given) is readable as its total,
// `/threads{locality#0/total}/chunks`, and per worker slot,
// `/threads{locality#0/worker-thread#3}/chunks`. A counter with its own instance (a loop site,
// a region: `/loop{site#12}/iterations`, `/region{7}/time`) is a separate counter, readable as
// that one instance. include/aloe/stats.hpp lists aloe's own counters and their old dotted
// names (`loop.chunks`), which stay readable as aliases.
//
// Storage. Every thread that counts owns a thread_counters block: a lane of chunks of
// `counters_per_chunk` values indexed by counter id (its own counts), and, once it attributes
// counts to workers (add_for_worker), one lane per worker slot. Only the owner writes its
// lanes; a reader sums, under the registry's lock, every live block plus the retired lanes,
// into which a block is folded when its thread exits. A thread has a worker slot: the one it
// declares (set_counter_worker: team workers, or a thread reporting under its OpenMP thread
// number), else the lowest slot no live thread holds; `worker-thread#k` reads what slot k's
// threads counted plus what was attributed to worker k.
//
// Hot path (counter_handle::add, add_for_worker), per call:
//   sources      this thread's block (a thread_local pointer, never null), its chunk;
//   cache lines  the block's chunk-pointer line and the value's line, both written only by
//                this thread; no shared line is written, no read-modify-write is done;
//   orders       relaxed load + relaxed store of the value (single writer: a reader may see
//                the old or the new sum, never a torn one); relaxed load of the chunk pointer
//                (the owner published it);
//   slow path    a chunk or block not made yet (first count of a thread, or of a counter in a
//                chunk it has not touched), a worker out of range, a disabled handle, or a
//                thread already past its exit fold: add_slow / add_for_worker_slow, out of
//                line; they allocate (chunks of 512 bytes) and may take the registry's lock.
//
// Derived counters (register_derived_counter): a counter whose value is computed from up to
// three registered ones when it is read, (a − b) × scale / c (HPX's idle-rate, average task
// time, ...). Nothing is stored for it and add() never reaches it (no handle names it). A
// process-wide derived counter is per worker too: its `worker-thread#k` instance applies the
// formula to the operands' worker-k instances, its total to their totals. A reader's delta of
// a derived counter is the formula over its operands' deltas (counter_window), so an
// interval's idle-rate is that interval's, never a difference of two rates.
//
// Capacity: `max_counters` counters (chunks are made as they are touched, so a thread's block
// grows with the counters it uses, by 512 bytes at a time); registering one more throws.
// Fork: a child of fork() keeps the registered counters and starts every count at 0 (only
// the forking thread's block is kept); readers copied into it start from 0 too.
#pragma once

#include "runtime/config.hpp"

#include <aloe/stats.hpp>

#include <atomic>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aloe::runtime {

/// What one counter is. `object`, `name` and `instance` must not contain '{', '}' or '*';
/// `object` no '/' either.
struct counter_spec {
    std::string_view object = {};  ///< "threads", "loop", "region"
    std::string_view name = {};    ///< "chunks", "time/busy"
    aloe::counter_unit unit = aloe::counter_unit::count;
    std::string_view help = {};
    /// Empty: a process-wide counter, with a total and a worker-slot instance per slot.
    /// Otherwise its one instance ("site#12"), never "locality#0/...".
    std::string_view instance = {};
    /// An old name readable as the total ("loop.chunks"), or empty.
    std::string_view alias = {};
};

inline constexpr std::uint32_t counters_per_chunk = 64;  // 512 bytes: 8 cache lines per chunk
inline constexpr std::uint32_t max_counters = 131072;  // the interposer's 8192 loop and 8192 region sites × 3-4 each, and more
inline constexpr int max_counter_workers = max_num_threads;  // worker slots: one per possible thread

namespace detail {

inline constexpr std::uint32_t lane_chunks = max_counters / counters_per_chunk + 1;  // +1: disabled handles

struct alignas(64) counter_chunk {
    std::atomic<std::uint64_t> values[counters_per_chunk]{};
};

/// A row of values indexed by counter id, made a chunk at a time.
struct counter_lane {
    std::atomic<counter_chunk*> chunks[lane_chunks]{};
};

/// One thread's counts. Written only by its thread (the registry zeroes it in a fork child).
struct alignas(64) thread_counters {
    counter_lane own;
    /// Lanes of counts attributed to workers (add_for_worker), max_counter_workers of them;
    /// null until this thread attributes.
    std::atomic<std::atomic<counter_lane*>*> for_worker{nullptr};
    int worker = -1;  ///< its slot; −1: none (every slot is held). Guarded by the registry's lock.
};

/// This thread's block: a shared empty block (every chunk null) until its first count.
/// initial-exec: one %fs-relative load from any of aloe's libraries, where the default model
/// calls __tls_get_addr in libaloe.so (as omp/team_region.hpp's thread view does); a
/// libaloe.so loaded by dlopen() takes these 8 bytes from glibc's static TLS surplus.
extern constinit thread_local thread_counters* this_thread __attribute__((tls_model("initial-exec")));

inline void bump(std::atomic<std::uint64_t>& value, std::uint64_t v) noexcept {
    value.store(value.load(std::memory_order_relaxed) + v, std::memory_order_relaxed);
}

}  // namespace detail

/// What a hot path keeps to update one counter. Copyable, trivially; a default-constructed
/// handle is disabled (adds are dropped).
class counter_handle {
public:
    constexpr counter_handle() noexcept = default;

    /// Adds `v` to this thread's count. Cost: a TLS load, two dependent loads and a store
    /// (see the file comment); lock-free and wait-free after this thread's first count of a
    /// chunk. Thread-safe.
    void add(std::uint64_t v) const noexcept {
        std::atomic<detail::counter_chunk*>& slot = detail::this_thread->own.chunks[id_ / counters_per_chunk];
        detail::counter_chunk* chunk = slot.load(std::memory_order_relaxed);
        if (chunk == nullptr) [[unlikely]] return add_slow(v);
        detail::bump(chunk->values[id_ % counters_per_chunk], v);
    }

    /// Adds `v` to worker `worker`'s instance (and so to the total), for a thread that folds
    /// other threads' private records (the end of a loop). Written in this thread's own lane
    /// for that worker: as cheap as add() once made. A worker outside [0, max_counter_workers)
    /// counts in the total only. Thread-safe.
    void add_for_worker(int worker, std::uint64_t v) const noexcept {
        std::atomic<detail::counter_lane*>* lanes = detail::this_thread->for_worker.load(std::memory_order_relaxed);
        if (lanes != nullptr && static_cast<unsigned>(worker) < static_cast<unsigned>(max_counter_workers)) [[likely]] {
            if (detail::counter_lane* lane = lanes[worker].load(std::memory_order_relaxed)) {
                if (detail::counter_chunk* chunk = lane->chunks[id_ / counters_per_chunk].load(std::memory_order_relaxed)) {
                    detail::bump(chunk->values[id_ % counters_per_chunk], v);
                    return;
                }
            }
        }
        add_for_worker_slow(worker, v);
    }

    bool valid() const noexcept { return id_ < max_counters; }
    std::uint32_t id() const noexcept { return id_; }

private:
    friend counter_handle register_counter(const counter_spec& spec);
    explicit constexpr counter_handle(std::uint32_t id) noexcept : id_(id) {}
    [[gnu::noinline]] void add_slow(std::uint64_t v) const noexcept;
    [[gnu::noinline]] void add_for_worker_slow(int worker, std::uint64_t v) const noexcept;

    std::uint32_t id_ = max_counters;
};

/// The counter `spec` describes, registered on first call; later calls with the same full
/// name (or alias) return the same handle (the first unit and help stay). Thread-safe; call
/// once and keep the handle. Throws aloe::error on a malformed name, an alias taken by
/// another counter, a name a derived counter has, or when max_counters are registered already.
counter_handle register_counter(const counter_spec& spec);

/// One instance, as the registry reads it: (counter id << 32) | (worker slot + 1), 0 in the
/// low half for the total or a counter's one instance.
using counter_key = std::uint64_t;

/// What a derived counter is: value = (a − b) × scale / c, computed when read. Names as in
/// counter_spec (no alias: derived counters have no old names).
struct derived_counter_spec {
    std::string_view object = {};
    std::string_view name = {};
    aloe::counter_unit unit = aloe::counter_unit::count;
    std::string_view help = {};
    /// Empty: process-wide (a total and a worker-slot instance per slot, each over the
    /// operands' instances of that slot; an operand with its own instance reads as itself).
    std::string_view instance = {};
    counter_handle a = {};  ///< required
    counter_handle b = {};  ///< subtracted; a disabled handle reads as 0. a − b stops at 0
    counter_handle c = {};  ///< the divisor; a disabled handle reads as 1
    std::uint64_t scale = 1;  ///< ≥ 1; 1'000'000 for a ratio (counter_unit::ratio is in ppm)
    std::uint64_t empty_value = 0;  ///< the value when c reads 0 (HPX: idle-rate 100% when t_func = 0)
};

/// Registers the derived counter `spec` describes and returns the key of its total (or of
/// its one instance); a second call with the same full name returns the same key (the first
/// formula stays). The quotient rounds down and saturates at 2^64 − 1. Thread-safe; takes
/// the registry's lock. Throws aloe::error on a malformed name, a name a raw counter has, a
/// disabled `a`, a `scale` of 0, or a full registry.
///
///     const counter_handle overall = register_counter({.object = "threads", .name = "time/overall", ...});
///     const counter_handle cumulative = register_counter({.object = "threads", .name = "time/cumulative", ...});
///     register_derived_counter({.object = "threads", .name = "idle-rate", .unit = counter_unit::ratio,
///                               .a = overall, .b = cumulative, .c = overall,
///                               .scale = 1'000'000, .empty_value = 1'000'000});
counter_key register_derived_counter(const derived_counter_spec& spec);

/// Declares the calling thread to be worker slot `worker` (team workers call it with their
/// index; a thread aloe did not start may use its OpenMP thread number). What it counted
/// under its previous slot stays there. A negative `worker` counts in the total only. A
/// thread that never calls it gets the lowest slot no live thread holds, at its first count.
void set_counter_worker(int worker);

/// The calling thread's slot; −1 before its first count or when it has none.
int counter_worker() noexcept;

/// How one instance's value follows from raw instances: (a − b) × scale / c, b absent
/// reading 0 and c absent 1. A raw counter's instance is {its own key, none, none, 1}.
struct counter_formula {
    static constexpr counter_key none = ~counter_key{0};
    counter_key a = none, b = none, c = none;
    std::uint64_t scale = 1;
    std::uint64_t empty_value = 0;

    /// The value from the operands' values; pass 0 for an absent b and 1 for an absent c.
    /// `empty_value` when `c` is 0; a − b below 0 counts as 0; rounds down, saturates.
    std::uint64_t apply(std::uint64_t a_value, std::uint64_t b_value, std::uint64_t c_value) const noexcept;
};

struct counter_instance {
    counter_key key;
    aloe::counter_sample sample;  ///< name and unit (value unset)
    counter_formula formula;      ///< the raw instances its value is computed from
};

/// The instances `pattern` names: an exact full name or alias, or a glob with `*` (see
/// aloe::read_counters). Thread-safe.
std::vector<counter_instance> find_counters(std::string_view pattern);

/// The values of `keys` (out.size() == keys.size()), read under one lock; a derived
/// instance's value is its formula over its operands' values. Returns the reset epoch
/// (changes when a fork child resets every count). Thread-safe.
std::uint64_t read_counter_values(std::span<const counter_key> keys, std::span<std::uint64_t> out);

/// The total of the counter `h` updates (its one instance, or every slot of a process-wide
/// counter); 0 for a disabled handle. Takes the registry's lock.
std::uint64_t read_total(counter_handle h);

/// Changes whenever a counter is registered or a new worker slot appears: instances that
/// find_counters() returned may then be incomplete. Relaxed load.
std::uint64_t counter_shape() noexcept;

/// read_counter / read_counters / list_counters / all_counters of include/aloe/stats.hpp.
std::optional<aloe::counter_sample> read_counter(std::string_view name);
std::vector<aloe::counter_sample> read_counters(std::string_view pattern);
std::vector<aloe::counter_description> list_counters();
std::vector<std::pair<std::string, std::uint64_t>> read_all_counters();

std::string_view counter_unit_name(aloe::counter_unit unit) noexcept;
std::string format_sample(const aloe::counter_sample& sample);

}  // namespace aloe::runtime

#include "runtime/counters.hpp"

#include "runtime/team.hpp"

#include <aloe/error.hpp>

#include <algorithm>
#include <charconv>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace aloe::runtime {

namespace detail {
namespace {
// Never written: every chunk is null, so a thread's first count takes the slow path.
constinit thread_counters no_counters_yet;
}  // namespace
constinit thread_local thread_counters* this_thread __attribute__((tls_model("initial-exec"))) = &no_counters_yet;
}  // namespace detail

namespace {

using detail::counter_chunk;
using detail::counter_lane;
using detail::thread_counters;

constexpr std::string_view total_instance = "locality#0/total";
constexpr std::string_view worker_prefix = "locality#0/worker-thread#";

// A derived counter's formula, by counter ids (no_operand: absent).
constexpr std::uint32_t no_operand = max_counters;
struct derivation {
    std::uint32_t a = no_operand, b = no_operand, c = no_operand;
    std::uint64_t scale = 1, empty_value = 0;
};

struct counter_meta {
    std::string object, name;
    std::string instance;  // empty: per worker (instances locality#0/total and worker-thread#k)
    std::string alias, help;
    counter_unit unit = counter_unit::count;
    std::string full_name;  // of the total, or of its one instance
    std::optional<derivation> derived;  // set: computed from other counters, never stored
};

struct registry {
    std::mutex mutex;  // guards everything below but the values, and the lanes' making
    std::vector<counter_meta> counters;                       // by id
    std::unordered_map<std::string, std::uint32_t> by_name;  // full names and aliases
    std::vector<thread_counters*> threads;                    // live blocks
    counter_lane retired;  // folded from threads without a slot, and counts after a thread's fold
    std::vector<counter_lane*> retired_worker = std::vector<counter_lane*>(max_counter_workers, nullptr);
    std::vector<std::uint32_t> holders = std::vector<std::uint32_t>(max_counter_workers, 0);  // live threads per slot
    int workers_seen = 0;  // slots 0 … workers_seen − 1 have appeared (instances to list)
    std::atomic<std::uint64_t> shape{0};  // bumped when a counter or a slot appears
    std::atomic<std::uint64_t> epoch{0};  // bumped when a fork child resets every count
};

// The registry as the fork hooks see it: they must not go through the_registry()'s guarded
// static (a fork during its first use would wait on the guard for ever in the child).
constinit std::atomic<registry*> counters_for_fork{nullptr};

void lock_counters_for_fork() noexcept;
void unlock_counters_after_fork() noexcept;
void reset_counters_in_child() noexcept;

registry& the_registry() {
    static registry* const r = [] {
        auto* made = new registry;  // lives to exit: counters are read by atexit reports
        counters_for_fork.store(made, std::memory_order_release);
        register_fork_hooks(fork_rank::counters, {&lock_counters_for_fork, &unlock_counters_after_fork, &reset_counters_in_child});
        return made;
    }();
    return *r;
}

// --- lanes ----------------------------------------------------------------------------------

// The chunk holding counter chunk index `c` of `lane`, made on first use. Only one thread
// makes a lane's chunks: its owner, or (retired lanes) the holder of the registry's lock.
counter_chunk& chunk_of(counter_lane& lane, std::uint32_t c) {
    counter_chunk* chunk = lane.chunks[c].load(std::memory_order_relaxed);
    if (chunk == nullptr) {
        chunk = new counter_chunk{};
        lane.chunks[c].store(chunk, std::memory_order_release);  // readers see the zeros first
    }
    return *chunk;
}

std::atomic<std::uint64_t>& value_of(counter_lane& lane, std::uint32_t id) {
    return chunk_of(lane, id / counters_per_chunk).values[id % counters_per_chunk];
}

std::uint64_t read_lane(const counter_lane* lane, std::uint32_t id) noexcept {
    if (lane == nullptr) return 0;
    const counter_chunk* chunk = lane->chunks[id / counters_per_chunk].load(std::memory_order_acquire);
    return chunk ? chunk->values[id % counters_per_chunk].load(std::memory_order_relaxed) : 0;
}

// Adds `from` into `into`; the caller holds the lock and `from` is not being written.
void fold(const counter_lane& from, counter_lane& into) {
    for (std::uint32_t c = 0; c < detail::lane_chunks; ++c) {
        const counter_chunk* chunk = from.chunks[c].load(std::memory_order_acquire);
        if (chunk == nullptr) continue;
        for (std::uint32_t i = 0; i < counters_per_chunk; ++i)
            if (const std::uint64_t v = chunk->values[i].load(std::memory_order_relaxed))
                detail::bump(chunk_of(into, c).values[i], v);
    }
}

void zero(counter_lane& lane) noexcept {
    for (auto& slot : lane.chunks)
        if (counter_chunk* chunk = slot.load(std::memory_order_relaxed))
            for (auto& v : chunk->values) v.store(0, std::memory_order_relaxed);
}

void free_chunks(counter_lane& lane) noexcept {
    for (auto& slot : lane.chunks) delete slot.exchange(nullptr, std::memory_order_relaxed);
}

// --- slots ----------------------------------------------------------------------------------

void see_worker(registry& r, int k) {
    if (k < r.workers_seen) return;
    r.workers_seen = k + 1;
    r.shape.fetch_add(1, std::memory_order_relaxed);
}

void hold(registry& r, int slot) {
    if (slot < 0) return;
    ++r.holders[slot];
    see_worker(r, slot);
}

void release(registry& r, int slot) {
    if (slot >= 0) --r.holders[slot];
}

int lowest_free_slot(const registry& r) {
    const auto free = std::find(r.holders.begin(), r.holders.end(), 0u);
    return free == r.holders.end() ? -1 : static_cast<int>(free - r.holders.begin());
}

// Where slot k's counts go when a thread leaves it.
counter_lane& retired_lane(registry& r, int k) {
    if (k < 0) return r.retired;
    if (r.retired_worker[k] == nullptr) {
        r.retired_worker[k] = new counter_lane;
        see_worker(r, k);
    }
    return *r.retired_worker[k];
}

// --- this thread's block --------------------------------------------------------------------

// Set by the exit fold: counts made later (by other thread_local destructors) go to the
// retired lane under the lock instead of a new block.
constinit thread_local bool counters_gone = false;

struct exit_fold {
    thread_counters* mine = nullptr;
    ~exit_fold();
};
thread_local exit_fold at_exit;

thread_counters* attach(int worker, bool declared) {
    registry& r = the_registry();
    auto* t = new thread_counters;
    {
        std::lock_guard lock(r.mutex);
        t->worker = declared ? worker : lowest_free_slot(r);
        hold(r, t->worker);
        r.threads.push_back(t);
    }
    at_exit.mine = t;  // first use of at_exit: registers its destructor for this thread
    detail::this_thread = t;
    return t;
}

// This thread's block, made on first use; nullptr once the thread's block was folded.
thread_counters* mine_or_attach() {
    if (counters_gone) return nullptr;
    if (detail::this_thread != &detail::no_counters_yet) return detail::this_thread;
    return attach(-1, false);
}

exit_fold::~exit_fold() {
    thread_counters* t = mine;
    if (t == nullptr) return;
    detail::this_thread = &detail::no_counters_yet;
    counters_gone = true;
    mine = nullptr;
    std::atomic<counter_lane*>* lanes = t->for_worker.load(std::memory_order_relaxed);
    registry& r = the_registry();
    {
        std::lock_guard lock(r.mutex);
        fold(t->own, retired_lane(r, t->worker));
        if (lanes != nullptr)
            for (int k = 0; k < r.workers_seen; ++k)
                if (const counter_lane* lane = lanes[k].load(std::memory_order_relaxed)) fold(*lane, retired_lane(r, k));
        release(r, t->worker);
        std::erase(r.threads, t);
    }
    // No reader can see the block now (they read under the lock).
    free_chunks(t->own);
    if (lanes != nullptr) {
        for (int k = 0; k < max_counter_workers; ++k)
            if (counter_lane* lane = lanes[k].load(std::memory_order_relaxed)) {
                free_chunks(*lane);
                delete lane;
            }
        delete[] lanes;
    }
    delete t;
}

// A count made after this thread's exit fold.
void add_late(std::uint32_t id, int worker, std::uint64_t v) {
    registry& r = the_registry();
    std::lock_guard lock(r.mutex);
    detail::bump(value_of(retired_lane(r, worker), id), v);
}

// --- fork -----------------------------------------------------------------------------------

void lock_counters_for_fork() noexcept { counters_for_fork.load(std::memory_order_acquire)->mutex.lock(); }
void unlock_counters_after_fork() noexcept { counters_for_fork.load(std::memory_order_acquire)->mutex.unlock(); }

// A child counts what it does itself, from 0 (its statistics are its own: see site_registry).
// Only the forking thread exists: the other blocks are forgotten (not freed: the hooks must
// not allocate or free), the kept ones zeroed.
void reset_counters_in_child() noexcept {
    registry& r = *counters_for_fork.load(std::memory_order_acquire);
    thread_counters* mine = counters_gone || detail::this_thread == &detail::no_counters_yet ? nullptr : detail::this_thread;
    r.threads.clear();
    std::fill(r.holders.begin(), r.holders.end(), 0u);
    if (mine != nullptr) {
        r.threads.push_back(mine);  // within the capacity it had: no allocation
        if (mine->worker >= 0) ++r.holders[mine->worker];
        zero(mine->own);
        if (std::atomic<counter_lane*>* lanes = mine->for_worker.load(std::memory_order_relaxed))
            for (int k = 0; k < r.workers_seen; ++k)
                if (counter_lane* lane = lanes[k].load(std::memory_order_relaxed)) zero(*lane);
    }
    zero(r.retired);
    for (int k = 0; k < r.workers_seen; ++k)
        if (r.retired_worker[k] != nullptr) zero(*r.retired_worker[k]);
    r.epoch.fetch_add(1, std::memory_order_relaxed);
    r.mutex.unlock();
}

// --- names ----------------------------------------------------------------------------------

constexpr counter_key key_of(std::uint32_t id, int worker) noexcept {
    return (counter_key{id} << 32) | static_cast<std::uint32_t>(worker + 1);
}
constexpr std::uint32_t id_of(counter_key key) noexcept { return static_cast<std::uint32_t>(key >> 32); }
constexpr int worker_of(counter_key key) noexcept { return static_cast<int>(key & 0xffffffffu) - 1; }

std::string full_name(std::string_view object, std::string_view instance, std::string_view name) {
    std::string s;
    s.reserve(object.size() + instance.size() + name.size() + 4);
    s.append("/").append(object).append("{").append(instance).append("}/").append(name);
    return s;
}

std::string name_of(const counter_meta& m, int worker) {
    if (worker < 0) return m.full_name;
    return full_name(m.object, std::string(worker_prefix) + std::to_string(worker), m.name);
}

// `*` matches any text, '/' included; everything else matches itself.
bool glob_match(std::string_view pattern, std::string_view text) noexcept {
    std::size_t p = 0, t = 0;
    std::size_t star = std::string_view::npos, resume = 0;  // the last '*' and where it resumes
    while (t < text.size()) {
        if (p < pattern.size() && pattern[p] == '*') {
            star = p++;
            resume = t;
        } else if (p < pattern.size() && pattern[p] == text[t]) {
            ++p;
            ++t;
        } else if (star != std::string_view::npos) {
            p = star + 1;  // let the last '*' take one more character
            t = ++resume;
        } else {
            return false;
        }
    }
    while (p < pattern.size() && pattern[p] == '*') ++p;
    return p == pattern.size();
}

// The instance an exact name (full name of any instance, or alias) names.
std::optional<counter_key> exact_key(const registry& r, std::string_view name) {
    if (const auto it = r.by_name.find(std::string(name)); it != r.by_name.end()) return key_of(it->second, -1);
    // `/object{locality#0/worker-thread#k}/counter`: the per-worker counter's slot k.
    const std::size_t open = name.find('{');
    const std::size_t close = open == std::string_view::npos ? open : name.find('}', open);
    if (close == std::string_view::npos) return std::nullopt;
    const std::string_view instance = name.substr(open + 1, close - open - 1);
    if (!instance.starts_with(worker_prefix)) return std::nullopt;
    const std::string_view digits = instance.substr(worker_prefix.size());
    int k = -1;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), k);
    if (ec != std::errc{} || end != digits.data() + digits.size() || k < 0 || k >= max_counter_workers ||
        (digits.size() > 1 && digits.front() == '0'))
        return std::nullopt;
    std::string total(name.substr(0, open + 1));
    total.append(total_instance).append(name.substr(close));
    const auto it = r.by_name.find(total);
    if (it == r.by_name.end() || !r.counters[it->second].instance.empty()) return std::nullopt;
    return key_of(it->second, k);
}

// How `key`'s value follows from raw instances: itself for a raw counter; a derived one's
// operands, each in the same worker slot when it is per worker, else as its one instance.
counter_formula formula_of(const registry& r, counter_key key) noexcept {
    const counter_meta& m = r.counters[id_of(key)];
    if (!m.derived) return {.a = key};
    const auto operand = [&](std::uint32_t id) {
        if (id == no_operand) return counter_formula::none;
        return key_of(id, r.counters[id].instance.empty() ? worker_of(key) : -1);
    };
    const derivation& d = *m.derived;
    return {operand(d.a), operand(d.b), operand(d.c), d.scale, d.empty_value};
}

counter_instance instance_of(const registry& r, counter_key key, std::string name) {
    return {key, {std::move(name), 0, r.counters[id_of(key)].unit}, formula_of(r, key)};
}

std::vector<counter_instance> find_locked(const registry& r, std::string_view pattern) {
    std::vector<counter_instance> out;
    if (pattern.find('*') == std::string_view::npos) {
        if (const auto key = exact_key(r, pattern)) out.push_back(instance_of(r, *key, name_of(r.counters[id_of(*key)], worker_of(*key))));
        return out;
    }
    for (std::uint32_t id = 0; id < r.counters.size(); ++id) {
        const counter_meta& m = r.counters[id];
        if (glob_match(pattern, m.full_name)) out.push_back(instance_of(r, key_of(id, -1), m.full_name));
        if (!m.instance.empty()) continue;
        for (int k = 0; k < r.workers_seen; ++k)
            if (std::string name = name_of(m, k); glob_match(pattern, name))
                out.push_back(instance_of(r, key_of(id, k), std::move(name)));
    }
    return out;
}

// One reading's view of the raw counts, under the registry's lock. Each raw counter's lanes
// are loaded once, and its total and its worker instances all come from those loads: threads
// keep counting while a reader sums (their adds take no lock), and a total read apart from
// its instances could then hold a count they miss, so that a reader's change of a total
// differed from the sum of its instances' changes (seen under TSan: a worker added 2 ms of
// time/overall between the two reads of one baseline).
class raw_reading {
public:
    explicit raw_reading(const registry& r) : r_(r) {}

    // The total sums every lane; worker slot k sums the blocks holding slot k (their own
    // counts), the lanes attributed to k, and k's retired lane.
    std::uint64_t value(counter_key key) {
        const std::uint32_t id = id_of(key);
        const int worker = worker_of(key);
        if (id >= r_.counters.size() || worker >= r_.workers_seen) return 0;
        const std::vector<std::uint64_t>& parts = parts_of(id);
        return worker < 0 ? parts.back() : parts[static_cast<std::size_t>(worker)];
    }

private:
    // Slots 0 … workers_seen − 1, then the total.
    const std::vector<std::uint64_t>& parts_of(std::uint32_t id) {
        const auto [it, added] = read_.try_emplace(id);
        if (!added) return it->second;
        const auto seen = static_cast<std::size_t>(r_.workers_seen);
        std::vector<std::uint64_t>& parts = it->second;
        parts.assign(seen + 1, 0);
        std::uint64_t slotless = read_lane(&r_.retired, id);
        for (const thread_counters* t : r_.threads) {
            const std::uint64_t own = read_lane(&t->own, id);
            if (t->worker >= 0 && static_cast<std::size_t>(t->worker) < seen) parts[static_cast<std::size_t>(t->worker)] += own;
            else slotless += own;
            if (const std::atomic<counter_lane*>* lanes = t->for_worker.load(std::memory_order_acquire))
                for (std::size_t k = 0; k < seen; ++k) parts[k] += read_lane(lanes[k].load(std::memory_order_acquire), id);
        }
        std::uint64_t total = slotless;
        for (std::size_t k = 0; k < seen; ++k) {
            parts[k] += read_lane(r_.retired_worker[k], id);
            total += parts[k];
        }
        parts[seen] = total;
        return parts;
    }

    const registry& r_;
    std::unordered_map<std::uint32_t, std::vector<std::uint64_t>> read_;  // by counter id
};

// Any instance's value: a derived one's formula over its operands' values.
std::uint64_t value_locked(const registry& r, raw_reading& raw, counter_key key) {
    const std::uint32_t id = id_of(key);
    if (id >= r.counters.size() || !r.counters[id].derived) return raw.value(key);
    const counter_formula f = formula_of(r, key);
    const auto read = [&](counter_key operand, std::uint64_t absent) {
        return operand == counter_formula::none ? absent : raw.value(operand);
    };
    return f.apply(read(f.a, 0), read(f.b, 0), read(f.c, 1));
}

bool has_any(std::string_view s, std::string_view chars) { return s.find_first_of(chars) != std::string_view::npos; }

void check_spec(const counter_spec& s) {
    const auto refuse = [&](std::string_view why) {
        throw aloe::error("counter '" + full_name(s.object, s.instance.empty() ? total_instance : s.instance, s.name) +
                          "': " + std::string(why));
    };
    if (s.object.empty() || has_any(s.object, "{}*/")) refuse("the object must be non-empty, without '{', '}', '*' or '/'");
    if (s.name.empty() || s.name.front() == '/' || has_any(s.name, "{}*"))
        refuse("the counter name must be non-empty, start with no '/' and hold no '{', '}' or '*'");
    if (has_any(s.instance, "{}*") || s.instance.starts_with("locality#"))
        refuse("an instance holds no '{', '}' or '*' and does not start with 'locality#' (leave it empty for a per-worker counter)");
    if (!s.alias.empty() && (s.alias.front() == '/' || has_any(s.alias, "{}*")))
        refuse("an alias starts with no '/' and holds no '{', '}' or '*'");
}

// The id a new counter named `full` gets; the caller holds the lock and appends it.
std::uint32_t next_id(const registry& r, const std::string& full) {
    if (r.counters.size() >= max_counters)
        throw aloe::error("counter '" + full + "': the registry is full (" + std::to_string(max_counters) + " counters)");
    return static_cast<std::uint32_t>(r.counters.size());
}

}  // namespace

// --- handles --------------------------------------------------------------------------------

void counter_handle::add_slow(std::uint64_t v) const noexcept {
    if (!valid()) return;
    if (thread_counters* t = mine_or_attach()) {
        detail::bump(value_of(t->own, id_), v);
        return;
    }
    add_late(id_, -1, v);
}

void counter_handle::add_for_worker_slow(int worker, std::uint64_t v) const noexcept {
    if (!valid()) return;
    if (static_cast<unsigned>(worker) >= static_cast<unsigned>(max_counter_workers)) return add(v);
    thread_counters* t = mine_or_attach();
    if (t == nullptr) return add_late(id_, worker, v);
    std::atomic<counter_lane*>* lanes = t->for_worker.load(std::memory_order_relaxed);
    counter_lane* lane = lanes != nullptr ? lanes[worker].load(std::memory_order_relaxed) : nullptr;
    if (lane == nullptr) {
        registry& r = the_registry();
        std::lock_guard lock(r.mutex);  // the slot appears in the same step as its lane
        if (lanes == nullptr) {
            lanes = new std::atomic<counter_lane*>[max_counter_workers]();
            t->for_worker.store(lanes, std::memory_order_release);
        }
        lane = new counter_lane;
        see_worker(r, worker);
        lanes[worker].store(lane, std::memory_order_release);
    }
    detail::bump(value_of(*lane, id_), v);
}

counter_handle register_counter(const counter_spec& spec) {
    check_spec(spec);
    std::string full = full_name(spec.object, spec.instance.empty() ? total_instance : spec.instance, spec.name);
    registry& r = the_registry();
    std::lock_guard lock(r.mutex);
    if (const auto it = r.by_name.find(full); it != r.by_name.end()) {
        // A handle to a derived counter would let add() write where nothing is read.
        if (r.counters[it->second].derived) throw aloe::error("counter '" + full + "' is a derived counter");
        return counter_handle(it->second);
    }
    if (!spec.alias.empty() && r.by_name.contains(std::string(spec.alias)))
        throw aloe::error("counter '" + full + "': the alias '" + std::string(spec.alias) + "' names another counter");
    const std::uint32_t id = next_id(r, full);
    r.counters.push_back({std::string(spec.object), std::string(spec.name), std::string(spec.instance),
                          std::string(spec.alias), std::string(spec.help), spec.unit, full, std::nullopt});
    r.by_name.emplace(std::move(full), id);
    if (!spec.alias.empty()) r.by_name.emplace(std::string(spec.alias), id);
    r.shape.fetch_add(1, std::memory_order_relaxed);
    return counter_handle(id);
}

counter_key register_derived_counter(const derived_counter_spec& spec) {
    check_spec({.object = spec.object, .name = spec.name, .instance = spec.instance});
    std::string full = full_name(spec.object, spec.instance.empty() ? total_instance : spec.instance, spec.name);
    if (!spec.a.valid()) throw aloe::error("derived counter '" + full + "': its operand a is a disabled handle");
    if (spec.scale == 0) throw aloe::error("derived counter '" + full + "': its scale is 0");
    registry& r = the_registry();
    std::lock_guard lock(r.mutex);
    if (const auto it = r.by_name.find(full); it != r.by_name.end()) {
        if (!r.counters[it->second].derived) throw aloe::error("derived counter '" + full + "': a raw counter has that name");
        return key_of(it->second, -1);
    }
    const auto operand = [&](counter_handle h) {
        // Handles come from register_counter only, so an operand is always a raw counter.
        return h.valid() && h.id() < r.counters.size() ? h.id() : no_operand;
    };
    const std::uint32_t id = next_id(r, full);
    r.counters.push_back({std::string(spec.object), std::string(spec.name), std::string(spec.instance), "",
                          std::string(spec.help), spec.unit, full,
                          derivation{operand(spec.a), operand(spec.b), operand(spec.c), spec.scale, spec.empty_value}});
    r.by_name.emplace(std::move(full), id);
    r.shape.fetch_add(1, std::memory_order_relaxed);
    return key_of(id, -1);
}

std::uint64_t counter_formula::apply(std::uint64_t a_value, std::uint64_t b_value, std::uint64_t c_value) const noexcept {
    if (c_value == 0) return empty_value;
    // (a − b) × scale needs 128 bits: a day of nanoseconds (8.6e13) × 1e6 exceeds 2^64.
    __extension__ using wide = unsigned __int128;
    const wide q = wide{a_value > b_value ? a_value - b_value : 0} * scale / c_value;
    return q > wide{~std::uint64_t{0}} ? ~std::uint64_t{0} : static_cast<std::uint64_t>(q);
}

void set_counter_worker(int worker) {
    if (worker < 0 || worker >= max_counter_workers) worker = -1;
    if (counters_gone) return;
    if (detail::this_thread == &detail::no_counters_yet) {
        attach(worker, true);
        return;
    }
    thread_counters* t = detail::this_thread;
    registry& r = the_registry();
    std::lock_guard lock(r.mutex);  // readers see the counts under the old slot or the new, never both
    if (t->worker == worker) return;
    fold(t->own, retired_lane(r, t->worker));
    zero(t->own);
    release(r, t->worker);
    t->worker = worker;
    hold(r, worker);
}

int counter_worker() noexcept {
    if (counters_gone || detail::this_thread == &detail::no_counters_yet) return -1;
    return detail::this_thread->worker;  // written only by this thread
}

std::vector<counter_instance> find_counters(std::string_view pattern) {
    registry& r = the_registry();
    std::lock_guard lock(r.mutex);
    return find_locked(r, pattern);
}

std::uint64_t read_counter_values(std::span<const counter_key> keys, std::span<std::uint64_t> out) {
    registry& r = the_registry();
    std::lock_guard lock(r.mutex);
    raw_reading raw(r);
    for (std::size_t i = 0; i < keys.size() && i < out.size(); ++i) out[i] = value_locked(r, raw, keys[i]);
    return r.epoch.load(std::memory_order_relaxed);
}

std::uint64_t read_total(counter_handle h) {
    if (!h.valid()) return 0;
    const counter_key key = static_cast<counter_key>(h.id()) << 32;
    std::uint64_t value = 0;
    read_counter_values({&key, 1}, {&value, 1});
    return value;
}

std::uint64_t counter_shape() noexcept { return the_registry().shape.load(std::memory_order_relaxed); }

std::vector<aloe::counter_sample> read_counters(std::string_view pattern) {
    registry& r = the_registry();
    std::lock_guard lock(r.mutex);
    std::vector<aloe::counter_sample> out;
    raw_reading raw(r);
    for (counter_instance& found : find_locked(r, pattern)) {
        found.sample.value = value_locked(r, raw, found.key);
        out.push_back(std::move(found.sample));
    }
    return out;
}

std::optional<aloe::counter_sample> read_counter(std::string_view name) {
    if (name.find('*') != std::string_view::npos) return std::nullopt;  // a pattern, not a name
    std::vector<aloe::counter_sample> found = read_counters(name);
    if (found.empty()) return std::nullopt;
    return std::move(found.front());
}

std::vector<aloe::counter_description> list_counters() {
    registry& r = the_registry();
    std::lock_guard lock(r.mutex);
    std::vector<aloe::counter_description> out;
    out.reserve(r.counters.size());
    for (const counter_meta& m : r.counters)
        out.push_back({m.full_name, m.alias, m.unit, m.instance.empty(), m.help, m.derived.has_value()});
    return out;
}

std::vector<std::pair<std::string, std::uint64_t>> read_all_counters() {
    registry& r = the_registry();
    std::lock_guard lock(r.mutex);
    std::vector<std::pair<std::string, std::uint64_t>> out;
    out.reserve(r.counters.size());
    raw_reading raw(r);
    for (std::uint32_t id = 0; id < r.counters.size(); ++id) {
        const counter_meta& m = r.counters[id];
        out.emplace_back(m.alias.empty() ? m.full_name : m.alias, value_locked(r, raw, key_of(id, -1)));
    }
    return out;
}

std::string_view counter_unit_name(aloe::counter_unit unit) noexcept {
    switch (unit) {
        case counter_unit::count: return "count";
        case counter_unit::nanoseconds: return "ns";
        case counter_unit::bytes: return "bytes";
        case counter_unit::ratio: return "ppm";
    }
    return "?";
}

std::string format_sample(const aloe::counter_sample& sample) {
    return sample.name + " " + std::to_string(sample.value) + " [" + std::string(counter_unit_name(sample.unit)) + "]";
}

}  // namespace aloe::runtime

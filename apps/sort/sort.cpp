// sort: a parallel merge sort of --n 64-bit keys (seeded), the divide and conquer of Cilk's
// and BOTS's sorts: split in halves sorted as a task and here, then a parallel merge (the
// larger run's middle key, its place in the other run by binary search, the two sides merged
// as a task and here). At --cutoff keys or fewer a piece is sorted (std::sort) or merged
// (std::merge) serially. The tasks' sizes halve down the tree and merges split unevenly, so
// the work is irregular though the data is not. One timestep sorts a fresh copy of the input:
// the leaves copy their keys from it, so the copy is part of the parallel work.
//
// Buffers: the sort of a piece puts its result in `out` and uses `scratch`, of the same size,
// for its halves (each half sorted into the scratch with the output as its own scratch), so
// two buffers besides the input suffice at every level.
//
// The keys are integers and equal keys are indistinguishable, so every runtime gives the
// serial result bit for bit: checksum a position-weighted hash of the sorted keys (exact in
// a double). Checks: sorted, and the same keys as the input (order-free sums); --check full:
// equal to std::sort of the input, key by key.
#include "common/harness.hpp"
#include "common/task_runtimes.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace {

using aloe_apps::usage_error;
using key = std::uint64_t;

/// Merges a[0, na) and b[0, nb) (each sorted) into out, on the runtime of `rt`.
template <class Tasks>
void merge(const Tasks& rt, const key* a, std::size_t na, const key* b, std::size_t nb, key* out, std::size_t cutoff) {
    if (na + nb <= cutoff) {
        std::merge(a, a + na, b, b + nb, out);
        return;
    }
    if (na < nb) {  // split the larger run (equal keys are indistinguishable: order is free)
        std::swap(a, b);
        std::swap(na, nb);
    }
    const std::size_t ma = na / 2;
    const std::size_t mb = static_cast<std::size_t>(std::lower_bound(b, b + nb, a[ma]) - b);
    out[ma + mb] = a[ma];
    auto g = rt.make_group();
    g.run([&rt, a, ma, b, mb, out, cutoff] { merge(rt, a, ma, b, mb, out, cutoff); });
    merge(rt, a + ma + 1, na - ma - 1, b + mb, nb - mb, out + ma + mb + 1, cutoff);
    g.wait();
}

/// Sorts in[0, n) into out[0, n), using scratch[0, n), on the runtime of `rt`.
template <class Tasks>
void sort_into(const Tasks& rt, const key* in, key* out, key* scratch, std::size_t n, std::size_t cutoff) {
    if (n <= cutoff) {
        std::copy(in, in + n, out);
        std::sort(out, out + n);
        return;
    }
    const std::size_t half = n / 2;
    auto g = rt.make_group();
    g.run([&rt, in, out, scratch, half, cutoff] { sort_into(rt, in, scratch, out, half, cutoff); });
    sort_into(rt, in + half, scratch + half, out + half, n - half, cutoff);
    g.wait();
    merge(rt, scratch, half, scratch + half, n - half, out, cutoff);
}

std::vector<key> make_keys(std::size_t n, std::uint64_t seed, std::uint64_t range) {
    std::mt19937_64 rng(seed);
    std::vector<key> keys(n);
    for (key& k : keys) k = range == 0 ? rng() : rng() % range;
    return keys;
}

/// Order-free fingerprint of a multiset of keys: two sums (mod 2^64) and an XOR.
struct fingerprint {
    std::uint64_t sum = 0, squares = 0, bits = 0;
    bool operator==(const fingerprint&) const = default;
};

fingerprint fingerprint_of(const std::vector<key>& keys) {
    fingerprint f;
    for (const key k : keys) {
        f.sum += k;
        f.squares += k * k;
        f.bits ^= k;
    }
    return f;
}

/// A hash of the keys in their order: sum of key times an odd weight per position, mod 2^64,
/// its top 53 bits as a double (exact).
double position_hash(const std::vector<key>& keys) {
    std::uint64_t h = 0;
    for (std::size_t i = 0; i < keys.size(); ++i) h += keys[i] * (2 * static_cast<std::uint64_t>(i) + 1);
    return static_cast<double>(h >> 11);
}

}  // namespace

int main(int argc, char** argv) {
    return aloe_apps::run_workload("sort", argc, argv, [](aloe_apps::harness& h) {
        auto& f = h.flags();
        const std::int64_t n = f.integer("--n", 1 << 21, "keys to sort");
        const std::int64_t cutoff =
            f.integer("--cutoff", 1 << 13, "pieces of at most CUTOFF keys are sorted or merged serially");
        const std::int64_t range = f.integer("--key-range", 0, "keys drawn from [0, R) (duplicates); 0: all 64 bits");
        const std::int64_t seed = f.integer("--seed", 1, "seed of the keys");
        if (n < 1 || n > (std::int64_t{1} << 32)) throw usage_error("flag --n: must be in [1, 2^32]");
        if (cutoff < 1) throw usage_error("flag --cutoff: must be at least 1");
        if (range < 0) throw usage_error("flag --key-range: must not be negative");
        if (seed < 0) throw usage_error("flag --seed: must not be negative");
        h.task_workload();
        h.default_steps(5, 1);
        h.start();
        h.param("n", n);
        h.param("cutoff", cutoff);
        h.param("key_range", range);
        h.param("seed", seed);

        const auto count = static_cast<std::size_t>(n);
        const std::vector<key> input =
            make_keys(count, static_cast<std::uint64_t>(seed), static_cast<std::uint64_t>(range));
        std::vector<key> sorted(count), scratch(count);
        h.run_steps([&](int) {
            aloe_apps::with_tasks(h, [&](const auto& rt) {
                sort_into(rt, input.data(), sorted.data(), scratch.data(), count, static_cast<std::size_t>(cutoff));
            });
        });
        if (h.corrupt_result()) sorted[count / 2] += 1;
        h.checksum(position_hash(sorted));

        const bool in_order = std::is_sorted(sorted.begin(), sorted.end());
        h.check(in_order, "keys in order (1: sorted)", in_order ? 1 : 0, 1);
        const bool same = fingerprint_of(sorted) == fingerprint_of(input);
        h.check(same, "the same keys as the input (1: equal sums and XOR)", same ? 1 : 0, 1);
        if (h.full_check()) {
            std::vector<key> reference = input;
            std::sort(reference.begin(), reference.end());
            std::int64_t differing = 0;
            for (std::size_t i = 0; i < count; ++i) differing += sorted[i] != reference[i] ? 1 : 0;
            h.check(differing == 0, "keys that differ from std::sort of the input", static_cast<double>(differing), 0);
        }
    });
}

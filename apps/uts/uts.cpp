// uts: an unbalanced tree search in the manner of UTS (Olivier et al., LCPC 2006): count the
// nodes of a tree that exists only as a rule. A node is a 64-bit id; child i's id is a hash
// of its parent's id and i (--work rounds of a 64-bit hash: the node's cost, as UTS's SHA-1
// rounds), and how many children a node has is drawn from its own id. The shape is therefore
// fixed by --seed and the tree's parameters, but nobody knows it before walking it.
//
//   binomial (UTS's T3 family): the root has --b0 children; every other node has --m children
//     with probability --q, else none. With q m just under 1 the subtrees' sizes vary wildly
//     (expected 1 + b0 / (1 - q m) nodes): only dynamic load balancing keeps threads busy.
//   geometric (UTS's T1 family): a node above --depth has a geometric number of children of
//     mean --b; nodes at that depth are leaves.
//
// Each node above --cutoff depth spawns a task per child but the last, searches that one
// itself, waits, and adds the children's counts (a task per node at the default: UTS's
// finest grain); from --cutoff down, a subtree is searched serially with an explicit stack.
// The serial run is the same recursion with every task run inline. One timestep is
// one whole search. The counts are integers and the id digest an XOR, so every runtime and
// every order gives the same numbers: checksum the node count, checked (with the leaves, the
// depth and the digest) against a serial search of the same tree.
#include "common/harness.hpp"
#include "common/task_runtimes.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {

using aloe_apps::usage_error;

/// One round of the node hash: an xor-shift and a multiply by an odd constant (both
/// bijections, so distinct ids stay distinct), alternating splitmix64's shifts and constants.
/// --work rounds make a child's id: the node's cost, as UTS's SHA-1 rounds are.
std::uint64_t hash_round(std::uint64_t x, int round) noexcept {
    const bool even = round % 2 == 0;
    return (x ^ (x >> (even ? 30 : 27))) * (even ? 0xbf58476d1ce4e5b9ULL : 0x94d049bb133111ebULL);
}

std::uint64_t derive(std::uint64_t base, int rounds) noexcept {
    for (int r = 0; r < rounds; ++r) base = hash_round(base, r);
    return base ^ (base >> 31);
}

struct node {
    std::uint64_t id;
    int depth;
};

/// What a search found below (and including) a node.
struct tally {
    std::uint64_t nodes;
    std::uint64_t leaves;
    std::uint64_t digest;  // XOR of the ids
    int max_depth;

    void add(const tally& t) noexcept {
        nodes += t.nodes;
        leaves += t.leaves;
        digest ^= t.digest;
        max_depth = std::max(max_depth, t.max_depth);
    }
};

enum class shape { binomial, geometric };

/// The rule that defines the tree.
struct tree {
    shape kind = shape::binomial;
    int b0 = 2000;          // binomial: the root's children
    int m = 8;              // binomial: children of a node that has any
    double q = 0.1225;      // binomial: probability that a node has m children
    double b = 4;           // geometric: mean children
    int depth = 8;          // geometric: the leaves. depth
    int work = 32;          // hash rounds per child id
    int cutoff = 1 << 30;   // nodes at depth >= cutoff are searched serially
    std::uint64_t seed = 1;

    node root() const noexcept { return {derive(seed, work), 0}; }

    node child(const node& parent, int i) const noexcept {
        return {derive(parent.id + static_cast<std::uint64_t>(i + 1) * 0x9e3779b97f4a7c15ULL, work), parent.depth + 1};
    }

    int children(const node& v) const noexcept {
        const double u = static_cast<double>(v.id >> 11) * 0x1p-53;  // in [0, 1), from the id
        if (kind == shape::binomial) {
            if (v.depth == 0) return b0;
            return u < q ? m : 0;
        }
        if (v.depth >= depth) return 0;
        // P(k) = (1 - p)^k p with p = 1 / (1 + b): mean b.
        return static_cast<int>(std::floor(std::log1p(-u) / std::log1p(-1.0 / (1.0 + b))));
    }
};

tally of_node(const node& v, bool leaf) noexcept { return {1, leaf ? 1U : 0U, v.id, v.depth}; }

/// The serial search below `top`, depth first with an explicit stack (a binomial tree can be
/// thousands of levels deep).
tally search_serial(const tree& t, const node& top) {
    tally sum{0, 0, 0, top.depth};
    std::vector<node> stack{top};
    while (!stack.empty()) {
        const node v = stack.back();
        stack.pop_back();
        const int k = t.children(v);
        sum.add(of_node(v, k == 0));
        for (int i = k - 1; i >= 0; --i) stack.push_back(t.child(v, i));
    }
    return sum;
}

/// The children's tallies of one node: on the stack for the usual few, else on the heap.
class child_tallies {
public:
    explicit child_tallies(int k) {
        if (k > static_cast<int>(local_.size())) heap_.resize(static_cast<std::size_t>(k));
        data_ = heap_.empty() ? local_.data() : heap_.data();
    }
    child_tallies(const child_tallies&) = delete;
    child_tallies& operator=(const child_tallies&) = delete;
    tally& operator[](int i) noexcept { return data_[i]; }

private:
    std::array<tally, 16> local_;  // a guess: binomial's m and geometric's draws are mostly below
    std::vector<tally> heap_;
    tally* data_;
};

/// The search below `v` on the runtime of `rt` (common/task_runtimes.hpp): above the cutoff,
/// each child but the last as a task of a fork-join group, the last one here, then the join.
template <class Tasks>
tally search(const Tasks& rt, const tree& t, const node& v) {
    const int k = t.children(v);
    if (k == 0) return of_node(v, true);
    if (v.depth >= t.cutoff) return search_serial(t, v);
    child_tallies r(k);
    auto g = rt.make_group();
    for (int i = 0; i < k - 1; ++i) {
        const node c = t.child(v, i);
        tally* out = &r[i];
        g.run([&rt, &t, c, out] { *out = search(rt, t, c); });
    }
    r[k - 1] = search(rt, t, t.child(v, k - 1));
    g.wait();
    tally sum = of_node(v, false);
    for (int i = 0; i < k; ++i) sum.add(r[i]);
    return sum;
}

int as_int(std::int64_t v, const char* flag, std::int64_t lo, std::int64_t hi) {
    if (v < lo || v > hi)
        throw usage_error(std::string("flag ") + flag + ": must be in [" + std::to_string(lo) + ", " +
                          std::to_string(hi) + "], not " + std::to_string(v));
    return static_cast<int>(v);
}

}  // namespace

int main(int argc, char** argv) {
    return aloe_apps::run_workload("uts", argc, argv, [](aloe_apps::harness& h) {
        auto& f = h.flags();
        tree t;
        const std::string kind = f.text("--tree", "binomial", "binomial (UTS T3: wildly unbalanced) or geometric (T1)");
        t.b0 = as_int(f.integer("--b0", t.b0, "binomial: the root's children"), "--b0", 1, 1 << 24);
        t.m = as_int(f.integer("--m", t.m, "binomial: children of a node that has any"), "--m", 1, 1 << 16);
        t.q = f.real("--q", t.q, "binomial: probability that a node has children (q m < 1)");
        t.b = f.real("--b", t.b, "geometric: mean children per node");
        t.depth = as_int(f.integer("--depth", t.depth, "geometric: depth of the leaves"), "--depth", 0, 1 << 16);
        t.work = as_int(f.integer("--work", t.work, "hash rounds per child id (a node's cost)"), "--work", 2, 1 << 20);
        t.cutoff = as_int(f.integer("--cutoff", t.cutoff,
                                    "nodes at depth >= CUTOFF search their subtree serially; above, a task per child"),
                          "--cutoff", 0, 1 << 30);
        const std::int64_t seed = f.integer("--seed", 1, "seed of the tree");
        if (kind != "binomial" && kind != "geometric")
            throw usage_error("flag --tree: expected binomial or geometric, not '" + kind + "'");
        t.kind = kind == "binomial" ? shape::binomial : shape::geometric;
        if (!(t.q >= 0 && t.q * t.m < 1))
            throw usage_error("flags --q, --m: need q >= 0 and q m < 1 (else the tree is infinite)");
        if (!(t.b > 0 && t.b <= 1000)) throw usage_error("flag --b: must be in (0, 1000]");
        // The expected size of a geometric tree, sum of b^d for d = 0..depth: past 1e12 nodes
        // (UTS's largest T1 trees have a few 1e9) a run would not end in days.
        const double levels = t.depth + 1.0;
        const double expected = t.b == 1 ? levels : (std::pow(t.b, levels) - 1) / (t.b - 1);
        if (t.kind == shape::geometric && expected > 1e12) {
            char mean[32];
            std::snprintf(mean, sizeof mean, "%g", t.b);
            throw usage_error(std::string("flags --b, --depth: a geometric tree of ") + mean +
                              " children a node on average to depth " + std::to_string(t.depth) +
                              " has an expected size above 1e12 nodes");
        }
        if (seed < 0) throw usage_error("flag --seed: must not be negative");
        t.seed = static_cast<std::uint64_t>(seed);
        h.task_workload();
        h.default_steps(10, 2);
        h.start();
        h.param("tree", kind);
        if (t.kind == shape::binomial) {
            h.param("b0", t.b0);
            h.param("m", t.m);
            h.param("q", t.q);
        } else {
            h.param("b", t.b);
            h.param("depth", t.depth);
        }
        h.param("work", t.work);
        h.param("cutoff", t.cutoff);
        h.param("seed", seed);

        tally found{};
        h.run_steps([&](int) { aloe_apps::with_tasks(h, [&](const auto& rt) { found = search(rt, t, t.root()); }); });
        h.param("nodes", found.nodes);
        h.param("leaves", found.leaves);
        h.param("max_depth", found.max_depth);
        if (h.corrupt_result()) found.nodes += 1;
        h.checksum(static_cast<double>(found.nodes));

        const tally reference = search_serial(t, t.root());
        h.check(found.nodes == reference.nodes, "nodes against a serial search", static_cast<double>(found.nodes),
                static_cast<double>(reference.nodes));
        h.check(found.leaves == reference.leaves && found.max_depth == reference.max_depth &&
                    found.digest == reference.digest,
                "leaves, depth and id digest against a serial search (1: all equal)",
                found.leaves == reference.leaves && found.max_depth == reference.max_depth &&
                        found.digest == reference.digest
                    ? 1.0
                    : 0.0,
                1);
    });
}

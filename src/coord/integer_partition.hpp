// Whole-chunk allocations from exact shares: SCAF's `intpart` (thesis Algorithm 4, notes
// §2.4), written from its description, and equipartitioning (Eq. 4.1). A chunk is the
// unit cores are handed out in (the SMT width, notes §2.10); `cores / chunk` whole chunks
// are shared and the remainder, less than a chunk, stays unused.
//
// partition_by_shares, step by step (t_i = share_i · chunks, the exact share in chunks):
// 1. x_i = floor(t_i); the error d_i = t_i − x_i (> 0: under-served, < 0: over-served).
// 2. Leftover chunks one at a time: to the first empty partition if any, else to the
//    largest d_i (ties to the lower index); the receiver's d_i drops by 1.
// 3. While a partition is empty, one chunk moves to it from a donor holding at least 2.
//    The donor is the most over-served (least d_i), where the thesis says "least error"
//    and SCAF's code takes the most under-served (largest d_i; notes §8 item 3). A donation
//    only happens after every leftover went to an empty partition, so every donor holds
//    floor(t_i) or less (d_i >= 0) and any donor adds exactly one chunk to the summed
//    error Σ|x_i − t_i|. What the choice decides is where that chunk comes from: the least
//    under-served donor ends d_i + 1 from its share, the code's donor up to almost two
//    chunks, so the fix keeps the largest error and the sum of squared errors least and
//    the ratios between the large clients closest to their shares (the code can even
//    invert them; tests/unit/coord/allocation_math_test.cpp shows a case; on its sweep of
//    random log curves the worst modelled sum of speedups rises from 0.84 to 0.95 of the
//    greedy optimum's). `donor_rule` selects the code's rule so the tests can compare.
// Each partition ends within one chunk of its exact share unless a donation was needed.
//
// More clients than chunks (intpart fails there, and SCAF's daemon did not handle it,
// notes §8 item 10): every client gets 1 thread, since a program cannot run on 0, and the
// result says `oversubscribed`; the caller reports it (the cores are then time-shared, as
// without a daemon). chunk 0 is taken as 1; cores 0 means every client is oversubscribed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace aloe::coord {

/// Threads per client, in the clients' order.
struct partition {
    std::vector<unsigned> threads;
    /// More clients than whole chunks: every client got 1 thread and together they
    /// may exceed the cores.
    bool oversubscribed = false;
};

/// Where partition_by_shares takes a chunk for an empty partition from.
enum class donor_rule : std::uint8_t {
    most_over_served,   ///< least d_i: keeps the ratios (the default)
    most_under_served,  ///< largest d_i: SCAF's code, for comparison
};

/// `weights` scaled to sum to 1; negative and non-finite weights count as 0; all 0 (or
/// none usable): equal shares. Empty in, empty out.
std::vector<double> normalised_shares(std::span<const double> weights);

/// Whole chunks of `cores` in proportion to `shares` (normalised as normalised_shares
/// does), each client at least one chunk, all chunks handed out; see the steps above.
/// Cost: O(clients²) (fewer leftovers and donations than clients).
partition partition_by_shares(unsigned cores, unsigned chunk, std::span<const double> shares,
                              donor_rule donor = donor_rule::most_over_served);

/// ⌊chunks / clients⌋ chunks each, one more to each of the first chunks % clients clients
/// (Eq. 4.1, made deterministic); the same oversubscription rule.
partition equipartition(unsigned cores, unsigned chunk, std::size_t clients);

}  // namespace aloe::coord

#include "coord/core_lending.hpp"

#include "coord/message.hpp"

#include <algorithm>
#include <cstddef>
#include <tuple>

namespace aloe::coord {

lending_result lend_cores(std::span<const lending_view> clients, double now) {
    const std::size_t n = clients.size();
    lending_result out;
    out.threads.resize(n);
    out.lent.assign(n, 0);
    out.borrowed.assign(n, 0);
    std::vector<unsigned> can_lend(n, 0), wants(n, 0);
    std::vector<std::size_t> taking_part;
    for (std::size_t i = 0; i < n; ++i) {
        const lending_view& c = clients[i];
        const unsigned share = std::max(c.share, 1u);
        out.threads[i] = share;
        if (c.job.empty()) continue;
        if (c.offered > 0) {
            if (now < c.offer_ends) can_lend[i] = std::min(c.offered, c.whole ? share : share - 1);
        } else if (c.requested > 0) {
            const unsigned limit = c.limit > 0 ? std::min(c.limit, max_threads) : max_threads;
            wants[i] = limit > share ? std::min(c.requested, limit - share) : 0;
        }
        if (can_lend[i] > 0 || wants[i] > 0) taking_part.push_back(i);
    }

    // One group per user and job, each settled on its own.
    const auto group_of = [&](std::size_t i) { return std::tie(clients[i].uid, clients[i].job); };
    std::stable_sort(taking_part.begin(), taking_part.end(),
                     [&](std::size_t a, std::size_t b) { return group_of(a) < group_of(b); });
    // Largest amount first, then lower pid, then snapshot order: the same answer whatever
    // order the messages came in.
    const auto first_by = [&](const std::vector<unsigned>& amount) {
        return [&](std::size_t a, std::size_t b) {
            return std::tuple(amount[b], clients[a].pid, a) < std::tuple(amount[a], clients[b].pid, b);
        };
    };
    for (std::size_t begin = 0; begin < taking_part.size();) {
        std::size_t end = begin + 1;
        while (end < taking_part.size() && group_of(taking_part[end]) == group_of(taking_part[begin])) ++end;
        std::vector<std::size_t> lenders, requesters;
        unsigned pool = 0, demand = 0;
        for (std::size_t k = begin; k < end; ++k) {
            const std::size_t i = taking_part[k];
            if (can_lend[i] > 0) {
                lenders.push_back(i);
                pool += can_lend[i];
            } else {
                requesters.push_back(i);
                demand += wants[i];
            }
        }
        begin = end;
        const unsigned moved = std::min(pool, demand);
        if (moved == 0) continue;
        std::sort(lenders.begin(), lenders.end(), first_by(can_lend));
        std::sort(requesters.begin(), requesters.end(), first_by(wants));
        unsigned left = moved;
        for (const std::size_t i : requesters) {
            out.borrowed[i] = std::min(wants[i], left);
            left -= out.borrowed[i];
        }
        left = moved;
        for (const std::size_t i : lenders) {
            out.lent[i] = std::min(can_lend[i], left);
            left -= out.lent[i];
        }
        // Pair them in those orders (a merge of two queues of cores).
        std::size_t l = 0, r = 0;
        unsigned lender_left = lenders.empty() ? 0 : out.lent[lenders[0]];
        unsigned borrower_left = requesters.empty() ? 0 : out.borrowed[requesters[0]];
        while (l < lenders.size() && r < requesters.size()) {
            if (lender_left == 0) {
                if (++l < lenders.size()) lender_left = out.lent[lenders[l]];
                continue;
            }
            if (borrower_left == 0) {
                if (++r < requesters.size()) borrower_left = out.borrowed[requesters[r]];
                continue;
            }
            const unsigned m = std::min(lender_left, borrower_left);
            out.transfers.push_back({lenders[l], requesters[r], m});
            lender_left -= m;
            borrower_left -= m;
        }
    }
    // A whole lender's count is still 1: what it runs with if it returns before it takes
    // its offer back.
    for (std::size_t i = 0; i < n; ++i)
        out.threads[i] = std::max(out.threads[i] - out.lent[i] + out.borrowed[i], 1u);
    return out;
}

}  // namespace aloe::coord

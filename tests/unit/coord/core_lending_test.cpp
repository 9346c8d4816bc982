// Lending cores within a job (coord/core_lending.hpp), every case computed by hand: first
// the function on snapshots, then the client table that keeps offers and requests (one
// standing offer or request per client, take-back, expiry, departure).
#include "coord/client_table.hpp"
#include "coord/core_lending.hpp"

#include <gtest/gtest.h>

#include <tuple>
#include <vector>

namespace {

using namespace aloe::coord;

constexpr uid_t alice = 1000;
constexpr uid_t bob = 1001;

lending_view lender(pid_t pid, unsigned share, unsigned offered, std::string_view job = "job-1", uid_t uid = alice,
                    double ends = offer_no_end) {
    lending_view v;
    v.pid = pid;
    v.uid = uid;
    v.job = job;
    v.share = share;
    v.limit = 16;
    v.offered = offered;
    v.offer_ends = ends;
    return v;
}

lending_view requester(pid_t pid, unsigned share, unsigned requested, std::string_view job = "job-1", uid_t uid = alice,
                       unsigned limit = 16) {
    lending_view v;
    v.pid = pid;
    v.uid = uid;
    v.job = job;
    v.share = share;
    v.limit = limit;
    v.requested = requested;
    return v;
}

std::vector<unsigned> threads_of(const std::vector<lending_view>& clients, double now = 0) {
    return lend_cores(clients, now).threads;
}

using counts = std::vector<unsigned>;

TEST(CoordCoreLending, OneRankLendsThreeToTheOther) {
    const std::vector<lending_view> job{lender(10, 4, 3), requester(11, 4, 3)};
    const lending_result r = lend_cores(job, 0);
    EXPECT_EQ(r.threads, (counts{1, 7}));
    EXPECT_EQ(r.lent, (counts{3, 0}));
    EXPECT_EQ(r.borrowed, (counts{0, 3}));
}

TEST(CoordCoreLending, AnotherJobCannotBorrow) {
    EXPECT_EQ(threads_of({lender(10, 4, 3, "job-1"), requester(11, 4, 3, "job-2")}), (counts{4, 4}));
}

TEST(CoordCoreLending, AnotherUserCannotBorrowEvenInAJobOfTheSameName) {
    EXPECT_EQ(threads_of({lender(10, 4, 3, "job-1", alice), requester(11, 4, 3, "job-1", bob)}), (counts{4, 4}));
}

TEST(CoordCoreLending, ClientsWithoutAJobNeitherLendNorBorrow) {
    EXPECT_EQ(threads_of({lender(10, 4, 3, ""), requester(11, 4, 3, "")}), (counts{4, 4}));
    EXPECT_EQ(threads_of({lender(10, 4, 3, "job-1"), requester(11, 4, 3, "")}), (counts{4, 4}));
}

TEST(CoordCoreLending, AnOfferLendsUntilItsEnd) {
    const std::vector<lending_view> job{lender(10, 4, 3, "job-1", alice, 1.5), requester(11, 4, 3)};
    EXPECT_EQ(threads_of(job, 1.0), (counts{1, 7}));
    EXPECT_EQ(threads_of(job, 1.5), (counts{4, 4}));  // ended: the cores are back
    EXPECT_EQ(threads_of(job, 9.0), (counts{4, 4}));
}

TEST(CoordCoreLending, ALenderKeepsOneThread) {
    // Share 2, offers 5: lends 1.
    EXPECT_EQ(threads_of({lender(10, 2, 5), requester(11, 2, 5)}), (counts{1, 3}));
    // Share 1: lends nothing.
    EXPECT_EQ(threads_of({lender(10, 1, 5), requester(11, 3, 5)}), (counts{1, 3}));
}

TEST(CoordCoreLending, ADepartedLenderLendsNothing) {
    // The table drops a departed client's offer with the client: the snapshot no longer has it.
    EXPECT_EQ(threads_of({lender(10, 4, 3), requester(11, 4, 3)}), (counts{1, 7}));
    EXPECT_EQ(threads_of({requester(11, 4, 3)}), (counts{4}));
}

TEST(CoordCoreLending, UnwantedCoresStayWithTheLender) {
    // Offers 3, one is asked for: the lender gives 1 and keeps 3.
    const lending_result r = lend_cores(std::vector<lending_view>{lender(10, 4, 3), requester(11, 4, 1)}, 0);
    EXPECT_EQ(r.threads, (counts{3, 5}));
    EXPECT_EQ(r.lent, (counts{1, 0}));
    // Nobody asks: nothing moves.
    EXPECT_EQ(threads_of({lender(10, 4, 3), requester(11, 4, 0)}), (counts{4, 4}));
}

TEST(CoordCoreLending, ARequesterTakesNoMoreThanItCanRun) {
    // Share 4, limit 5 (its own thread count or its user's cap): it can use 1 more.
    EXPECT_EQ(threads_of({lender(10, 4, 3), requester(11, 4, 3, "job-1", alice, 5)}), (counts{3, 5}));
    // At its limit already: it takes nothing.
    EXPECT_EQ(threads_of({lender(10, 4, 3), requester(11, 4, 3, "job-1", alice, 4)}), (counts{4, 4}));
}

TEST(CoordCoreLending, ManyRequestersAreServedLargestWantFirstThenLowerPid) {
    // Pool 5 (pid 1 lends 5 of its 6). Wants: pid 30 → 2, pid 20 → 3, pid 10 → 3.
    // Order: pid 10 (3, lower pid than 20), pid 20 (3): takes the 2 left, pid 30: none.
    const std::vector<lending_view> job{requester(30, 2, 2), requester(20, 2, 3), lender(1, 6, 5), requester(10, 2, 3)};
    const lending_result r = lend_cores(job, 0);
    EXPECT_EQ(r.borrowed, (counts{0, 2, 0, 3}));
    EXPECT_EQ(r.threads, (counts{2, 4, 1, 5}));
    // The same clients in another order: the same answer for each.
    const std::vector<lending_view> shuffled{job[3], job[2], job[1], job[0]};
    EXPECT_EQ(lend_cores(shuffled, 0).borrowed, (counts{3, 0, 2, 0}));
}

TEST(CoordCoreLending, LendersGiveLargestLendableFirst) {
    // pid 5 can lend 2, pid 3 can lend 3; 4 are wanted: pid 3 gives 3, pid 5 gives 1.
    const lending_result r = lend_cores(std::vector<lending_view>{lender(5, 3, 2), lender(3, 4, 3), requester(9, 2, 4)}, 0);
    EXPECT_EQ(r.lent, (counts{1, 3, 0}));
    EXPECT_EQ(r.threads, (counts{2, 1, 6}));
}

TEST(CoordCoreLending, JobsAreSettledApart) {
    // Two jobs of one user on one node: each job's cores go to its own ranks.
    const std::vector<lending_view> node{lender(1, 4, 2, "a"), requester(2, 4, 4, "b"), lender(3, 4, 3, "b"),
                                         requester(4, 4, 4, "a")};
    EXPECT_EQ(threads_of(node), (counts{2, 7, 1, 6}));
}

TEST(CoordCoreLending, AClientThatOffersDoesNotBorrow) {
    lending_view both = lender(10, 4, 2);
    both.requested = 3;
    EXPECT_EQ(threads_of({both, lender(11, 4, 3)}), (counts{4, 4}));
}

TEST(CoordCoreLending, ARankBlockedInMpiLendsItsWholeShareAndStillReadsOne) {
    lending_view blocked = lender(10, 1, 1);
    blocked.whole = true;
    const lending_result r = lend_cores(std::vector<lending_view>{blocked, requester(11, 1, 1)}, 0);
    EXPECT_EQ(r.lent, (counts{1, 0}));
    EXPECT_EQ(r.borrowed, (counts{0, 1}));
    EXPECT_EQ(r.threads, (counts{1, 2}));  // what the lender runs with should it return first
    // Without the flag a one-core rank has nothing to lend.
    EXPECT_EQ(threads_of({lender(10, 1, 1), requester(11, 1, 1)}), (counts{1, 1}));
}

TEST(CoordCoreLending, TransfersPairLendersWithBorrowersInServingOrder) {
    // Lenders give largest first (pid 12: 3, then pid 10: 2); requesters are served largest
    // want first (pid 13: 4, then pid 11: 1).
    const std::vector<lending_view> job{lender(10, 3, 2), requester(11, 2, 1), lender(12, 4, 3), requester(13, 2, 4)};
    const lending_result r = lend_cores(job, 0);
    ASSERT_EQ(r.transfers.size(), 3u);
    EXPECT_EQ(std::tuple(r.transfers[0].lender, r.transfers[0].borrower, r.transfers[0].cores), std::tuple(2u, 3u, 3u));
    EXPECT_EQ(std::tuple(r.transfers[1].lender, r.transfers[1].borrower, r.transfers[1].cores), std::tuple(0u, 3u, 1u));
    EXPECT_EQ(std::tuple(r.transfers[2].lender, r.transfers[2].borrower, r.transfers[2].cores), std::tuple(0u, 1u, 1u));
    unsigned moved = 0;
    for (const auto& t : r.transfers) moved += t.cores;
    EXPECT_EQ(moved, r.borrowed[1] + r.borrowed[3]);
    EXPECT_EQ(moved, r.lent[0] + r.lent[2]);
}

// --- the table: standing offers and requests ------------------------------------------------

hello_message hello_in(const char* job, pid_t pid, unsigned own) {
    return {pid, client_native, own, make_text<48>(job)};
}

TEST(CoordClientTableLending, AnOfferAndARequestMoveCoresAtTheNextRebalance) {
    client_table t(8, policy_id::equipartition);
    t.add(1, 101, alice, hello_in("job-1", 101, 8), "rank0", 0);
    t.add(2, 102, alice, hello_in("job-1", 102, 8), "rank1", 0);
    t.rebalance(true, 0);
    EXPECT_EQ(t.find(1)->allocated, 4u);
    t.offer(*t.find(1), {3, 0}, 0);
    t.request(*t.find(2), {3});
    const auto updates = t.rebalance(false, 0);
    EXPECT_EQ(updates.size(), 2u);
    EXPECT_EQ(t.find(1)->allocated, 1u);
    EXPECT_EQ(t.find(1)->share, 4u);
    EXPECT_EQ(t.find(1)->lent, 3u);
    EXPECT_EQ(t.find(2)->allocated, 7u);
    EXPECT_EQ(t.find(2)->borrowed, 3u);
    EXPECT_EQ(t.next_offer_end(), offer_no_end);
    // A request of 0 from the lender takes its offer back.
    t.request(*t.find(1), {0});
    t.rebalance(false, 0);
    EXPECT_EQ(t.find(1)->allocated, 4u);
    EXPECT_EQ(t.find(2)->allocated, 4u);
}

TEST(CoordClientTableLending, TheBorrowerHearsATakeBackBeforeTheLenderIsAnswered) {
    client_table t(8, policy_id::equipartition);
    t.add(1, 101, alice, hello_in("job-1", 101, 8), "rank0", 0);
    t.add(2, 102, alice, hello_in("job-1", 102, 8), "rank1", 0);
    t.add(3, 103, alice, hello_in("job-1", 103, 8), "rank2", 0);
    t.rebalance(true, 0);
    t.offer(*t.find(1), {1, 0}, 0);
    t.request(*t.find(3), {1});
    t.rebalance(false, 0);
    ASSERT_EQ(t.find(3)->borrowed, 1u);
    t.request(*t.find(1), {0});  // the lender's take-back: its connection asked this round
    auto updates = t.rebalance(false, 0);
    ASSERT_EQ(updates.size(), 2u);
    ASSERT_EQ(updates.front().connection, 1) << "the table lists clients in order; the lender comes first";
    senders_last(updates, {1});
    EXPECT_EQ(updates[0].connection, 3);
    EXPECT_EQ(updates[1].connection, 1);
    // Several senders keep their order behind the others, and no update is lost.
    std::vector<allocation_update> many{{5, {}}, {1, {}}, {4, {}}, {2, {}}, {3, {}}};
    senders_last(many, {2, 5});
    std::vector<int> order;
    for (const auto& u : many) order.push_back(u.connection);
    EXPECT_EQ(order, (std::vector<int>{1, 4, 3, 5, 2}));
}

TEST(CoordClientTableLending, AnOfferEndsAtItsTimeAndANewOneReplacesIt) {
    client_table t(8, policy_id::equipartition);
    t.add(1, 101, alice, hello_in("job-1", 101, 8), "rank0", 10);
    t.add(2, 102, alice, hello_in("job-1", 102, 8), "rank1", 10);
    t.request(*t.find(2), {3});
    t.offer(*t.find(1), {3, 500}, 10);  // until 10.5
    EXPECT_DOUBLE_EQ(t.next_offer_end(), 10.5);
    t.rebalance(false, 10.2);
    EXPECT_EQ(t.find(2)->allocated, 7u);
    // A new offer replaces the old one: 1 core, until 11.
    t.offer(*t.find(1), {1, 750}, 10.25);
    EXPECT_DOUBLE_EQ(t.next_offer_end(), 11.0);
    t.rebalance(false, 10.6);
    EXPECT_EQ(t.find(1)->allocated, 3u);
    EXPECT_EQ(t.find(2)->allocated, 5u);
    EXPECT_FALSE(t.expire(10.9));
    EXPECT_TRUE(t.expire(11.0));
    EXPECT_EQ(t.next_offer_end(), offer_no_end);
    t.rebalance(false, 11.0);
    EXPECT_EQ(t.find(1)->allocated, 4u);
    EXPECT_EQ(t.find(2)->allocated, 4u);
    EXPECT_EQ(t.find(2)->requested, 3u);  // the request stands, unmet
}

TEST(CoordClientTableLending, AnOfferEndsARequestAndADepartureEndsBoth) {
    client_table t(8, policy_id::equipartition);
    t.add(1, 101, alice, hello_in("job-1", 101, 8), "rank0", 0);
    t.add(2, 102, alice, hello_in("job-1", 102, 8), "rank1", 0);
    t.request(*t.find(1), {2});
    t.offer(*t.find(1), {2, 0}, 0);
    EXPECT_EQ(t.find(1)->requested, 0u);
    t.request(*t.find(2), {2});
    t.rebalance(false, 0);
    EXPECT_EQ(t.find(2)->allocated, 6u);
    // The lender dies: its cores are back at the next rebalance (the policy's 8 for one).
    t.remove(1);
    t.rebalance(true, 0);
    EXPECT_EQ(t.find(2)->allocated, 8u);
    EXPECT_EQ(t.find(2)->borrowed, 0u);
    // A new hello on a connection starts afresh: no offer survives it.
    t.add(3, 103, alice, hello_in("job-1", 103, 8), "rank2", 0);
    t.offer(*t.find(3), {3, 0}, 0);
    t.add(3, 103, alice, hello_in("job-1", 103, 8), "rank2", 0);
    EXPECT_EQ(t.find(3)->offered, 0u);
}

TEST(CoordClientTableLending, BorrowedCoresAreNamedFromTheLendersCpusTheBorrowerLacks) {
    client_table t(4, policy_id::equipartition);
    // Ranks bound as `mpirun --bind-to core` would: 101 on CPU 0, 102 on CPU 1, 103 on 2-3.
    t.set_cpu_reader([](pid_t pid) -> std::vector<int> {
        if (pid == 101) return {0};
        if (pid == 102) return {1};
        return {2, 3};
    });
    t.add(1, 101, alice, hello_in("job-1", 101, 1), "rank0", 0);
    t.add(2, 102, alice, hello_in("job-1", 102, 1), "rank1", 0);
    t.add(3, 103, alice, hello_in("job-1", 103, 2), "rank2", 0);
    t.rebalance(true, 0);
    ASSERT_EQ(t.find(3)->share, 2u);
    t.offer(*t.find(1), {1, 0, offer_whole}, 0);
    t.offer(*t.find(3), {2, 0, offer_whole}, 0);
    t.request(*t.find(2), {3});
    const auto updates = t.rebalance(false, 0);
    ASSERT_EQ(t.find(2)->borrowed, 3u);
    EXPECT_EQ(t.find(2)->allocated, 4u);
    EXPECT_EQ(t.find(2)->borrowed_cpus, (std::vector<int>{0, 2, 3}));
    const allocation_message m = t.allocation_for(*t.find(2));
    EXPECT_EQ(m.borrowed, 3u);
    EXPECT_EQ(m.share, 1u);
    EXPECT_EQ(m.cpu_base, 0u);
    EXPECT_EQ(m.cpu_mask, 0b1101u);
    EXPECT_EQ(t.allocation_for(*t.find(3)).lent, 2u);
    EXPECT_EQ(t.allocation_for(*t.find(3)).threads, 1u);
    // Taking the offers back empties the borrower's CPUs, and it is told so.
    t.request(*t.find(1), {0});
    t.request(*t.find(3), {0});
    bool told = false;
    for (const auto& u : t.rebalance(false, 0))
        if (u.connection == 2) told = u.message.borrowed == 0 && u.message.cpu_mask == 0 && u.message.threads == 1;
    EXPECT_TRUE(told);
}

TEST(CoordClientTableLending, UnboundRanksNameNoCpus) {
    client_table t(2, policy_id::equipartition);
    t.set_cpu_reader([](pid_t) { return std::vector<int>{0, 1}; });
    t.add(1, 101, alice, hello_in("job-1", 101, 1), "rank0", 0);
    t.add(2, 102, alice, hello_in("job-1", 102, 2), "rank1", 0);
    t.offer(*t.find(1), {1, 0, offer_whole}, 0);
    t.request(*t.find(2), {1});
    t.rebalance(true, 0);
    EXPECT_EQ(t.find(2)->borrowed, 1u);
    EXPECT_TRUE(t.find(2)->borrowed_cpus.empty());
    EXPECT_EQ(t.allocation_for(*t.find(2)).cpu_mask, 0u);
}

}  // namespace

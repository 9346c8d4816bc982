// The call table: rows per call and site, sums and maxima, the overflow rows past its
// capacity, and threads recording at once without losing a call.
#include "mpi/call_table.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

namespace {

using aloe::mpi::call_site_record;
using aloe::mpi::call_table;
using aloe::mpi::mpi_call;

const void* site(std::uintptr_t a) { return reinterpret_cast<const void*>(a); }

TEST(MpiCallTable, KeepsOneRowPerCallAndSiteWithSumAndMaximum) {
    auto t = std::make_unique<call_table>();
    t->record(mpi_call::Allreduce, site(0x401000), 100);
    t->record(mpi_call::Allreduce, site(0x401000), 300);
    t->record(mpi_call::Barrier, site(0x401000), 50);  // same site, another call: its own row
    t->record(mpi_call::Allreduce, site(0x402000), 7);
    const std::vector<call_site_record> rows = t->rows();
    ASSERT_EQ(rows.size(), 3u);
    int seen = 0;
    for (const call_site_record& r : rows) {
        if (r.call == mpi_call::Allreduce && r.site == site(0x401000)) {
            EXPECT_EQ(r.calls, 2u);
            EXPECT_EQ(r.inside_ticks, 400u);
            EXPECT_EQ(r.max_ticks, 300u);
            ++seen;
        } else if (r.call == mpi_call::Barrier) {
            EXPECT_EQ(r.site, site(0x401000));
            EXPECT_EQ(r.calls, 1u);
            ++seen;
        } else {
            EXPECT_EQ(r.site, site(0x402000));
            EXPECT_EQ(r.inside_ticks, 7u);
            ++seen;
        }
    }
    EXPECT_EQ(seen, 3);
    t->clear();
    EXPECT_TRUE(t->rows().empty());
}

TEST(MpiCallTable, SitesPastItsCapacityShareTheCallsOverflowRow) {
    auto t = std::make_unique<call_table>();
    const std::size_t sites = call_table::capacity + 500;
    for (std::size_t i = 0; i < sites; ++i) t->record(mpi_call::Wait, site(0x10000 + 16 * i), 1);
    std::uint64_t calls = 0, overflow = 0;
    for (const call_site_record& r : t->rows()) {
        EXPECT_EQ(r.call, mpi_call::Wait);
        calls += r.calls;
        if (r.site == nullptr) overflow += r.calls;
    }
    EXPECT_EQ(calls, sites) << "every call counted, in its own row or the overflow row";
    EXPECT_GE(overflow, 500u);
}

TEST(MpiCallTable, ThreadsRecordingAtOnceLoseNoCall) {
    auto t = std::make_unique<call_table>();
    constexpr int threads = 4, calls = 20000;
    std::vector<std::thread> pool;
    for (int k = 0; k < threads; ++k)
        pool.emplace_back([&t, k] {
            for (int i = 0; i < calls; ++i) t->record(i % 2 ? mpi_call::Recv : mpi_call::Wait, site(0x500000 + 64 * (i % 8)), static_cast<std::uint64_t>(k + 1));
        });
    for (std::thread& th : pool) th.join();
    std::uint64_t n = 0, ns = 0, max = 0;
    for (const call_site_record& r : t->rows()) {
        n += r.calls;
        ns += r.inside_ticks;
        max = std::max(max, r.max_ticks);
    }
    EXPECT_EQ(n, static_cast<std::uint64_t>(threads) * calls);
    EXPECT_EQ(ns, static_cast<std::uint64_t>(calls) * (1 + 2 + 3 + 4));
    EXPECT_EQ(max, 4u);
}

}  // namespace

// White-box tests of the bounded site registry (loop/site_registry.hpp): the number of live
// records never passes the limit, folding keeps every count, held and pinned records are
// never evicted, an evicted name starts fresh, internal sites stay out of the listings.
// Each test has a registry of its own with a small limit; "what ran" is committed to the
// records by hand, as run_loop does under the record's mutex.
#include "loop/site_registry.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace aloe::loop {
namespace {

const schedule fixed("static");

// Names that outlive the loop_sites viewing them.
struct names {
    std::vector<std::string> text;
    explicit names(const std::string& prefix, int n) {
        for (int i = 0; i < n; ++i) text.push_back(prefix + std::to_string(i));
    }
    loop_site operator[](int i) const { return loop_site(text[static_cast<std::size_t>(i)]); }
};

// One serial run of `iterations` at `site`, as run_loop's serial path commits it.
void run_serial(site_registry& r, const loop_site& site, std::uint64_t iterations) {
    const site_ref ref = r.acquire(site);
    std::lock_guard lock(ref->mutex);
    ref->stats.add_serial(iterations, fixed);
}

// One parallel run on two workers with `iterations` split between them.
void run_parallel(site_registry& r, const loop_site& site, std::uint64_t iterations) {
    const site_ref ref = r.acquire(site);
    worker_record records[2]{};
    records[0].static_iterations = iterations / 2;
    records[1].static_iterations = iterations - iterations / 2;
    std::lock_guard lock(ref->mutex);
    ref->stats.add_parallel(records, 0, 10, fixed);
}

struct totals {
    std::uint64_t invocations = 0, serial = 0, empty = 0, iterations = 0, folded_sites = 0;
};

totals sum_of(const std::vector<site_stats>& all) {
    totals t;
    for (const site_stats& s : all) {
        t.invocations += s.invocations;
        t.serial += s.serial_invocations;
        t.empty += s.empty_invocations;
        t.iterations += s.iterations;
        t.folded_sites += s.folded_sites;
    }
    return t;
}

TEST(LoopSiteRegistry, LiveRecordsNeverExceedTheLimit) {
    constexpr std::size_t limit = 16;
    site_registry r(limit);
    const names n("bound/", 300);
    for (int i = 0; i < 300; ++i) {
        run_serial(r, n[i], 1);
        ASSERT_LE(r.live_records(), limit) << "after site " << i;
    }
    EXPECT_LE(r.pool_records(), limit) << "with nothing held, evicted records are reused, not added";
    EXPECT_EQ(r.snapshot().size(), r.live_records() + 1) << "the live sites and one folded row";
}

TEST(LoopSiteRegistry, FoldedTotalsEqualWhatRan) {
    site_registry r(8);
    const names n("fold/", 100);
    totals ran;
    for (int round = 0; round < 3; ++round) {
        for (int i = 0; i < 100; ++i) {
            const auto iterations = static_cast<std::uint64_t>(i + round);
            if (i % 3 == 0) {
                run_serial(r, n[i], iterations);
                ++ran.serial;
            } else if (i % 3 == 1) {
                run_parallel(r, n[i], iterations);
                ++ran.invocations;
            } else {
                const site_ref ref = r.acquire(n[i]);
                std::lock_guard lock(ref->mutex);
                ref->stats.add_empty(fixed);
                ++ran.empty;
                continue;
            }
            ran.iterations += iterations;
        }
    }
    const std::vector<site_stats> all = r.snapshot();
    const totals seen = sum_of(all);
    EXPECT_EQ(seen.invocations, ran.invocations);
    EXPECT_EQ(seen.serial, ran.serial);
    EXPECT_EQ(seen.empty, ran.empty);
    EXPECT_EQ(seen.iterations, ran.iterations);
    ASSERT_FALSE(all.empty());
    const site_stats& folded = all.back();
    EXPECT_GT(folded.folded_sites, 0u);
    EXPECT_EQ(folded.site, "(" + std::to_string(folded.folded_sites) + " colder sites, folded)");
    EXPECT_TRUE(folded.last.empty() && folded.total.empty()) << "no per-thread vectors";
    EXPECT_FALSE(folded.tuning.has_value());
    EXPECT_EQ(seen.folded_sites, folded.folded_sites) << "only the last row is folded";
}

TEST(LoopSiteRegistry, HotSitesStayWhileColdOnesAreFolded) {
    site_registry r(16);
    const names cold("cold/", 200);
    const loop_site hot("hot");
    for (int i = 0; i < 200; ++i) {
        run_serial(r, hot, 1);
        run_serial(r, cold[i], 1);
    }
    const auto st = r.snapshot(hot);
    ASSERT_TRUE(st.has_value()) << "the site used between every new one is never the coldest";
    EXPECT_EQ(st->serial_invocations, 200u);
}

TEST(LoopSiteRegistry, HeldSiteIsNeverEvicted) {
    site_registry r(8);
    const loop_site held("held");
    site_ref ref = r.acquire(held);
    {
        std::lock_guard lock(ref->mutex);
        ref->stats.add_serial(5, fixed);
    }
    const names n("churn/", 100);
    for (int i = 0; i < 100; ++i) run_serial(r, n[i], 1);
    EXPECT_LE(r.live_records(), 8u);
    {
        std::lock_guard lock(ref->mutex);
        ref->stats.add_serial(7, fixed);
    }
    EXPECT_EQ(ref->key_name, "held");
    ref = site_ref();
    const auto st = r.snapshot(held);
    ASSERT_TRUE(st.has_value());
    EXPECT_EQ(st->serial_invocations, 2u) << "both commits reached the same live record";
    EXPECT_EQ(st->iterations, 12u);
}

TEST(LoopSiteRegistry, RunningLoopsSiteIsNeverEvictedByAnotherThread) {
    // Thread A holds its site across a "loop" (commit, wait, commit) while thread B creates
    // ten times the limit in new sites. Both commits must land in one live record.
    site_registry r(8);
    const loop_site running("running");
    std::atomic<bool> started{false}, churned{false};
    std::thread a([&] {
        site_ref ref = r.acquire(running);
        {
            std::lock_guard lock(ref->mutex);
            ref->stats.add_serial(1, fixed);
        }
        started = true;
        while (!churned.load()) std::this_thread::yield();
        std::lock_guard lock(ref->mutex);
        ref->stats.add_serial(1, fixed);
    });
    std::thread b([&] {
        while (!started.load()) std::this_thread::yield();
        const names n("other/", 80);
        for (int i = 0; i < 80; ++i) run_serial(r, n[i], 1);
        churned = true;
    });
    a.join();
    b.join();
    const auto st = r.snapshot(running);
    ASSERT_TRUE(st.has_value());
    EXPECT_EQ(st->serial_invocations, 2u);
}

TEST(LoopSiteRegistry, ConcurrentLookupsAlwaysGetTheirOwnSite) {
    // Readers take their sites through the thread-local cache while a churner evicts: every
    // record a reader gets must be its site's, and every commit must be counted (live or
    // folded). Run under TSan too.
    site_registry r(8);
    constexpr int readers = 3, rounds = 2000, own_sites = 4;
    std::atomic<bool> stop{false};
    std::atomic<int> wrong{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < readers; ++t) {
        threads.emplace_back([&, t] {
            const names mine("reader" + std::to_string(t) + "/", own_sites);
            for (int k = 0; k < rounds; ++k) {
                const loop_site site = mine[k % own_sites];
                const site_ref ref = r.acquire(site);
                if (ref->key_name != site.name()) wrong.fetch_add(1);
                std::lock_guard lock(ref->mutex);
                ref->stats.add_serial(1, fixed);
            }
        });
    }
    std::uint64_t churned = 0;
    threads.emplace_back([&] {
        for (int k = 0; !stop.load(); ++k) {
            const std::string name = "churn/" + std::to_string(k);
            run_serial(r, loop_site(name), 1);
            ++churned;
        }
    });
    for (int t = 0; t < readers; ++t) threads[static_cast<std::size_t>(t)].join();
    stop = true;
    threads.back().join();
    EXPECT_EQ(wrong.load(), 0);
    const totals seen = sum_of(r.snapshot());
    EXPECT_EQ(seen.serial, static_cast<std::uint64_t>(readers * rounds) + churned);
}

TEST(LoopSiteRegistry, PinnedSitesSurvive) {
    site_registry r(8);
    const loop_site pinned("pinned");
    site_state& p = r.pin(pinned);
    {
        std::lock_guard lock(p.mutex);
        p.stats.add_serial(3, fixed);
    }
    const names n("churn/", 100);
    for (int i = 0; i < 100; ++i) run_serial(r, n[i], 1);
    const auto st = r.snapshot(pinned);
    ASSERT_TRUE(st.has_value());
    EXPECT_EQ(st->serial_invocations, 1u);
    EXPECT_EQ(&*r.acquire(pinned), &p) << "the pinned record is still the site's";
    EXPECT_LE(r.live_records(), 8u);
}

TEST(LoopSiteRegistry, EvictedNameStartsFreshAndStillCounts) {
    site_registry r(8);
    const loop_site site("returning");
    for (int k = 0; k < 3; ++k) run_serial(r, site, 10);
    const names n("churn/", 100);
    for (int i = 0; i < 100; ++i) run_serial(r, n[i], 1);
    ASSERT_FALSE(r.snapshot(site).has_value()) << "cold for 100 new sites: folded";
    run_serial(r, site, 4);  // through this thread's cache entry, now stale
    const auto st = r.snapshot(site);
    ASSERT_TRUE(st.has_value());
    EXPECT_EQ(st->serial_invocations, 1u) << "a fresh record";
    EXPECT_EQ(st->iterations, 4u);
    const totals seen = sum_of(r.snapshot());
    EXPECT_EQ(seen.serial, 3u + 100u + 1u) << "the earlier runs are in the folded row";
    EXPECT_EQ(seen.iterations, 30u + 100u + 4u);
}

TEST(LoopSiteRegistry, ExplicitNamesInAReusedBufferAreTold) {
    // An explicit name may sit in a buffer that later holds another name (same address,
    // same length): the cache compares the text.
    site_registry r(64);
    char buffer[8] = "name-a";
    run_serial(r, loop_site(std::string_view(buffer)), 1);
    buffer[5] = 'b';
    run_serial(r, loop_site(std::string_view(buffer)), 1);
    ASSERT_TRUE(r.snapshot(loop_site("name-a")).has_value());
    ASSERT_TRUE(r.snapshot(loop_site("name-b")).has_value());
    EXPECT_EQ(r.snapshot(loop_site("name-a"))->serial_invocations, 1u);
}

TEST(LoopSiteRegistry, InternalSitesAreLeftOutOfTheListing) {
    site_registry r(64);
    const loop_site probe("internal/probe");
    r.pin(probe, site_visibility::internal);
    run_serial(r, probe, 2);
    run_serial(r, loop_site("user/site"), 2);
    const std::vector<site_stats> all = r.snapshot();
    ASSERT_EQ(all.size(), 1u);
    EXPECT_EQ(all[0].site, "user/site");
    const auto st = r.snapshot(probe);
    ASSERT_TRUE(st.has_value()) << "found by name: its counts are kept";
    EXPECT_EQ(st->serial_invocations, 1u);
}

TEST(LoopSiteRegistry, RegistriesDoNotShareCachedRecords) {
    site_registry a(64), b(64);
    const loop_site site("same-name");
    run_serial(a, site, 1);
    run_serial(b, site, 1);
    run_serial(b, site, 1);
    EXPECT_EQ(a.snapshot(site)->serial_invocations, 1u);
    EXPECT_EQ(b.snapshot(site)->serial_invocations, 2u);
}

TEST(LoopSiteRegistry, ResetForgetsTheFoldedRowToo) {
    site_registry r(8);
    const names n("reset/", 40);
    for (int i = 0; i < 40; ++i) run_serial(r, n[i], 1);
    ASSERT_GT(r.snapshot().back().folded_sites, 0u);
    r.reset();
    for (const site_stats& s : r.snapshot()) {
        EXPECT_EQ(s.folded_sites, 0u);
        EXPECT_EQ(s.calls(), 0u) << s.site;
    }
}

}  // namespace
}  // namespace aloe::loop

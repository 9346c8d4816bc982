// Batched commits: run_sums (one fold of a run, and merging batches of them), a site's
// statistics fed runs one by one or summed (site_accumulator::add_parallel_runs), and
// shared_loop's batches (set_batch_limit): when a batch reaches its site's statistics and
// counters, which runs never batch, and flush() / discard_batch().
#include "loop/any_schedule.hpp"
#include "loop/loop_stats.hpp"
#include "loop/shared_loop.hpp"
#include "shared_loop_threads.hpp"
#include "loop/site_registry.hpp"

#include <aloe/stats.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace aloe::loop {
namespace {

// ---------------------------------------------------------------------------------------
// run_sums

worker_record rec(runtime::ticks start, runtime::ticks static_end, runtime::ticks end, std::uint64_t static_it,
                  std::uint64_t dynamic_it, std::uint64_t chunks, std::uint64_t steals) {
    worker_record r;
    r.start = start;
    r.static_end = static_end;
    r.end = end;
    r.static_iterations = static_it;
    r.dynamic_iterations = dynamic_it;
    r.chunks = chunks;
    r.steals = steals;
    return r;
}

struct run {
    std::vector<worker_record> records;
    runtime::ticks t0 = 0, t1 = 0;
};

// Busy times (end − start) chosen so that each run's imbalance (max·p/sum) is a dyadic
// fraction: sums of them are exact in any order, so merged and sequential sums compare with ==.
// A: 2 workers, busy 10 and 30 → imbalance 1.5.
run run_a() {
    return {{rec(1000, 1004, 1010, 40, 6, 3, 0), rec(1001, 1021, 1031, 50, 17, 5, 1)}, 999, 1040};
}
// B: 3 workers, busy 10, 20, 50 → imbalance 150/80 = 1.875.
run run_b() {
    return {{rec(2000, 2007, 2010, 11, 2, 1, 0), rec(2002, 2012, 2022, 13, 4, 2, 2), rec(2003, 2040, 2053, 29, 8, 4, 3)},
            1995, 2061};
}
// C: 3 workers, busy 20, 20, 24 → imbalance 72/64 = 1.125.
run run_c() {
    return {{rec(3000, 3015, 3020, 7, 1, 1, 0), rec(3001, 3011, 3021, 9, 3, 2, 1), rec(3004, 3020, 3028, 12, 5, 3, 0)},
            2990, 3035};
}

void add(run_sums& s, const run& r) { s.add_run(r.records, r.t0, r.t1); }

thread_ticks ticks_of(const worker_record& r, runtime::ticks t1) {
    thread_ticks t;
    t.static_t = r.static_end - r.start;
    t.dynamic_t = r.end - r.static_end;
    t.wait_t = t1 - r.end;
    t.iterations = r.static_iterations + r.dynamic_iterations;
    t.chunks = r.chunks;
    t.steals = r.steals;
    return t;
}

void expect_same(const thread_ticks& a, const thread_ticks& b, const std::string& what) {
    EXPECT_EQ(a.static_t, b.static_t) << what;
    EXPECT_EQ(a.dynamic_t, b.dynamic_t) << what;
    EXPECT_EQ(a.wait_t, b.wait_t) << what;
    EXPECT_EQ(a.iterations, b.iterations) << what;
    EXPECT_EQ(a.chunks, b.chunks) << what;
    EXPECT_EQ(a.steals, b.steals) << what;
}

void expect_same(const run_sums& a, const run_sums& b) {
    EXPECT_EQ(a.runs, b.runs);
    EXPECT_EQ(a.iterations, b.iterations);
    EXPECT_EQ(a.total_t, b.total_t);
    EXPECT_EQ(a.last_t, b.last_t);
    EXPECT_EQ(a.imbalance_sum, b.imbalance_sum);
    EXPECT_EQ(a.imbalance_last, b.imbalance_last);
    ASSERT_EQ(a.last.size(), b.last.size());
    for (std::size_t w = 0; w < a.last.size(); ++w) expect_same(a.last[w], b.last[w], "last[" + std::to_string(w) + "]");
    ASSERT_EQ(a.total.size(), b.total.size());
    for (std::size_t w = 0; w < a.total.size(); ++w)
        expect_same(a.total[w], b.total[w], "total[" + std::to_string(w) + "]");
}

TEST(LoopRunSums, AddRunFoldsOneRun) {
    const run b = run_b();
    run_sums s;
    add(s, b);
    EXPECT_EQ(s.runs, 1u);
    EXPECT_EQ(s.iterations, 11u + 2 + 13 + 4 + 29 + 8);
    EXPECT_EQ(s.last_t, b.t1 - b.t0);
    EXPECT_EQ(s.total_t, b.t1 - b.t0);
    EXPECT_EQ(s.imbalance_last, 1.875);
    EXPECT_EQ(s.imbalance_sum, 1.875);
    ASSERT_EQ(s.last.size(), 3u);
    ASSERT_EQ(s.total.size(), 3u);
    for (std::size_t w = 0; w < 3; ++w) {
        expect_same(s.last[w], ticks_of(b.records[w], b.t1), "last");
        expect_same(s.total[w], ticks_of(b.records[w], b.t1), "total");
    }
}

TEST(LoopRunSums, AddRunSumsWorkersAcrossRunsOfDifferentWidth) {
    const run a = run_a(), b = run_b(), c = run_c();
    run_sums s;
    add(s, a);
    add(s, b);
    add(s, c);
    EXPECT_EQ(s.runs, 3u);
    EXPECT_EQ(s.iterations, (40u + 6 + 50 + 17) + (11u + 2 + 13 + 4 + 29 + 8) + (7u + 1 + 9 + 3 + 12 + 5));
    EXPECT_EQ(s.total_t, (a.t1 - a.t0) + (b.t1 - b.t0) + (c.t1 - c.t0));
    EXPECT_EQ(s.last_t, c.t1 - c.t0);
    EXPECT_EQ(s.imbalance_sum, 1.5 + 1.875 + 1.125);
    EXPECT_EQ(s.imbalance_last, 1.125);
    ASSERT_EQ(s.last.size(), 3u);
    ASSERT_EQ(s.total.size(), 3u);
    for (std::size_t w = 0; w < 3; ++w) expect_same(s.last[w], ticks_of(c.records[w], c.t1), "last");
    // Worker 2 was in B and C only.
    thread_ticks w2 = ticks_of(b.records[2], b.t1);
    const thread_ticks c2 = ticks_of(c.records[2], c.t1);
    w2.static_t += c2.static_t;
    w2.dynamic_t += c2.dynamic_t;
    w2.wait_t += c2.wait_t;
    w2.iterations += c2.iterations;
    w2.chunks += c2.chunks;
    w2.steals += c2.steals;
    expect_same(s.total[2], w2, "total[2]");
    EXPECT_EQ(s.total[0].iterations, 46u + 13 + 8);
    EXPECT_EQ(s.total[1].steals, 1u + 2 + 1);
}

TEST(LoopRunSums, MergeOfSplitEqualsOneByOne) {
    const run a = run_a(), b = run_b(), c = run_c();
    run_sums seq;
    add(seq, a);
    add(seq, b);
    add(seq, c);

    {
        SCOPED_TRACE("A | B C (later batch wider)");
        run_sums x, y;
        add(x, a);
        add(y, b);
        add(y, c);
        x.merge(y);
        expect_same(x, seq);
    }
    {
        SCOPED_TRACE("A B | C");
        run_sums x, y;
        add(x, a);
        add(x, b);
        add(y, c);
        x.merge(y);
        expect_same(x, seq);
    }
    {
        SCOPED_TRACE("(empty) | A B C");
        run_sums x, y;
        add(y, a);
        add(y, b);
        add(y, c);
        x.merge(y);
        expect_same(x, seq);
    }
    {
        SCOPED_TRACE("A B C | (empty)");
        run_sums x, y;
        add(x, a);
        add(x, b);
        add(x, c);
        x.merge(y);
        expect_same(x, seq);
    }
    {
        SCOPED_TRACE("A | B | C (merged one at a time)");
        run_sums x, y, z;
        add(x, a);
        add(y, b);
        add(z, c);
        x.merge(y);
        x.merge(z);
        expect_same(x, seq);
    }
}

TEST(LoopRunSums, MergeOfNarrowerLaterBatchKeepsTheWiderTotals) {
    // B (3 workers) then A (2 workers): totals stay 3 wide, last is A's (2 wide).
    const run a = run_a(), b = run_b(), c = run_c();
    run_sums seq;
    add(seq, b);
    add(seq, c);
    add(seq, a);
    ASSERT_EQ(seq.last.size(), 2u);
    ASSERT_EQ(seq.total.size(), 3u);

    run_sums x, y;
    add(x, b);
    add(x, c);
    add(y, a);
    x.merge(y);
    expect_same(x, seq);
    EXPECT_EQ(x.imbalance_last, 1.5);
    EXPECT_EQ(x.last_t, a.t1 - a.t0);
}

TEST(LoopRunSums, MergeOfWiderLaterBatchGrowsTotalsAndTakesItsLast) {
    const run a = run_a(), b = run_b();
    run_sums x, y;
    add(x, a);
    add(y, b);
    x.merge(y);
    ASSERT_EQ(x.total.size(), 3u);
    ASSERT_EQ(x.last.size(), 3u);
    for (std::size_t w = 0; w < 3; ++w) expect_same(x.last[w], ticks_of(b.records[w], b.t1), "last");
    // Worker 2 only ran in B; workers 0 and 1 in both.
    expect_same(x.total[2], ticks_of(b.records[2], b.t1), "total[2]");
    EXPECT_EQ(x.total[0].iterations, 46u + 13);
    EXPECT_EQ(x.total[1].wait_t, (a.t1 - 1031) + (b.t1 - 2022));
    EXPECT_EQ(x.runs, 2u);
    EXPECT_EQ(x.imbalance_last, 1.875);
    EXPECT_EQ(x.imbalance_sum, 1.5 + 1.875);
}

TEST(LoopRunSums, ClearEmptiesAndALaterRunStartsAfresh) {
    const run a = run_a(), b = run_b(), c = run_c();
    run_sums s;
    add(s, b);
    add(s, c);
    s.clear();
    EXPECT_EQ(s.runs, 0u);
    EXPECT_EQ(s.iterations, 0u);
    EXPECT_EQ(s.total_t, 0u);
    EXPECT_EQ(s.last_t, 0u);
    EXPECT_EQ(s.imbalance_sum, 0.0);
    EXPECT_EQ(s.imbalance_last, 0.0);
    EXPECT_TRUE(s.last.empty());
    EXPECT_TRUE(s.total.empty());

    // A narrower run after clear(): no worker 2 left over from B and C.
    add(s, a);
    run_sums fresh;
    add(fresh, a);
    expect_same(s, fresh);

    // And merging a cleared batch changes nothing.
    run_sums empty;
    add(empty, c);
    empty.clear();
    s.merge(empty);
    expect_same(s, fresh);
}

// ---------------------------------------------------------------------------------------
// site_accumulator

void expect_same(const thread_loop_stats& a, const thread_loop_stats& b, const std::string& what) {
    EXPECT_EQ(a.static_s, b.static_s) << what;
    EXPECT_EQ(a.dynamic_s, b.dynamic_s) << what;
    EXPECT_EQ(a.wait_s, b.wait_s) << what;
    EXPECT_EQ(a.iterations, b.iterations) << what;
    EXPECT_EQ(a.chunks, b.chunks) << what;
    EXPECT_EQ(a.steals, b.steals) << what;
}

void expect_same(const site_stats& a, const site_stats& b) {
    EXPECT_EQ(a.site, b.site);
    EXPECT_EQ(a.schedule, b.schedule);
    EXPECT_EQ(a.invocations, b.invocations);
    EXPECT_EQ(a.serial_invocations, b.serial_invocations);
    EXPECT_EQ(a.empty_invocations, b.empty_invocations);
    EXPECT_EQ(a.iterations, b.iterations);
    EXPECT_EQ(a.total_s, b.total_s);
    EXPECT_EQ(a.last_s, b.last_s);
    EXPECT_EQ(a.imbalance_last, b.imbalance_last);
    EXPECT_EQ(a.imbalance_mean, b.imbalance_mean);
    ASSERT_EQ(a.last.size(), b.last.size());
    for (std::size_t w = 0; w < a.last.size(); ++w) expect_same(a.last[w], b.last[w], "last[" + std::to_string(w) + "]");
    ASSERT_EQ(a.total.size(), b.total.size());
    for (std::size_t w = 0; w < a.total.size(); ++w)
        expect_same(a.total[w], b.total[w], "total[" + std::to_string(w) + "]");
}

TEST(LoopSiteAccumulator, ParallelRunsEqualRunsOneByOne) {
    const run a = run_a(), b = run_b(), c = run_c();
    const schedule used("dynamic,chunk=4");
    site_accumulator one;
    for (const run* r : {&a, &b, &c}) one.add_parallel(r->records, r->t0, r->t1, used);
    run_sums batch;
    add(batch, a);
    add(batch, b);
    add(batch, c);
    site_accumulator batched;
    batched.add_parallel_runs(batch, used);

    const site_stats s1 = one.snapshot("site"), s2 = batched.snapshot("site");
    expect_same(s2, s1);
    EXPECT_EQ(s2.invocations, 3u);
    EXPECT_EQ(s2.iterations, batch.iterations);
    EXPECT_EQ(s2.imbalance_last, 1.125);
    EXPECT_EQ(s2.imbalance_mean, (1.5 + 1.875 + 1.125) / 3);
    EXPECT_EQ(s2.schedule, used.to_string());
    EXPECT_EQ(s2.total.size(), 3u);
}

TEST(LoopSiteAccumulator, BatchAfterSingleRunsAndSerialRunsAddsUp) {
    // The realistic mix: a run committed at once, serial and empty calls, then a batch.
    const run a = run_a(), b = run_b(), c = run_c();
    const schedule first("static"), used("guided");
    site_accumulator one;
    one.add_parallel(a.records, a.t0, a.t1, first);
    one.add_serial(17, first);
    one.add_empty(first);
    one.add_parallel(b.records, b.t0, b.t1, used);
    one.add_parallel(c.records, c.t0, c.t1, used);

    site_accumulator mixed;
    mixed.add_parallel(a.records, a.t0, a.t1, first);
    mixed.add_serial(17, first);
    mixed.add_empty(first);
    run_sums batch;
    add(batch, b);
    add(batch, c);
    mixed.add_parallel_runs(batch, used);

    const site_stats s1 = one.snapshot("x"), s2 = mixed.snapshot("x");
    expect_same(s2, s1);
    EXPECT_EQ(s2.invocations, 3u);
    EXPECT_EQ(s2.serial_invocations, 1u);
    EXPECT_EQ(s2.empty_invocations, 1u);
    EXPECT_EQ(s2.iterations, 17u + (40 + 6 + 50 + 17) + (11 + 2 + 13 + 4 + 29 + 8) + (7 + 1 + 9 + 3 + 12 + 5));
    EXPECT_EQ(s2.schedule, used.to_string());

    // An empty batch adds no run.
    run_sums empty;
    mixed.add_parallel_runs(empty, used);
    EXPECT_EQ(mixed.snapshot("x").invocations, 3u);
}

// ---------------------------------------------------------------------------------------
// shared_loop

using test_threads::run_on_threads;

// The same on one OS thread acting as each participant in turn (no schedule here waits for
// another participant).
std::uint64_t run_sequentially(shared_loop& loop, int threads) {
    std::uint64_t ran = 0;
    chunk c;
    for (int t = 0; t < threads; ++t)
        while (loop.next(t, threads, c)) ran += c.end - c.begin;
    return ran;
}

// The interposer's per-chunk path: stepper_for, then fn or step_direct, then finish().
std::uint64_t run_with_steppers(shared_loop& loop, int threads) {
    std::atomic<std::uint64_t> ran{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            shared_loop::stepper s = loop.stepper_for(t, threads);
            chunk c;
            if (s.direct.next != nullptr) {
                while (step_direct(s.direct, *s.part, c)) ran.fetch_add(c.end - c.begin);
            } else {
                while (s.fn(s.sched, *s.part, c)) ran.fetch_add(c.end - c.begin);
            }
            loop.finish(t);
        });
    }
    for (std::thread& th : pool) th.join();
    return ran.load();
}

std::uint64_t counter(const std::string& instance, const char* name) {
    const auto v = aloe::read_counter("/loop{" + instance + "}/" + name);
    return v ? v->value : 0;
}

// A site's statistics and its counters' values (baselines: records of other registries in
// this process share the instance names site#N, and counters are never reset).
struct site_view {
    site_registry& reg;
    loop_site key;
    site_state& st;
    std::string instance;
    std::uint64_t runs0, iterations0;

    site_view(site_registry& r, const char* name)
        : reg(r), key(name), st(r.pin(key)), instance("site#" + std::to_string(st.record)),
          runs0(counter(instance, "parallel-runs")), iterations0(counter(instance, "iterations")) {}

    site_stats stats() {
        const auto s = reg.snapshot(key);
        EXPECT_TRUE(s.has_value());
        return s.value_or(site_stats{});
    }
    std::uint64_t invocations() { return stats().invocations; }
    std::uint64_t counted_runs() const { return counter(instance, "parallel-runs") - runs0; }
    std::uint64_t counted_iterations() const { return counter(instance, "iterations") - iterations0; }
};

TEST(LoopSharedLoopBatch, RunsCommitWhenTheBatchIsFull) {
    site_registry r(64);
    site_view site(r, "batch/full");
    shared_loop loop;
    loop.set_batch_limit(4);
    const schedule spec("dynamic,chunk=3");
    constexpr std::uint64_t n = 100;

    for (int k = 1; k <= 3; ++k) {
        loop.reset(n, spec, site.st);
        EXPECT_EQ(run_on_threads(loop, 3), n);
        EXPECT_EQ(loop.batched_runs(), static_cast<std::uint64_t>(k));
        EXPECT_EQ(site.invocations(), 0u) << "run " << k << " committed before the batch was full";
    }
    EXPECT_EQ(site.counted_runs(), 0u);
    EXPECT_EQ(site.counted_iterations(), 0u);

    loop.reset(n, spec, site.st);
    EXPECT_EQ(run_on_threads(loop, 3), n);
    EXPECT_EQ(loop.batched_runs(), 0u);
    site_stats s = site.stats();
    EXPECT_EQ(s.invocations, 4u);
    EXPECT_EQ(s.iterations, 4 * n);
    EXPECT_EQ(s.schedule, schedule("dynamic,chunk=3").to_string());
    EXPECT_EQ(s.last.size(), 3u);
    EXPECT_EQ(s.total.size(), 3u);
    EXPECT_GT(s.total_s, 0.0);
    EXPECT_GE(s.total_s, s.last_s);
    EXPECT_EQ(s.counters, site.instance);
    EXPECT_EQ(site.counted_runs(), 4u);
    EXPECT_EQ(site.counted_iterations(), 4 * n);

    // Two more: pending until flush().
    for (int k = 1; k <= 2; ++k) {
        loop.reset(n, spec, site.st);
        EXPECT_EQ(run_on_threads(loop, 3), n);
    }
    EXPECT_EQ(loop.batched_runs(), 2u);
    EXPECT_EQ(site.invocations(), 4u);
    loop.flush();
    EXPECT_EQ(loop.batched_runs(), 0u);
    s = site.stats();
    EXPECT_EQ(s.invocations, 6u);
    EXPECT_EQ(s.iterations, 6 * n);
    EXPECT_EQ(site.counted_runs(), 6u);
    EXPECT_EQ(site.counted_iterations(), 6 * n);

    // flush() again is a no-op.
    loop.flush();
    EXPECT_EQ(site.invocations(), 6u);
    EXPECT_EQ(site.counted_runs(), 6u);
}

TEST(LoopSharedLoopBatch, IterationsOfRunsOfVaryingCountsAndPaths) {
    // Counts change (full reset) and stay (rewind); three ways of driving.
    site_registry r(64);
    site_view site(r, "batch/counts");
    shared_loop loop;
    loop.set_batch_limit(4);
    const std::uint64_t counts[] = {100, 100, 37, 37, 37, 5, 1000, 1000, 2};
    std::uint64_t total = 0;
    int k = 0;
    for (std::uint64_t n : counts) {
        loop.reset(n, schedule("dynamic,chunk=4"), site.st);
        std::uint64_t ran = 0;
        switch (k++ % 3) {
            case 0: ran = run_on_threads(loop, 4); break;
            case 1: ran = run_with_steppers(loop, 4); break;
            default: ran = run_sequentially(loop, 4); break;
        }
        EXPECT_EQ(ran, n) << "run " << k;
        total += n;
    }
    EXPECT_EQ(loop.batched_runs(), 1u);  // 9 runs: two full batches and one pending
    loop.flush();
    const site_stats s = site.stats();
    EXPECT_EQ(s.invocations, std::size(counts));
    EXPECT_EQ(s.iterations, total);
    std::uint64_t per_thread = 0;
    for (const thread_loop_stats& t : s.total) per_thread += t.iterations;
    EXPECT_EQ(per_thread, total);
    std::uint64_t last = 0;
    for (const thread_loop_stats& t : s.last) last += t.iterations;
    EXPECT_EQ(last, 2u);
    EXPECT_EQ(site.counted_runs(), std::size(counts));
    EXPECT_EQ(site.counted_iterations(), total);
}

TEST(LoopSharedLoopBatch, StepperPathWithRewindCountsEveryIteration) {
    // The interposer's steady state: the same loop again and again (rerun/rewind) through steppers.
    site_registry r(64);
    site_view site(r, "batch/steppers");
    shared_loop loop;
    loop.set_batch_limit(4);
    constexpr std::uint64_t n = 1001;  // the last chunk is short
    for (int k = 0; k < 8; ++k) {
        // As the interposer's fill_slot does: rerun when it can, else reset.
        const bool reran = loop.rerun(n, site.st);
        EXPECT_EQ(reran, k > 0) << "run " << k;
        if (!reran) loop.reset(n, schedule("dynamic,chunk=8"), site.st);
        EXPECT_EQ(run_with_steppers(loop, 3), n);
    }
    EXPECT_EQ(loop.batched_runs(), 0u);
    const site_stats s = site.stats();
    EXPECT_EQ(s.invocations, 8u);
    EXPECT_EQ(s.iterations, 8 * n);
    std::uint64_t last = 0;
    for (const thread_loop_stats& t : s.last) last += t.iterations;
    EXPECT_EQ(last, n);
    EXPECT_EQ(site.counted_runs(), 8u);
    EXPECT_EQ(site.counted_iterations(), 8 * n);
}

TEST(LoopSharedLoopBatch, ResetToAnotherSiteCommitsThePendingRuns) {
    site_registry r(64);
    site_view a(r, "batch/site-a");
    site_view b(r, "batch/site-b");
    shared_loop loop;
    loop.set_batch_limit(4);
    const schedule spec("static");
    for (int k = 0; k < 3; ++k) {
        loop.reset(50, spec, a.st);
        EXPECT_EQ(run_on_threads(loop, 2), 50u);
    }
    EXPECT_EQ(loop.batched_runs(), 3u);
    EXPECT_EQ(a.invocations(), 0u);

    loop.reset(20, spec, b.st);  // before any thread runs b's loop
    EXPECT_EQ(loop.batched_runs(), 0u);
    site_stats sa = a.stats();
    EXPECT_EQ(sa.invocations, 3u);
    EXPECT_EQ(sa.iterations, 150u);
    EXPECT_EQ(a.counted_runs(), 3u);
    EXPECT_EQ(a.counted_iterations(), 150u);

    EXPECT_EQ(run_on_threads(loop, 2), 20u);
    EXPECT_EQ(loop.batched_runs(), 1u);
    EXPECT_EQ(b.invocations(), 0u);
    loop.reset(50, spec, a.st);  // and back: b's run commits to b, not a
    EXPECT_EQ(run_on_threads(loop, 2), 50u);
    EXPECT_EQ(b.invocations(), 1u);
    EXPECT_EQ(b.stats().iterations, 20u);
    loop.flush();
    sa = a.stats();
    EXPECT_EQ(sa.invocations, 4u);
    EXPECT_EQ(sa.iterations, 200u);
    EXPECT_EQ(a.counted_runs(), 4u);
    EXPECT_EQ(b.counted_runs(), 1u);
    EXPECT_EQ(b.counted_iterations(), 20u);
}

TEST(LoopSharedLoopBatch, AnotherScheduleOrTeamSizeCommitsThePendingRuns) {
    site_registry r(64);
    site_view site(r, "batch/spec-team");
    shared_loop loop;
    loop.set_batch_limit(4);
    for (int k = 0; k < 2; ++k) {
        loop.reset(60, schedule("dynamic,chunk=2"), site.st);
        EXPECT_EQ(run_on_threads(loop, 3), 60u);
    }
    EXPECT_EQ(loop.batched_runs(), 2u);
    loop.reset(60, schedule("guided"), site.st);  // another schedule: the batch commits
    EXPECT_EQ(loop.batched_runs(), 0u);
    EXPECT_EQ(site.invocations(), 2u);
    EXPECT_EQ(site.stats().schedule, schedule("dynamic,chunk=2").to_string());
    EXPECT_EQ(run_on_threads(loop, 3), 60u);
    EXPECT_EQ(loop.batched_runs(), 1u);

    // The same loop on a team of another size: the 3-thread run commits before the 2-thread one joins.
    loop.reset(60, schedule("guided"), site.st);
    EXPECT_EQ(run_on_threads(loop, 2), 60u);
    EXPECT_EQ(site.invocations(), 3u);
    EXPECT_EQ(site.stats().last.size(), 3u);
    EXPECT_EQ(loop.batched_runs(), 1u);
    loop.flush();
    const site_stats s = site.stats();
    EXPECT_EQ(s.invocations, 4u);
    EXPECT_EQ(s.iterations, 240u);
    EXPECT_EQ(s.schedule, schedule("guided").to_string());
    EXPECT_EQ(s.last.size(), 2u);
    EXPECT_EQ(s.total.size(), 3u);
    EXPECT_EQ(site.counted_runs(), 4u);
    EXPECT_EQ(site.counted_iterations(), 240u);
}

// Schedules whose runs never batch: every run commits when it ends.
void expect_every_run_commits(const char* site_name, const schedule& spec, std::uint32_t limit) {
    SCOPED_TRACE(spec.to_string() + " limit " + std::to_string(limit));
    site_registry r(64);
    site_view site(r, site_name);
    shared_loop loop;
    loop.set_batch_limit(limit);
    constexpr std::uint64_t n = 120;
    for (std::uint64_t k = 1; k <= 6; ++k) {
        loop.reset(n, spec, site.st);
        EXPECT_EQ(run_on_threads(loop, 3), n);
        EXPECT_EQ(loop.batched_runs(), 0u) << "run " << k;
        const site_stats s = site.stats();
        EXPECT_EQ(s.invocations, k) << "run " << k;
        EXPECT_EQ(s.iterations, k * n) << "run " << k;
        EXPECT_EQ(site.counted_runs(), k) << "run " << k;
        EXPECT_EQ(site.counted_iterations(), k * n) << "run " << k;
    }
    loop.flush();  // nothing pending
    EXPECT_EQ(site.invocations(), 6u);
    EXPECT_EQ(site.counted_runs(), 6u);
}

TEST(LoopSharedLoopBatch, SchedulesWithHistoryCommitEveryRun) {
    expect_every_run_commits("batch/weighted", schedule("weighted"), 4);
    expect_every_run_commits("batch/tasklets", schedule("tasklets,n=8"), 4);
}

TEST(LoopSharedLoopBatch, AdaptiveCommitsEveryRun) { expect_every_run_commits("batch/adaptive", schedule("adaptive"), 4); }

TEST(LoopSharedLoopBatch, DefaultLimitCommitsEveryRun) {
    expect_every_run_commits("batch/default-dynamic", schedule("dynamic,chunk=4"), 0);
    expect_every_run_commits("batch/default-static", schedule("static"), 0);
    {
        // And the default really is 0.
        site_registry r(64);
        site_view site(r, "batch/unset");
        shared_loop loop;
        loop.reset(10, schedule("static"), site.st);
        EXPECT_EQ(run_on_threads(loop, 2), 10u);
        EXPECT_EQ(loop.batched_runs(), 0u);
        EXPECT_EQ(site.invocations(), 1u);
    }
}

TEST(LoopSharedLoopBatch, HistoryScheduleAfterABatchCommitsItFirst) {
    // A pending batch of dynamic runs, then weighted at the same site: the batch commits
    // before the weighted run, and the weighted run commits at once.
    site_registry r(64);
    site_view site(r, "batch/then-weighted");
    shared_loop loop;
    loop.set_batch_limit(4);
    for (int k = 0; k < 3; ++k) {
        loop.reset(30, schedule("dynamic"), site.st);
        EXPECT_EQ(run_on_threads(loop, 2), 30u);
    }
    EXPECT_EQ(loop.batched_runs(), 3u);
    loop.reset(30, schedule("weighted"), site.st);
    EXPECT_EQ(run_on_threads(loop, 2), 30u);
    EXPECT_EQ(loop.batched_runs(), 0u);
    const site_stats s = site.stats();
    EXPECT_EQ(s.invocations, 4u);
    EXPECT_EQ(s.iterations, 120u);
    EXPECT_EQ(s.schedule, schedule("weighted").to_string());
    EXPECT_EQ(site.counted_runs(), 4u);
}

// A policy on every loop site (not adaptive-only) that only counts what it observes.
std::atomic<int> observed_runs{0};
std::atomic<std::uint64_t> observed_iterations{0};

struct observer final : site_policy {
    std::string_view name() const noexcept override { return "batch-observer"; }
    bool serves(const schedule*) const noexcept override { return true; }
    void plan(std::uint64_t, loop_plan&) override {}
    void observe(const loop_outcome& o) override {
        observed_runs.fetch_add(1);
        observed_iterations.fetch_add(o.iterations);
    }
    policy_status status() const override { return {"batch-observer", policy_state::idle, "", 0, {}}; }
};

const policy_kind observer_kind{"batch-observer",
                                [](const policy_site& s) noexcept { return s.name == "batch/observed"; },
                                [](const policy_site&) -> std::unique_ptr<site_policy> { return std::make_unique<observer>(); },
                                nullptr, /*adaptive_only=*/false};

TEST(LoopSharedLoopBatch, RunsAPolicyObservesCommitEveryRunAfterThePendingBatch) {
    site_registry r(64);
    site_view site(r, "batch/observed");
    shared_loop loop;
    loop.set_batch_limit(4);
    const schedule spec("dynamic,chunk=4");
    for (int k = 0; k < 2; ++k) {  // no policy yet: batched
        loop.reset(40, spec, site.st);
        EXPECT_EQ(run_on_threads(loop, 2), 40u);
    }
    EXPECT_EQ(loop.batched_runs(), 2u);
    ASSERT_TRUE(register_policy_kind(&observer_kind));
    observed_runs = 0;
    observed_iterations = 0;
    for (std::uint64_t k = 1; k <= 5; ++k) {
        // The same loop: it reruns, but a policy applies now, so build() makes it anew.
        if (!loop.rerun(40, site.st)) loop.reset(40, spec, site.st);
        EXPECT_EQ(run_on_threads(loop, 2), 40u);
        EXPECT_EQ(loop.batched_runs(), 0u) << "run " << k;
        EXPECT_EQ(site.invocations(), 2 + k) << "run " << k;
        EXPECT_EQ(site.counted_runs(), 2 + k) << "run " << k;
    }
    unregister_policy_kind(&observer_kind);
    EXPECT_EQ(observed_runs.load(), 5);
    EXPECT_EQ(observed_iterations.load(), 200u);
    const site_stats s = site.stats();
    EXPECT_EQ(s.iterations, 280u);
    EXPECT_EQ(site.counted_iterations(), 280u);

    // Unregistered: batching again.
    loop.reset(40, spec, site.st);
    EXPECT_EQ(run_on_threads(loop, 2), 40u);
    EXPECT_EQ(loop.batched_runs(), 1u);
    EXPECT_EQ(observed_runs.load(), 5);
    loop.flush();
    EXPECT_EQ(site.invocations(), 8u);
}

TEST(LoopSharedLoopBatch, DiscardBatchDropsPendingRuns) {
    site_registry r(64);
    site_view site(r, "batch/discard");
    shared_loop loop;
    loop.set_batch_limit(4);
    const schedule spec("dynamic,chunk=5");
    for (int k = 0; k < 4; ++k) {  // one full batch, committed
        loop.reset(40, spec, site.st);
        EXPECT_EQ(run_on_threads(loop, 2), 40u);
    }
    for (int k = 0; k < 3; ++k) {  // three pending
        loop.reset(40, spec, site.st);
        EXPECT_EQ(run_on_threads(loop, 2), 40u);
    }
    EXPECT_EQ(loop.batched_runs(), 3u);
    const site_stats before = site.stats();
    EXPECT_EQ(before.invocations, 4u);
    loop.discard_batch();
    EXPECT_EQ(loop.batched_runs(), 0u);
    loop.flush();
    site_stats after = site.stats();
    expect_same(after, before);
    EXPECT_EQ(site.counted_runs(), 4u);
    EXPECT_EQ(site.counted_iterations(), 160u);

    // Batching goes on after a discard: a later run is counted once, not with the dropped ones.
    loop.reset(40, spec, site.st);
    EXPECT_EQ(run_on_threads(loop, 2), 40u);
    EXPECT_EQ(loop.batched_runs(), 1u);
    loop.flush();
    after = site.stats();
    EXPECT_EQ(after.invocations, 5u);
    EXPECT_EQ(after.iterations, 200u);
    EXPECT_EQ(site.counted_runs(), 5u);
    EXPECT_EQ(site.counted_iterations(), 200u);
}

TEST(LoopSharedLoopBatch, EmptyLoopsCountAtOnceBesideABatch) {
    site_registry r(64);
    site_view site(r, "batch/empty");
    shared_loop loop;
    loop.set_batch_limit(4);
    const schedule spec("dynamic,chunk=2");
    loop.reset(10, spec, site.st);
    EXPECT_EQ(run_on_threads(loop, 2), 10u);
    loop.reset(0, spec, site.st);
    EXPECT_EQ(run_on_threads(loop, 2), 0u);
    loop.reset(10, spec, site.st);
    EXPECT_EQ(run_on_threads(loop, 2), 10u);
    EXPECT_EQ(loop.batched_runs(), 2u);
    site_stats s = site.stats();
    EXPECT_EQ(s.empty_invocations, 1u);
    EXPECT_EQ(s.invocations, 0u);
    loop.flush();
    s = site.stats();
    EXPECT_EQ(s.empty_invocations, 1u);
    EXPECT_EQ(s.invocations, 2u);
    EXPECT_EQ(s.iterations, 20u);
    EXPECT_EQ(s.calls(), 3u);
}

TEST(LoopSharedLoopBatch, CountersAgreeWithStatisticsAfterFlush) {
    // Counters beyond runs and iterations: chunks and time, against the per-thread statistics.
    site_registry r(64);
    site_view site(r, "batch/counters");
    const std::uint64_t chunks0 = counter(site.instance, "chunks");
    shared_loop loop;
    loop.set_batch_limit(3);
    for (int k = 0; k < 7; ++k) {
        loop.reset(64, schedule("dynamic,chunk=4"), site.st);
        EXPECT_EQ(run_on_threads(loop, 4), 64u);
    }
    loop.flush();
    const site_stats s = site.stats();
    EXPECT_EQ(s.invocations, 7u);
    EXPECT_EQ(site.counted_runs(), s.invocations);
    EXPECT_EQ(site.counted_iterations(), s.iterations);
    std::uint64_t chunks = 0;
    for (const thread_loop_stats& t : s.total) chunks += t.chunks;
    EXPECT_EQ(counter(site.instance, "chunks") - chunks0, chunks);
    EXPECT_EQ(chunks, 7u * 16);  // 64 / 4 chunks per run, all dynamic
}

}  // namespace
}  // namespace aloe::loop

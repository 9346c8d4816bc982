// The interposer in-process: this program links the GOMP_* entry points itself, so its
// OpenMP constructs reach them as a preloaded libaloe-gomp's would, and libgomp behind them.
// CTest runs it once per schedule (ALOE_SCHEDULE) with ALOE_NUM_THREADS=3 (CMakeLists.txt).
#include "omp/interposer_settings.hpp"
#include "omp/omp_site.hpp"

#include <aloe/stats.hpp>

#include <gtest/gtest.h>
#include <omp.h>

#include <atomic>
#include <memory>
#include <climits>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

// Entry points GCC 12 no longer emits (the pre-4.9 start/end protocol) or emits only in
// cancellable regions: called by hand, as older binaries and cancel-aware code do.
extern "C" {
void GOMP_parallel_start(void (*fn)(void*), void* data, unsigned num_threads);
void GOMP_parallel_end();
void GOMP_parallel_loop_dynamic_start(void (*fn)(void*), void* data, unsigned num_threads, long start, long end,
                                      long incr, long chunk);
bool GOMP_loop_dynamic_start(long start, long end, long incr, long chunk, long* istart, long* iend);
bool GOMP_loop_dynamic_next(long* istart, long* iend);
void GOMP_loop_end_nowait();
bool GOMP_loop_end_cancel();
}

namespace aloe::omp {
namespace {

bool forwarding_everything() { return settings().default_choice.kind == loop_choice::kind_t::forward; }

// Sites whose loop form is `form` (this program's loops of that form).
std::vector<omp_site*> loop_sites_of(loop_form form) {
    std::vector<omp_site*> out;
    for (omp_site* s : all_sites(site_kind::loop))
        if (s->form.load() == form) out.push_back(s);
    return out;
}

void expect_once(const std::vector<std::atomic<int>>& hits, const char* what) {
    for (std::size_t i = 0; i < hits.size(); ++i) ASSERT_EQ(hits[i].load(), 1) << what << ": iteration " << i;
}

TEST(Interposer, TeamSizeComesFromAloeAndANumThreadsClauseIsKept) {
    ASSERT_EQ(settings().threads, 3) << "CTest sets ALOE_NUM_THREADS=3";
    int team = 0, asked = 0;
#pragma omp parallel
    {
#pragma omp single
        team = omp_get_num_threads();
    }
#pragma omp parallel num_threads(2)
    {
#pragma omp single
        asked = omp_get_num_threads();
    }
    EXPECT_EQ(team, 3);
    EXPECT_EQ(asked, 2);
    int clause_sites = 0;
    for (omp_site* s : all_sites(site_kind::region))
        if (const char* why = s->non_malleable.load()) clause_sites += std::string(why) == "num_threads clause";
    EXPECT_EQ(clause_sites, 1);
}

// region_threads() asks the regions' policy chain: a kind registered for regions sets the
// team size of malleable regions (the seam of the node daemon and concurrency throttling),
// never of a region with a num_threads clause.
struct region_cap final : loop::site_policy {
    std::string_view name() const noexcept override { return "region-cap"; }
    bool serves(const schedule*) const noexcept override { return true; }
    void plan(std::uint64_t, loop::loop_plan& p) override { p.threads = 2; }
    void observe(const loop::loop_outcome&) override {}
    policy_status status() const override { return {"region-cap", policy_state::acting, "threads=2", 2, {}}; }
};

TEST(Interposer, RegionThreadCountsComeFromThePolicyChain) {
    static const loop::policy_kind kind{
        "region-cap", [](const loop::policy_site& s) noexcept { return s.scope == loop::policy_scope::region; },
        [](const loop::policy_site&) -> std::unique_ptr<loop::site_policy> { return std::make_unique<region_cap>(); },
        nullptr, false};
    ASSERT_TRUE(loop::register_policy_kind(&kind));
    int capped = 0, clause = 0;
#pragma omp parallel
    {
#pragma omp single
        capped = omp_get_num_threads();
    }
#pragma omp parallel num_threads(3)
    {
#pragma omp single
        clause = omp_get_num_threads();
    }
    loop::unregister_policy_kind(&kind);
    int again = 0;
#pragma omp parallel
    {
#pragma omp single
        again = omp_get_num_threads();
    }
    EXPECT_EQ(capped, 2) << "the chain's count";
    EXPECT_EQ(clause, 3) << "a num_threads clause is the program's";
    EXPECT_EQ(again, 3) << "without the kind: --threads";
}

// After a region the chain observes it, with the iterations of the worksharing loops it ran
// (the node daemon's efficiency meter compares runs per iteration: a region site called on
// grids of different sizes does different work each time).
struct region_watch final : loop::site_policy {
    static inline std::vector<std::uint64_t> seen;
    std::string_view name() const noexcept override { return "region-watch"; }
    bool serves(const schedule*) const noexcept override { return true; }
    void plan(std::uint64_t, loop::loop_plan&) override {}
    void observe(const loop::loop_outcome& o) override {
        if (o.join > o.fork) seen.push_back(o.iterations);
    }
    policy_status status() const override { return {"region-watch", policy_state::idle, "", 0, {}}; }
};

TEST(Interposer, TheRegionChainObservesEachRegionWithItsLoopIterations) {
    static const loop::policy_kind kind{
        "region-watch", [](const loop::policy_site& s) noexcept { return s.scope == loop::policy_scope::region; },
        [](const loop::policy_site&) -> std::unique_ptr<loop::site_policy> { return std::make_unique<region_watch>(); },
        nullptr, false, false, /*scopes=*/2};
    region_watch::seen.clear();
    ASSERT_TRUE(loop::register_policy_kind(&kind));
    std::atomic<long> sum{0};
    for (const int n : {1000, 250}) {
#pragma omp parallel
        {
#pragma omp for schedule(runtime)
            for (int i = 0; i < n; ++i) sum.fetch_add(i, std::memory_order_relaxed);
#pragma omp for schedule(dynamic, 7)
            for (int i = 0; i < 2 * n; ++i) sum.fetch_add(1, std::memory_order_relaxed);
        }
    }
#pragma omp parallel
    sum.fetch_add(1, std::memory_order_relaxed);  // a region without loops: 0 iterations
    loop::unregister_policy_kind(&kind);
    EXPECT_EQ(region_watch::seen, (std::vector<std::uint64_t>{3000, 750, 0}));
}

// The interposer's region and loop counts are counters of the one registry: instances named
// after the site, readable by wildcard through aloe's public API.
TEST(Interposer, SiteCountsAreRegistryCounters) {
    std::atomic<int> bodies{0};
    for (int r = 0; r < 3; ++r) {
#pragma omp parallel
        bodies.fetch_add(1);  // not empty: GCC drops an empty region
    }
    EXPECT_EQ(bodies.load(), 9);
    std::uint64_t runs = 0;
    bool named = false;
    for (const aloe::counter_sample& c : aloe::read_counters("/region{*}/runs")) {
        runs += c.value;
        named = named || c.name.find("+0x") != std::string::npos;
    }
    EXPECT_GE(runs, 3u);
    EXPECT_TRUE(named) << "instances are named module+0xOFFSET";
    const auto times = aloe::read_counters("/region{*}/time");
    ASSERT_FALSE(times.empty());
    EXPECT_EQ(times.front().unit, aloe::counter_unit::nanoseconds);
    long sum = 0;
#pragma omp parallel for schedule(dynamic, 4) reduction(+ : sum)
    for (long i = 0; i < 100; ++i) sum += i;
    EXPECT_EQ(sum, 4950);
    std::uint64_t loop_runs = 0;
    for (const aloe::counter_sample& c : aloe::read_counters("/loop{*+0x*}/*-runs")) loop_runs += c.value;
    EXPECT_EQ(loop_runs, 1u) << "the loop, taken or forwarded";
}

TEST(Interposer, DynamicGuidedAndRuntimeLoopsRunEveryIterationOnce) {
    for (int n : {0, 1, 2, 3, 7, 1000, 4099}) {
        std::vector<std::atomic<int>> a(n), b(n), c(n), d(n);
#pragma omp parallel
        {
#pragma omp for schedule(dynamic, 3)
            for (int i = 0; i < n; ++i) a[i]++;
#pragma omp for schedule(guided)
            for (int i = n - 1; i >= 0; --i) b[i]++;
#pragma omp for schedule(runtime)
            for (int i = 0; i < n; i += 1) c[i]++;
#pragma omp for schedule(monotonic : dynamic, 5)
            for (long i = 0; i < n; ++i) d[i]++;
        }
        expect_once(a, "dynamic,3");
        expect_once(b, "guided, downward");
        expect_once(c, "runtime");
        expect_once(d, "monotonic dynamic");
    }
    const auto dynamic_sites = loop_sites_of(loop_form::nonmonotonic_dynamic);
    ASSERT_FALSE(dynamic_sites.empty());
    for (omp_site* s : dynamic_sites) {
        if (forwarding_everything()) {
            EXPECT_EQ(runtime::read_total(s->taken), 0u);
            EXPECT_GT(runtime::read_total(s->forwarded), 0u);
        } else {
            EXPECT_GT(runtime::read_total(s->taken), 0u) << s->name;
        }
    }
}

TEST(Interposer, NowaitChainLongerThanTheRingKeepsEveryLoopApart) {
    constexpr int loops = 40, n = 301;
    std::vector<std::vector<int>> out(loops, std::vector<int>(n, 0));
    std::atomic<int> wrong{0};
#pragma omp parallel
    {
        for (int k = 0; k < loops; ++k) {
#pragma omp for schedule(dynamic, 2) nowait
            for (int i = 0; i < n; ++i) out[static_cast<std::size_t>(k)][static_cast<std::size_t>(i)] += k + 1;
        }
#pragma omp barrier
#pragma omp for schedule(dynamic)
        for (int k = 0; k < loops; ++k)
            for (int i = 0; i < n; ++i)
                if (out[static_cast<std::size_t>(k)][static_cast<std::size_t>(i)] != k + 1) wrong++;
    }
    EXPECT_EQ(wrong.load(), 0);
}

// A thread held before a nowait chain until the others have run all of it (valid OpenMP:
// libgomp makes work shares as threads need them). Before overflow slots, a thread 8 loops
// ahead waited for the held one to drain the ring slot: a deadlock (CTest's timeout).
TEST(Interposer, ThreadsFarAheadOfAHeldOneNeverWaitForIt) {
    constexpr int loops = 3 * 8 + 1, n = 97;
    for (int held_last = 0; held_last <= 1; ++held_last) {
        std::vector<std::vector<std::atomic<int>>> hits(loops);
        for (auto& h : hits) h = std::vector<std::atomic<int>>(n);
        std::atomic<int> finished{0};
#pragma omp parallel
        {
            const int t = omp_get_thread_num(), p = omp_get_num_threads();
            const int held = held_last != 0 ? p - 1 : 0;
            if (t == held)
                while (finished.load() != p - 1) std::this_thread::yield();
            for (int k = 0; k < loops; ++k) {
#pragma omp for schedule(dynamic, 3) nowait
                for (int i = 0; i < n; ++i) hits[static_cast<std::size_t>(k)][static_cast<std::size_t>(i)]++;
            }
            if (t != held) finished++;
        }
        for (int k = 0; k < loops; ++k) expect_once(hits[static_cast<std::size_t>(k)], "loop of the chain");
    }
    const auto sites = loop_sites_of(loop_form::nonmonotonic_dynamic);
    std::uint64_t taken = 0, forwarded = 0;
    for (omp_site* s : sites) {
        taken += runtime::read_total(s->taken);
        forwarded += runtime::read_total(s->forwarded);
    }
    EXPECT_EQ(taken + forwarded, 2u * loops);
    EXPECT_EQ(forwarding_everything() ? forwarded : taken, 2u * loops);
}

// `parallel reduction(task, ...)` is GOMP_parallel_reductions, which the interposer does not
// wrap: its loops are forwarded from threads without a region view, and must be counted
// once per execution (by OpenMP thread 0), not once per thread.
TEST(Interposer, LoopsInARegionAloeDidNotStartAreCountedOncePerExecution) {
    long x = 0;
    std::vector<std::atomic<int>> hits(5 * 100);
    for (int step = 0; step < 5; ++step) {
#pragma omp parallel reduction(task, + : x)
        {
#pragma omp for schedule(dynamic, 2)
            for (int i = 0; i < 100; ++i) hits[static_cast<std::size_t>(step * 100 + i)]++;
#pragma omp single
            {
#pragma omp task in_reduction(+ : x)
                x += step;
            }
        }
    }
    expect_once(hits, "loop in a task-reduction region");
    EXPECT_EQ(x, 10);
    const std::string reason = "in a region aloe did not start (task reductions, teams)";
    int found = 0;
    for (omp_site* s : all_sites(site_kind::loop)) {
        const char* why = s->forward_reason.load();
        if (why == nullptr || reason != why) continue;
        ++found;
        EXPECT_EQ(runtime::read_total(s->forwarded), 5u);
        EXPECT_EQ(runtime::read_total(s->forwarded_iterations), 500u);
        EXPECT_EQ(runtime::read_total(s->taken), 0u);
    }
    EXPECT_EQ(found, 1);
}

TEST(Interposer, ReductionsAndLastprivateStayExact) {
    long sum = 0, product = 1;
    double half_sum = 0;
    int biggest = INT_MIN, last = -1;
    unsigned long long bits = 0;
    constexpr int n = 10007;
#pragma omp parallel
    {
#pragma omp for schedule(dynamic, 7) reduction(+ : sum, half_sum) reduction(max : biggest) reduction(| : bits)
        for (int i = 0; i < n; ++i) {
            sum += i;
            half_sum += 0.5 * i;
            biggest = i > biggest ? i : biggest;
            bits |= 1ULL << (i % 64);
        }
#pragma omp for schedule(guided, 3) reduction(* : product)
        for (int i = 0; i < 40; ++i) product *= i % 20 == 0 ? 2 : 1;
    }
    int i = 0;
#pragma omp parallel for schedule(runtime) lastprivate(last, i)
    for (i = 0; i < n; i += 3) last = i;
    EXPECT_EQ(sum, static_cast<long>(n) * (n - 1) / 2);
    EXPECT_EQ(half_sum, 0.5 * static_cast<double>(sum));
    EXPECT_EQ(biggest, n - 1);
    EXPECT_EQ(bits, ~0ULL);
    EXPECT_EQ(product, 4);
    EXPECT_EQ(last, 10005);
    EXPECT_EQ(i, 10008);  // the loop variable's lastprivate value is one step past the last
}

TEST(Interposer, CombinedParallelLoopsWithConstantBounds) {
    static std::atomic<int> hits[5000];
    for (auto& h : hits) h = 0;
#pragma omp parallel for schedule(dynamic, 16)
    for (int i = 0; i < 5000; ++i) hits[i]++;
#pragma omp parallel for schedule(runtime)
    for (int i = 0; i < 5000; ++i) hits[i]++;
#pragma omp parallel for schedule(guided, 4)
    for (int i = 4999; i >= 0; --i) hits[i]++;
    for (int i = 0; i < 5000; ++i) ASSERT_EQ(hits[i].load(), 3) << i;
}

TEST(Interposer, UnsignedAndExtremeBounds) {
    std::vector<std::atomic<int>> hits(300);
    const unsigned long long base = ~0ULL - 1000;
#pragma omp parallel for schedule(dynamic, 4)
    for (unsigned long long v = base; v < base + 300; ++v) hits[v - base]++;
    expect_once(hits, "ull up");
    std::vector<std::atomic<int>> down(100);
#pragma omp parallel for schedule(runtime)
    for (unsigned long long v = 1000; v > 900; --v) down[v - 901]++;
    expect_once(down, "ull down");
    std::vector<std::atomic<int>> top(200);
#pragma omp parallel for schedule(dynamic)
    for (long v = LONG_MAX - 200; v < LONG_MAX; ++v) top[static_cast<std::size_t>(v - (LONG_MAX - 200))]++;
    expect_once(top, "near LONG_MAX");
}

TEST(Interposer, OrderedAndDoacrossAreForwardedAndStillOrdered) {
    std::vector<int> order;
    std::vector<long> prefix(500, 1);
#pragma omp parallel
    {
#pragma omp for ordered schedule(dynamic)
        for (int i = 0; i < 200; ++i) {
#pragma omp ordered
            order.push_back(i);
        }
#pragma omp for ordered(1) schedule(dynamic)
        for (int i = 1; i < 500; ++i) {
#pragma omp ordered depend(sink : i - 1)
            prefix[static_cast<std::size_t>(i)] += prefix[static_cast<std::size_t>(i - 1)];
#pragma omp ordered depend(source)
        }
    }
    ASSERT_EQ(order.size(), 200u);
    for (int i = 0; i < 200; ++i) ASSERT_EQ(order[static_cast<std::size_t>(i)], i);
    EXPECT_EQ(prefix[499], 500);
    for (loop_form f : {loop_form::ordered, loop_form::doacross}) {
        const auto sites = loop_sites_of(f);
        ASSERT_EQ(sites.size(), 1u) << to_string(f);
        EXPECT_EQ(runtime::read_total(sites[0]->taken), 0u);
        EXPECT_EQ(runtime::read_total(sites[0]->forwarded), 1u);
        ASSERT_NE(sites[0]->forward_reason.load(), nullptr);
        EXPECT_NE(std::string(sites[0]->forward_reason.load()).find(to_string(f)), std::string::npos);
    }
}

TEST(Interposer, NestedRegionsGetTheirOwnLoops) {
    omp_set_max_active_levels(2);
    std::vector<std::atomic<int>> hits(2 * 2 * 100);
#pragma omp parallel num_threads(2)
    {
        const int outer = omp_get_thread_num();
#pragma omp parallel num_threads(2)
        {
            const int inner = omp_get_thread_num();
            (void)inner;
#pragma omp for schedule(dynamic, 3)
            for (int i = 0; i < 200; ++i) hits[static_cast<std::size_t>(outer * 200 + i)]++;
        }
#pragma omp for schedule(dynamic)
        for (int i = 0; i < 2; ++i) (void)i;
    }
    omp_set_max_active_levels(1);
    expect_once(hits, "nested");
}

struct old_protocol {
    std::atomic<int> bodies{0};
    std::vector<std::atomic<int>> hits = std::vector<std::atomic<int>>(1000);
};

void count_body(void* p) { static_cast<old_protocol*>(p)->bodies++; }

void old_loop_body(void* p) {
    auto& d = *static_cast<old_protocol*>(p);
    d.bodies++;
    for (long s = 0, e = 0; GOMP_loop_dynamic_next(&s, &e);)
        for (long i = s; i < e; ++i) d.hits[static_cast<std::size_t>(i)]++;
    GOMP_loop_end_nowait();
}

TEST(Interposer, PreGcc49StartEndProtocolWithAndWithoutALoop) {
    old_protocol d;
    GOMP_parallel_start(&count_body, &d, 0);
    count_body(&d);  // the master runs the body itself
    GOMP_parallel_end();
    EXPECT_EQ(d.bodies.load(), 3);
    d.bodies = 0;
    GOMP_parallel_loop_dynamic_start(&old_loop_body, &d, 0, 0, 1000, 1, 7);
    old_loop_body(&d);
    GOMP_parallel_end();
    EXPECT_EQ(d.bodies.load(), 3);
    expect_once(d.hits, "old combined loop");
}

TEST(Interposer, CancellableLoopEndIsABarrier) {
    std::vector<std::atomic<int>> hits(500);
    std::atomic<int> cancelled{0};
#pragma omp parallel
    {
        long s = 0, e = 0;
        if (GOMP_loop_dynamic_start(0, 500, 1, 3, &s, &e)) {
            do {
                for (long i = s; i < e; ++i) hits[static_cast<std::size_t>(i)]++;
            } while (GOMP_loop_dynamic_next(&s, &e));
        }
        cancelled += GOMP_loop_end_cancel() ? 1 : 0;
    }
    expect_once(hits, "cancellable end");
    EXPECT_EQ(cancelled.load(), 0);
}

TEST(Interposer, LoopsOutsideAnyRegionAreForwarded) {
    std::vector<std::atomic<int>> hits(50);
#pragma omp for schedule(dynamic)
    for (int i = 0; i < 50; ++i) hits[static_cast<std::size_t>(i)]++;
    expect_once(hits, "orphaned");
    bool found = false;
    for (omp_site* s : all_sites(site_kind::loop))
        if (const char* why = s->forward_reason.load(); why != nullptr && std::string(why).starts_with("outside"))
            found = true;
    EXPECT_TRUE(found);
}

}  // namespace
}  // namespace aloe::omp

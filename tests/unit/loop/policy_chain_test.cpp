// Per-site policy chains (policy_chain.hpp): links in registration order, each sees what the
// links before it planned; the thread count they set is what the loop runs on; each link's
// typed status is in the site's statistics. Nested loops run on the workers left idle.
#include "loop/policy_chain.hpp"

#include <aloe/aloe.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

namespace aloe::loop {
namespace {

bool chain_test_site(const policy_site& site) noexcept {
    return site.scope == policy_scope::loop && site.name.rfind("chain-test/", 0) == 0;
}

// Asks for `threads_wanted` threads and remembers what it saw and observed.
struct thread_cap final : site_policy {
    int cap;
    int seen_threads = 0;   // the plan's count when this link's turn came
    int observed_participants = 0;
    std::uint64_t observed_iterations = 0;
    explicit thread_cap(int c) : cap(c) {}
    std::string_view name() const noexcept override { return cap == 2 ? "cap-2" : "cap-3"; }
    bool serves(const schedule*) const noexcept override { return true; }
    void plan(std::uint64_t, loop_plan& p) override {
        seen_threads = p.threads;
        if (p.threads > cap) p.threads = cap;
    }
    void observe(const loop_outcome& o) override {
        observed_participants = static_cast<int>(o.records.size());
        observed_iterations = o.iterations;
    }
    policy_status status() const override {
        return {std::string(name()), policy_state::acting, "threads=" + std::to_string(cap), cap, {}};
    }
};

thread_cap* last_cap3 = nullptr;
thread_cap* last_cap2 = nullptr;

const policy_kind cap3_kind{"cap-3", &chain_test_site,
                            [](const policy_site&) -> std::unique_ptr<site_policy> {
                                auto p = std::make_unique<thread_cap>(3);
                                last_cap3 = p.get();
                                return p;
                            },
                            nullptr, false};
const policy_kind cap2_kind{"cap-2", &chain_test_site,
                            [](const policy_site&) -> std::unique_ptr<site_policy> {
                                auto p = std::make_unique<thread_cap>(2);
                                last_cap2 = p.get();
                                return p;
                            },
                            nullptr, false};

struct registered {
    const policy_kind* k;
    explicit registered(const policy_kind* kind) : k(kind) { EXPECT_TRUE(register_policy_kind(kind)); }
    ~registered() { unregister_policy_kind(k); }
};

TEST(LoopPolicyChain, LinksPlanInOrderAndSetTheThreadCount) {
    aloe::team t(4);
    const aloe::loop_site site("chain-test/two-links");
    {
        registered a(&cap3_kind), b(&cap2_kind);
        EXPECT_FALSE(register_policy_kind(&cap3_kind)) << "a kind registers once";
        EXPECT_TRUE(chain_applies(policy_scope::loop, nullptr));
        std::atomic<std::int64_t> sum{0};
        aloe::parallel_for(t, 0, 1000, aloe::schedule::dynamic(7), [&](std::int64_t i) { sum += i; }, site);
        EXPECT_EQ(sum.load(), 999 * 1000 / 2);
        ASSERT_NE(last_cap3, nullptr);
        ASSERT_NE(last_cap2, nullptr);
        EXPECT_EQ(last_cap3->seen_threads, 4) << "the first link sees the whole team";
        EXPECT_EQ(last_cap2->seen_threads, 3) << "the second sees the first's choice";
        EXPECT_EQ(last_cap2->observed_participants, 2) << "the loop ran on the chain's count";
        EXPECT_EQ(last_cap2->observed_iterations, 1000u);
        const auto st = aloe::stats_of(site);
        ASSERT_TRUE(st.has_value());
        EXPECT_EQ(st->last.size(), 2u);
        ASSERT_EQ(st->policies.size(), 2u);
        EXPECT_EQ(st->policies[0].name, "cap-3");
        EXPECT_EQ(st->policies[1].name, "cap-2");
        EXPECT_EQ(st->policies[1].state, aloe::policy_state::acting);
        EXPECT_EQ(st->policies[1].threads, 2);
        EXPECT_NE(aloe::stats_json().find("\"policies\": [{\"name\": \"cap-3\""), std::string::npos);
    }
    // Unregistered: the chain drops its links at the next plan; the whole team runs again.
    EXPECT_FALSE(chain_applies(policy_scope::loop, nullptr));
    aloe::parallel_for(t, 0, 1000, aloe::schedule::dynamic(7), [](std::int64_t) {}, site);
    const auto after = aloe::stats_of(site);
    ASSERT_TRUE(after.has_value());
    EXPECT_EQ(after->last.size(), 4u);
}

// Counters are the feedback path: a link made for a site reads the run it observes as the
// deltas of its own counter_reader over the site's instance, /loop{<site>}/….
struct counter_reading final : site_policy {
    aloe::counter_reader iterations, runs;
    std::vector<std::uint64_t> seen_iterations, seen_runs, record_iterations;
    explicit counter_reading(std::string_view instance)
        : iterations("/loop{" + std::string(instance) + "}/iterations"),
          runs("/loop{" + std::string(instance) + "}/parallel-runs") {}
    std::string_view name() const noexcept override { return "counter-reading"; }
    bool serves(const schedule*) const noexcept override { return true; }
    void plan(std::uint64_t, loop_plan&) override {}
    void observe(const loop_outcome& o) override {
        const auto sum = [](const std::vector<aloe::counter_sample>& d) {
            std::uint64_t v = 0;
            for (const auto& s : d) v += s.value;
            return v;
        };
        seen_iterations.push_back(sum(iterations.delta()));
        seen_runs.push_back(sum(runs.delta()));
        record_iterations.push_back(o.iterations);
    }
    policy_status status() const override { return {"counter-reading", policy_state::idle, "", 0, {}}; }
};

counter_reading* last_reader = nullptr;
std::string reader_instance;

TEST(LoopPolicyChain, PoliciesReadTheRunAsCounterDeltas) {
    static const policy_kind kind{"counter-reading",
                                  [](const policy_site& s) noexcept { return s.name == "chain-test/counters"; },
                                  [](const policy_site& s) -> std::unique_ptr<site_policy> {
                                      reader_instance = std::string(s.counters);
                                      auto p = std::make_unique<counter_reading>(s.counters);
                                      last_reader = p.get();
                                      return p;
                                  },
                                  nullptr, false};
    registered a(&kind);
    aloe::team t(2);
    const aloe::loop_site site("chain-test/counters");
    for (std::int64_t n : {100, 250, 40})
        aloe::parallel_for(t, 0, n, aloe::schedule::dynamic(3), [](std::int64_t) {}, site);
    ASSERT_NE(last_reader, nullptr);
    const auto st = aloe::stats_of(site);
    ASSERT_TRUE(st.has_value());
    EXPECT_EQ(reader_instance, st->counters) << "the link was made with the site's counter instance";
    EXPECT_EQ(st->counters.rfind("site#", 0), 0u) << st->counters;
    EXPECT_EQ(last_reader->seen_iterations, (std::vector<std::uint64_t>{100, 250, 40}));
    EXPECT_EQ(last_reader->seen_runs, (std::vector<std::uint64_t>{1, 1, 1}));
    EXPECT_EQ(last_reader->record_iterations, last_reader->seen_iterations);
    // Anyone reads the same instance by name, with a unit.
    const auto total = aloe::read_counter("/loop{" + st->counters + "}/iterations");
    ASSERT_TRUE(total.has_value());
    EXPECT_EQ(total->value, 390u);
    const auto time = aloe::read_counter("/loop{" + st->counters + "}/time");
    ASSERT_TRUE(time.has_value());
    EXPECT_EQ(time->unit, aloe::counter_unit::nanoseconds);
    EXPECT_NE(aloe::stats_json().find("\"counters\": \"" + st->counters + "\""), std::string::npos);
}

TEST(LoopPolicyChain, SitesItDoesNotApplyToKeepTheirTeam) {
    aloe::team t(3);
    registered a(&cap2_kind);
    const aloe::loop_site other("elsewhere/plain");
    aloe::parallel_for(t, 0, 300, aloe::schedule::dynamic(5), [](std::int64_t) {}, other);
    const auto st = aloe::stats_of(other);
    ASSERT_TRUE(st.has_value());
    EXPECT_EQ(st->last.size(), 3u);
    EXPECT_TRUE(st->policies.empty());
}

// A loop inside a loop body: with the outer loop on 1 of 3 workers (a cap of 1), the inner
// one runs in parallel on the two idle workers, not serially as it did with the "in a job" flag.
TEST(LoopPolicyChain, NestedLoopsUseTheIdleWorkers) {
    static const policy_kind cap1{"cap-1",
                                  [](const policy_site& s) noexcept { return s.name == "chain-test/outer"; },
                                  [](const policy_site&) -> std::unique_ptr<site_policy> {
                                      auto p = std::make_unique<thread_cap>(1);
                                      return p;
                                  },
                                  nullptr, false};
    registered a(&cap1);
    aloe::team t(3);
    const aloe::loop_site outer("chain-test/outer"), inner("nested/inner");
    std::atomic<std::int64_t> sum{0};
    aloe::parallel_for(t, 0, 4, aloe::schedule(), [&](std::int64_t) {
        aloe::parallel_for(t, 0, 3000, aloe::schedule::dynamic(10), [&](std::int64_t i) { sum += i; }, inner);
    }, outer);
    EXPECT_EQ(sum.load(), 4 * (2999 * 3000 / 2));
    const auto st = aloe::stats_of(inner);
    ASSERT_TRUE(st.has_value());
    EXPECT_EQ(st->invocations, 4u) << "every nested run was parallel";
    EXPECT_EQ(st->serial_invocations, 0u);
    EXPECT_EQ(st->last.size(), 3u) << "the caller and both idle workers";
    // Inside a full fork no worker is idle: the nested loop runs on its caller.
    const aloe::loop_site full_outer("full/outer"), full_inner("full/inner");
    aloe::parallel_for(t, 0, 3, aloe::schedule(), [&](std::int64_t) {
        aloe::parallel_for(t, 0, 30, aloe::schedule(), [](std::int64_t) {}, full_inner);
    }, full_outer);
    const auto full = aloe::stats_of(full_inner);
    ASSERT_TRUE(full.has_value());
    EXPECT_EQ(full->calls(), 3u);
}

}  // namespace
}  // namespace aloe::loop

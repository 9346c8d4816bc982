// Conformance of the statistics API (include/aloe/stats.hpp): per-site invocation and
// iteration counts, per-thread records of the last run, steals recorded when a thread is
// blocked, the JSON writer, and the counters.
#include "conformance/coverage.hpp"

#include <aloe/aloe.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>

namespace {

using namespace aloe_conformance;

std::uint64_t counter(const char* name) { return aloe::counter_value(name).value_or(0); }

std::uint64_t sum_iterations(const std::vector<aloe::thread_loop_stats>& v) {
    return std::accumulate(v.begin(), v.end(), std::uint64_t{0},
                           [](std::uint64_t s, const aloe::thread_loop_stats& t) { return s + t.iterations; });
}
std::uint64_t sum_steals(const std::vector<aloe::thread_loop_stats>& v) {
    return std::accumulate(v.begin(), v.end(), std::uint64_t{0},
                           [](std::uint64_t s, const aloe::thread_loop_stats& t) { return s + t.steals; });
}

TEST(ConformanceStats, SiteCountsInvocationsIterationsAndPerThreadRecords) {
    aloe::team t(3);
    const aloe::loop_site site("conformance/stats/basic");
    EXPECT_FALSE(aloe::stats_of(site).has_value()) << "a site that never ran has no statistics";
    constexpr int runs = 5;
    constexpr std::int64_t n = 1000;
    for (int run = 0; run < runs; ++run) {
        coverage c(0, n, 1);
        aloe::parallel_for(t, 0, n, 1, "dynamic,chunk=7", [&](std::int64_t i) { c.hit(i); }, site);
        ASSERT_TRUE(c.exactly_once());
    }
    const auto st = aloe::stats_of(site);
    ASSERT_TRUE(st.has_value());
    EXPECT_EQ(st->site, "conformance/stats/basic");
    EXPECT_EQ(st->schedule, "dynamic,chunk=7");
    EXPECT_EQ(st->invocations, static_cast<std::uint64_t>(runs));
    EXPECT_EQ(st->serial_invocations, 0u);
    EXPECT_EQ(st->iterations, static_cast<std::uint64_t>(runs * n));
    ASSERT_EQ(st->last.size(), 3u);
    EXPECT_EQ(sum_iterations(st->last), static_cast<std::uint64_t>(n));
    ASSERT_EQ(st->total.size(), 3u);
    EXPECT_EQ(sum_iterations(st->total), static_cast<std::uint64_t>(runs * n));
    EXPECT_GE(st->imbalance_last, 1.0);
    EXPECT_GE(st->imbalance_mean, 1.0);
    EXPECT_GE(st->total_s, st->last_s);
    EXPECT_GE(st->last_s, 0.0);
    for (const aloe::thread_loop_stats& th : st->last) {
        EXPECT_GE(th.static_s, 0.0);
        EXPECT_GE(th.dynamic_s, 0.0);
        EXPECT_GE(th.wait_s, 0.0);
        EXPECT_EQ(th.steals, 0u) << "dynamic has no queues to steal from";
    }
    bool listed = false;
    for (const aloe::site_stats& s : aloe::all_site_stats()) listed = listed || s.site == "conformance/stats/basic";
    EXPECT_TRUE(listed);
}

TEST(ConformanceStats, SerialRunsAreCountedApart) {
    aloe::team one(1);
    const aloe::loop_site site("conformance/stats/serial");
    const std::uint64_t serial_before = counter("loop.serial_runs");
    for (int run = 0; run < 3; ++run) aloe::parallel_for(one, 0, 50, 1, "guided", [](std::int64_t) {}, site);
    const auto st = aloe::stats_of(site);
    ASSERT_TRUE(st.has_value());
    EXPECT_EQ(st->invocations, 0u);
    EXPECT_EQ(st->serial_invocations, 3u);
    EXPECT_EQ(st->iterations, 150u);
    EXPECT_EQ(counter("loop.serial_runs") - serial_before, 3u);
}

TEST(ConformanceStats, StaggeredStealsFromABlockedThread) {
    // Thread 0 blocks inside its first chunk until another thread has run an iteration of
    // thread 0's own queue, i.e. until a steal has happened (at most 10 s, then the test
    // fails instead of hanging). Not a timing assertion: it asserts that idle threads take
    // work queued for a blocked one, and that the statistics say so.
    aloe::team t(3);
    const aloe::loop_site site("conformance/stats/staggered-steal");
    constexpr std::int64_t n = 600;  // thread 0 owns [0, 200): static [0, 100), queue [100, 200)
    coverage c(0, n, 1, t.size());
    std::atomic<bool> thread0_queue_taken{false};
    std::atomic<bool> timed_out{false};
    std::atomic<bool> blocked_once{false};
    const std::uint64_t steals_before = counter("loop.steals");
    aloe::parallel_for(
        t, 0, n, 1, "staggered,fs=0.5,chunk=1",
        [&](aloe::subrange r, int thread) {
            c.check_subrange(r, thread);
            if (thread != 0) {
                if (r.first() >= 100 && r.first() < 200) thread0_queue_taken = true;
                return;
            }
            if (blocked_once.exchange(true)) return;
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
            while (!thread0_queue_taken.load()) {
                if (std::chrono::steady_clock::now() > deadline) {
                    timed_out = true;
                    break;
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
        },
        site);
    EXPECT_TRUE(c.exactly_once());
    EXPECT_FALSE(timed_out.load()) << "no other thread took work from blocked thread 0's queue within 10 s";
    const auto st = aloe::stats_of(site);
    ASSERT_TRUE(st.has_value());
    ASSERT_EQ(st->last.size(), 3u);
    const std::uint64_t steals = sum_steals(st->last);
    EXPECT_GT(steals, 0u);
    EXPECT_EQ(sum_steals(st->total), steals);
    EXPECT_EQ(counter("loop.steals") - steals_before, steals);
    EXPECT_EQ(sum_iterations(st->last), static_cast<std::uint64_t>(n));
}

TEST(ConformanceStats, EmptyLoopsCountAsEmptyInvocations) {
    // A call with no iteration is a call: calls() is how often the program reached the loop.
    aloe::team t(3);
    const aloe::loop_site site("conformance/stats/empty");
    aloe::parallel_for(t, 0, 1, 1, "static", [](std::int64_t) {});  // registers the counters
    const std::uint64_t empty_before = counter("loop.empty_runs");
    const std::uint64_t runs_before = counter("loop.parallel_runs") + counter("loop.serial_runs");
    bool ran = false;
    for (const char* spec : {"static", "dynamic,chunk=3", "adaptive"})
        aloe::parallel_for(t, 7, 7, 1, spec, [&](std::int64_t) { ran = true; }, site);
    aloe::parallel_for(t, 10, 0, -1, "guided", [&](std::int64_t) {}, site);  // 10 iterations
    aloe::parallel_for(t, 0, -5, 1, "static", [&](std::int64_t) { ran = true; }, site);
    EXPECT_FALSE(ran);
    const auto st = aloe::stats_of(site);
    ASSERT_TRUE(st.has_value());
    EXPECT_EQ(st->empty_invocations, 4u);
    EXPECT_EQ(st->invocations + st->serial_invocations, 1u);
    EXPECT_EQ(st->iterations, 10u);
    EXPECT_EQ(st->calls(), 5u);
    EXPECT_EQ(counter("loop.empty_runs") - empty_before, 4u);
    EXPECT_EQ(counter("loop.parallel_runs") + counter("loop.serial_runs") - runs_before, 1u)
        << "an empty call is neither a parallel nor a serial run";
    EXPECT_NE(aloe::stats_json().find("\"empty_invocations\": 4"), std::string::npos);
}

TEST(ConformanceStats, ProbeSitesOfTheAdaptiveScheduleAreNotListed) {
    // The first adaptive loop on a team of more than one thread runs the probes (loops of
    // their own); they count, but the user's listings do not show them.
    aloe::team t(2);
    aloe::parallel_for(t, 0, 1000, "adaptive", [](std::int64_t) {}, aloe::loop_site("conformance/stats/probed"));
    ASSERT_TRUE(aloe::stats_of(aloe::loop_site("aloe.probe.static")).has_value())
        << "the probes ran in this process and are found by name";
    bool user_site_listed = false;
    for (const aloe::site_stats& s : aloe::all_site_stats()) {
        EXPECT_NE(s.site.rfind("aloe.probe.", 0), 0u) << s.site;
        user_site_listed = user_site_listed || s.site == "conformance/stats/probed";
    }
    EXPECT_TRUE(user_site_listed);
    EXPECT_EQ(aloe::stats_json().find("aloe.probe."), std::string::npos);
}

TEST(ConformanceStats, IterationCounterGrowsByTheLoopCount) {
    aloe::team t(2);
    aloe::parallel_for(t, 0, 1, 1, "static", [](std::int64_t) {});  // registers the counters
    const std::uint64_t iterations_before = counter("loop.iterations");
    const std::uint64_t runs_before = counter("loop.parallel_runs");
    ASSERT_TRUE(aloe::counter_value("loop.iterations").has_value());
    constexpr std::int64_t first = i64_max - 7 * 1234, step = 7;
    aloe::parallel_for(t, first, i64_max, step, "hybrid,fs=0.3,chunk=5", [](std::int64_t) {});
    EXPECT_EQ(counter("loop.iterations") - iterations_before, reference_count(first, i64_max, step));
    EXPECT_EQ(counter("loop.parallel_runs") - runs_before, 1u);
    aloe::parallel_for(t, 5, 5, 1, "static", [](std::int64_t) {});
    EXPECT_EQ(counter("loop.iterations") - iterations_before, reference_count(first, i64_max, step))
        << "an empty loop adds no iterations";
    EXPECT_FALSE(aloe::counter_value("conformance.no-such-counter").has_value());
    bool listed = false;
    for (const auto& [name, value] : aloe::all_counters()) listed = listed || name == "loop.iterations";
    EXPECT_TRUE(listed);
}

TEST(ConformanceStats, CountersReadByFullNameWorkerSlotAndWildcard) {
    aloe::team t(3);
    const aloe::loop_site site("conformance/stats/counters");
    aloe::parallel_for(t, 0, 1, 1, "static", [](std::int64_t) {}, site);  // registers the counters
    const std::optional<aloe::counter_sample> total = aloe::read_counter("/threads{locality#0/total}/iterations");
    ASSERT_TRUE(total.has_value());
    EXPECT_EQ(total->value, counter("loop.iterations")) << "the old name reads the same counter";
    EXPECT_EQ(total->unit, aloe::counter_unit::count);
    EXPECT_EQ(aloe::read_counter("/threads{locality#0/total}/time/busy")->unit, aloe::counter_unit::nanoseconds);

    aloe::counter_reader workers("/threads{locality#0/worker-thread#*}/iterations");
    aloe::counter_reader runs("/loop{locality#0/total}/parallel-runs");
    aloe::counter_reader also_runs("loop.parallel_runs");
    constexpr std::int64_t n = 1001;
    aloe::parallel_for(t, 0, n, 1, "static", [](std::int64_t) {}, site);
    const auto st = aloe::stats_of(site);
    ASSERT_TRUE(st.has_value());
    ASSERT_EQ(st->last.size(), 3u);
    std::uint64_t sum = 0;
    for (const aloe::counter_sample& s : workers.delta()) {
        sum += s.value;
        for (std::size_t k = 0; k < st->last.size(); ++k) {
            if (s.name == "/threads{locality#0/worker-thread#" + std::to_string(k) + "}/iterations") {
                EXPECT_EQ(s.value, st->last[k].iterations) << s.name << ": worker k's share of the loop";
            }
        }
    }
    EXPECT_EQ(sum, static_cast<std::uint64_t>(n));
    EXPECT_EQ(runs.delta().at(0).value, 1u);
    EXPECT_EQ(also_runs.delta().at(0).value, 1u) << "a reader of the old name";
    EXPECT_EQ(runs.delta().at(0).value, 0u) << "nothing ran since this reader's last delta";

    const std::vector<aloe::counter_sample> slots = aloe::read_counters("/threads{locality#0/*}/chunks");
    ASSERT_GE(slots.size(), 4u) << "the total and workers 0, 1, 2";
    EXPECT_EQ(slots.front().name, "/threads{locality#0/total}/chunks");
    EXPECT_FALSE(aloe::read_counter("/threads{locality#0/total}/no-such-counter").has_value());
    EXPECT_EQ(aloe::to_string({"/x{y}/z", 7, aloe::counter_unit::bytes}), "/x{y}/z 7 [bytes]");
    bool described = false;
    for (const aloe::counter_description& d : aloe::list_counters())
        described = described || (d.alias == "loop.steals" && d.name == "/threads{locality#0/total}/steals" && d.per_worker);
    EXPECT_TRUE(described);
    EXPECT_NE(aloe::stats_json().find("\"/threads{locality#0/total}/iterations\""), std::string::npos)
        << "the JSON lists every instance by full name";
}

TEST(ConformanceStats, WriteStatsJsonWritesTheSitesAndReportsFailures) {
    aloe::team t(2);
    const aloe::loop_site site("conformance/stats/json-site");
    aloe::parallel_for(t, 0, 100, 1, "dynamic", [](std::int64_t) {}, site);
    const std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("aloe-conformance-stats-" + std::to_string(::getpid()) + ".json");
    std::string message;
    ASSERT_TRUE(aloe::write_stats_json(path.string(), &message)) << message;
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    std::filesystem::remove(path);
    EXPECT_NE(text.str().find("conformance/stats/json-site"), std::string::npos) << text.str();
    EXPECT_NE(text.str().find("\"invocations\""), std::string::npos) << text.str();
    EXPECT_NE(aloe::stats_json().find("conformance/stats/json-site"), std::string::npos);

    message.clear();
    EXPECT_FALSE(aloe::write_stats_json("/nonexistent-dir/x.json", &message));
    EXPECT_NE(message.find("/nonexistent-dir/x.json"), std::string::npos) << message;
    EXPECT_FALSE(aloe::write_stats_json("/nonexistent-dir/x.json")) << "no message wanted: still reports failure";
}

TEST(ConformanceStats, ResetForgetsSiteStatistics) {
    aloe::team t(2);
    const aloe::loop_site site("conformance/stats/reset");
    aloe::parallel_for(t, 0, 100, 1, "weighted", [](std::int64_t) {}, site);
    ASSERT_TRUE(aloe::stats_of(site).has_value());
    ASSERT_EQ(aloe::stats_of(site)->invocations, 1u);
    aloe::reset_site_history();
    const auto st = aloe::stats_of(site);
    if (st.has_value()) {
        EXPECT_EQ(st->invocations, 0u);
        EXPECT_EQ(st->iterations, 0u);
    }
    aloe::parallel_for(t, 0, 100, 1, "weighted", [](std::int64_t) {}, site);
    ASSERT_TRUE(aloe::stats_of(site).has_value());
    EXPECT_EQ(aloe::stats_of(site)->invocations, 1u);
}

}  // namespace

namespace {

TEST(ConformanceStats, AdaptiveSiteShowsItsTunerAndRunsEveryIterationOnce) {
    // A loop whose first quarter costs far more than the rest: adaptive must probe, search,
    // and say so in the statistics; every run must still cover the range exactly once.
    aloe::team t(3);
    const aloe::loop_site site("conformance/stats/adaptive");
    constexpr std::int64_t n = 3000;
    constexpr int runs = 30;
    for (int run = 0; run < runs; ++run) {
        std::vector<std::atomic<int>> seen(n);
        aloe::parallel_for(t, 0, n, "adaptive", [&](std::int64_t i) {
            seen[static_cast<std::size_t>(i)].fetch_add(1, std::memory_order_relaxed);
            if (i < n / 4) {
                volatile double x = 0;
                for (int k = 0; k < 200; ++k) x = x + k;
            }
        }, site);
        for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(seen[static_cast<std::size_t>(i)].load(), 1) << "run " << run << " i " << i;
    }
    const auto st = aloe::stats_of(site);
    ASSERT_TRUE(st.has_value());
    EXPECT_EQ(st->schedule, "adaptive,search=race,chunk=auto,delay=optimistic");
    ASSERT_TRUE(st->tuning.has_value());
    const aloe::tuning_stats& tune = *st->tuning;
    EXPECT_EQ(tune.search, aloe::adaptive_search::race);
    EXPECT_EQ(tune.steps.size(), static_cast<std::size_t>(st->invocations));
    EXPECT_EQ(tune.steps.front().schedule, "static");
    EXPECT_FALSE(tune.reason.empty());
    EXPECT_NO_THROW(aloe::schedule{tune.chosen}) << tune.chosen;
    EXPECT_GE(tune.trials, 2u);
    const std::string json = aloe::stats_json();
    EXPECT_NE(json.find("\"tuning\": {\"search\": \"race\""), std::string::npos);
    EXPECT_NE(json.find("\"converged_at\": "), std::string::npos);
    // A site whose spec changes gets a fresh tuner.
    aloe::parallel_for(t, 0, n, "adaptive,search=sweep", [](std::int64_t) {}, site);
    EXPECT_EQ(aloe::stats_of(site)->tuning->search, aloe::adaptive_search::sweep);
    EXPECT_EQ(aloe::stats_of(site)->tuning->steps.size(), 1u);
    aloe::reset_site_history();
    EXPECT_FALSE(aloe::stats_of(site)->tuning.has_value()) << "reset forgets the tuner";
}

}  // namespace

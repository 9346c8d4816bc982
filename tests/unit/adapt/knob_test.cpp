// aloe::knob and aloe::knob_range (include/aloe/knob.hpp, src/adapt/knob.cpp) without the
// task runtime: the counters are injected (an "application" whose Σt_func follows a
// synthetic U-shaped curve of its grain), the wall times passed in. Ranges, option parsing
// and its messages, convergence and history, fixed and warmup epochs, the one-core baseline
// epochs of objective=overhead+wait, the fall-back to wall time without counters, value()
// from other threads, and the C API.
#include <aloe/aloe.h>
#include <aloe/error.hpp>
#include <aloe/knob.hpp>

#include "runtime/report.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <thread>
#include <vector>

namespace {
using aloe::knob;
using aloe::knob_counters;
using aloe::knob_epoch_kind;
using aloe::knob_range;

// ---- ranges ----

TEST(KnobRange, DivisorsInTheRangeAscending) {
    EXPECT_EQ(knob_range::divisors_of(100, 1, 100).admissible(),
              (std::vector<std::int64_t>{1, 2, 4, 5, 10, 20, 25, 50, 100}));
    EXPECT_EQ(knob_range::divisors_of(100, 3, 30).admissible(), (std::vector<std::int64_t>{4, 5, 10, 20, 25}));
    EXPECT_EQ(knob_range::divisors_of(49, 7, 7).admissible(), (std::vector<std::int64_t>{7}));  // a square's root once
    EXPECT_THROW(knob_range::divisors_of(12, 5, 5), aloe::error);
    EXPECT_THROW(knob_range::divisors_of(0, 1, 5), aloe::error);
    EXPECT_THROW(knob_range::divisors_of(12, 6, 2), aloe::error);
}

TEST(KnobRange, GeometricCoversTheRangeWithinTheRatio) {
    const auto v = knob_range::geometric(10, 100'000, 1.1).admissible();
    EXPECT_EQ(v.front(), 10);
    EXPECT_EQ(v.back(), 100'000);
    for (std::size_t i = 1; i < v.size(); ++i) {
        EXPECT_GT(v[i], v[i - 1]);
        EXPECT_LE(static_cast<double>(v[i]) / static_cast<double>(v[i - 1]), 1.1 * 1.06);  // rounding of small values
    }
    EXPECT_EQ(knob_range::geometric(5, 5).admissible(), (std::vector<std::int64_t>{5}));
    EXPECT_EQ(knob_range::geometric(1, 3).admissible(), (std::vector<std::int64_t>{1, 2, 3}));
    EXPECT_THROW(knob_range::geometric(0, 5), aloe::error);
    EXPECT_THROW(knob_range::geometric(6, 5), aloe::error);
    EXPECT_THROW(knob_range::geometric(1, 5, 1.0), aloe::error);
    EXPECT_THROW(knob_range::geometric(1, 5, 17), aloe::error);
}

TEST(KnobRange, ValuesAreSortedOnceAndNearestIsInLog) {
    const knob_range r = knob_range::values({1000, 10, 100, 10});
    EXPECT_EQ(r.admissible(), (std::vector<std::int64_t>{10, 100, 1000}));
    EXPECT_EQ(r.nearest(31), 10);   // ln 31 − ln 10 < ln 100 − ln 31
    EXPECT_EQ(r.nearest(32), 100);
    EXPECT_EQ(r.nearest(-3), 10);
    EXPECT_EQ(r.nearest(5000), 1000);
    EXPECT_TRUE(r.contains(100));
    EXPECT_FALSE(r.contains(101));
    EXPECT_THROW(knob_range::values({}), aloe::error);
    EXPECT_THROW(knob_range::values({0, 4}), aloe::error);
}

// ---- a synthetic application ----

// Σt_func of an epoch at grain g: a U in log g with its minimum (1 s) at 1.7e4; 4 cores,
// 10^7 points per epoch, so n_t = 10^7/g tasks; Σt_exec 80% of Σt_func.
double overall_s(std::int64_t g) { return 1 + 0.1 * (std::cosh(std::log(static_cast<double>(g) / 1.7e4)) - 1); }

aloe::knob_sources curve_sources(const knob*& self) {
    aloe::knob_sources s;
    s.counters = [&self] {
        const std::int64_t g = self->value();
        return knob_counters{overall_s(g) * 1e9, 0.8 * overall_s(g) * 1e9, 1e7 / static_cast<double>(g), 4};
    };
    return s;
}

TEST(Knob, ConvergesWithin3PercentIn10EpochsFrom100TimesTooFineOrCoarse) {
    for (const std::int64_t start : {170, 1'700'000}) {
        const knob* self = nullptr;
        knob k("test.grain", knob_range::geometric(10, 10'000'000), start, "", curve_sources(self));
        self = &k;
        EXPECT_EQ(k.value(), knob_range::geometric(10, 10'000'000).nearest(start));
        EXPECT_EQ(k.reason(), "searching");
        int epochs = 0;
        while (!k.converged() && epochs < 20) {
            k.epoch_done({1, 0.01});
            ++epochs;
        }
        EXPECT_TRUE(k.converged()) << start;
        EXPECT_LE(epochs, 10) << start;
        EXPECT_LE(overall_s(k.best()) - 1, 0.03) << start << " chose " << k.best();
        EXPECT_EQ(k.value(), k.best());
        EXPECT_NEAR(k.best_objective(), overall_s(k.best()), 1e-12);
        EXPECT_NE(k.reason(), "searching");
        EXPECT_NE(k.reason(), "evaluation budget spent");  // a stop rule ended it, not the budget
    }
}

TEST(Knob, HistoryCarriesWhatAPlotNeeds) {
    const knob* self = nullptr;
    knob k("test.grain", knob_range::geometric(10, 10'000'000), 170, "recheck=0", curve_sources(self));
    self = &k;
    std::vector<std::int64_t> ran;
    for (int e = 0; e < 14; ++e) {
        ran.push_back(k.value());
        k.epoch_done({2, 0.5 + e});
    }
    const std::vector<aloe::knob_epoch> h = k.history();
    ASSERT_EQ(h.size(), 14u);
    EXPECT_EQ(k.epochs(), 14);
    int converged_at = -1;
    for (std::size_t i = 0; i < h.size(); ++i) {
        EXPECT_EQ(h[i].epoch, static_cast<int>(i));
        EXPECT_EQ(h[i].value, ran[i]);
        EXPECT_DOUBLE_EQ(h[i].wall_seconds, 0.5 + static_cast<double>(i));
        EXPECT_DOUBLE_EQ(h[i].work, 2);
        EXPECT_NEAR(h[i].objective, overall_s(ran[i]) / 2, 1e-12);  // per unit of work
        EXPECT_NEAR(h[i].counters.tasks, 1e7 / static_cast<double>(ran[i]), 1e-6);
        EXPECT_EQ(h[i].counters.cores, 4);
        if (h[i].converged && converged_at < 0) converged_at = static_cast<int>(i);
        if (converged_at >= 0 && static_cast<int>(i) > converged_at) {
            EXPECT_EQ(h[i].kind, knob_epoch_kind::converged);
            EXPECT_EQ(h[i].value, h[converged_at].best_value);
        } else {
            EXPECT_EQ(h[i].kind, knob_epoch_kind::search);
        }
        if (i > 0) {
            EXPECT_LE(h[i].best_objective, h[i - 1].best_objective + 1e-12);  // the best so far only improves
        }
    }
    EXPECT_GE(converged_at, 2);
    EXPECT_LT(converged_at, 10);
}

TEST(Knob, OptionsPrintInFullAndReadBack) {
    const knob* self = nullptr;
    knob k("a", knob_range::geometric(10, 1000), 100, " Search=NELDER-MEAD , epochs=7,tolerance=0.05 ",
           curve_sources(self));
    EXPECT_EQ(k.options(), "objective=overall,search=nelder-mead,epochs=7,tolerance=0.05,recheck=32,warmup=0");
    knob again("a", knob_range::geometric(10, 1000), 100, k.options(), curve_sources(self));
    EXPECT_EQ(again.options(), k.options());
    knob sweep("s", knob_range::values({1, 2, 3}), 1, "search=sweep,objective=idle-rate", curve_sources(self));
    EXPECT_EQ(sweep.options(), "objective=idle-rate,search=sweep,epochs=3,tolerance=0.03,recheck=32,warmup=0");
}

// The message `options` give, or "" when they are accepted.
std::string message_of(const std::string& options) {
    const knob* self = nullptr;
    try {
        knob k("stencil.partition", knob_range::divisors_of(1000, 1, 1000), 10, options, curve_sources(self));
    } catch (const aloe::error& e) {
        return e.what();
    }
    return "";
}

TEST(Knob, BadOptionsNameTheKnobTheStringAndTheProblem) {
    EXPECT_EQ(message_of("objective=fast"),
              "knob 'stencil.partition' options 'objective=fast': objective=fast is not overall, idle-rate, "
              "overhead, overhead+wait or time");
    EXPECT_EQ(message_of("search=random"),
              "knob 'stencil.partition' options 'search=random': search=random is not golden, nelder-mead, bobyqa or "
              "sweep");
    EXPECT_EQ(message_of("epochs=0"),
              "knob 'stencil.partition' options 'epochs=0': epochs=0 is outside [1, 1000000]");
    EXPECT_EQ(message_of("epochs=ten"),
              "knob 'stencil.partition' options 'epochs=ten': epochs=ten is not an integer");
    EXPECT_EQ(message_of("tolerance=2"),
              "knob 'stencil.partition' options 'tolerance=2': tolerance=2 is outside [0.001, 0.5]");
    EXPECT_EQ(message_of("colour=red"),
              "knob 'stencil.partition' options 'colour=red': unknown key 'colour' (keys: objective, search, epochs, "
              "tolerance, recheck, warmup, fixed)");
    EXPECT_EQ(message_of("epochs=3,epochs=4"),
              "knob 'stencil.partition' options 'epochs=3,epochs=4': key 'epochs' given twice");
    EXPECT_EQ(message_of("golden"), "knob 'stencil.partition' options 'golden': 'golden' is not key=value (keys: "
                                    "objective, search, epochs, tolerance, recheck, warmup, fixed)");
    EXPECT_EQ(message_of("epochs=3,"), "knob 'stencil.partition' options 'epochs=3,': empty item");
    EXPECT_EQ(message_of("fixed=7"),
              "knob 'stencil.partition' options 'fixed=7': fixed=7 is not an admissible value (nearest: 8)");
    EXPECT_EQ(message_of(""), "");
    EXPECT_EQ(message_of("fixed=8,warmup=1,recheck=0"), "");
}

TEST(Knob, FixedPinsTheValueAndStillRecordsTheObjective) {
    const knob* self = nullptr;
    knob k("pinned", knob_range::values({100, 1000, 10000}), 170, "fixed=1000", curve_sources(self));
    self = &k;
    EXPECT_TRUE(k.converged());
    EXPECT_EQ(k.reason(), "fixed");
    for (int e = 0; e < 12; ++e) {
        EXPECT_EQ(k.value(), 1000);
        k.epoch_done({1, 0.1});
    }
    const auto h = k.history();
    ASSERT_EQ(h.size(), 12u);
    for (const auto& e : h) {
        EXPECT_EQ(e.kind, knob_epoch_kind::fixed);
        EXPECT_NEAR(e.objective, overall_s(1000), 1e-12);
    }
    EXPECT_EQ(k.best(), 1000);
    EXPECT_NEAR(k.best_objective(), overall_s(1000), 1e-12);
}

TEST(Knob, WarmupEpochsAreRecordedNotJudged) {
    const knob* self = nullptr;
    knob k("warm", knob_range::geometric(10, 10'000'000), 170, "warmup=2", curve_sources(self));
    self = &k;
    for (int e = 0; e < 3; ++e) k.epoch_done({1, 0.1});
    const auto h = k.history();
    ASSERT_EQ(h.size(), 3u);
    EXPECT_EQ(h[0].kind, knob_epoch_kind::warmup);
    EXPECT_EQ(h[1].kind, knob_epoch_kind::warmup);
    EXPECT_TRUE(std::isnan(h[0].objective));
    EXPECT_EQ(h[2].kind, knob_epoch_kind::search);
    EXPECT_EQ(h[0].value, h[2].value);  // the start waited for the first judged epoch
    EXPECT_NE(k.value(), h[2].value);   // and then the search moved on
}

// Σt_exec per task grows with concurrency: t_d1(g) = 1.2 ns·g on one core, 10% more on 4.
struct wait_app {
    const knob* self = nullptr;
    int limit = 0;
    std::vector<int> limits;  // calls to limit_concurrency, in order

    knob_counters epoch() const {
        const auto g = static_cast<double>(self->value());
        const double tasks = 1e7 / g, t_d1 = 1.2 * g, cores = limit == 1 ? 1 : 4;
        const double t_d = limit == 1 ? t_d1 : 1.1 * t_d1;
        const double exec = tasks * t_d;
        return knob_counters{exec + tasks * 1000 / cores * cores, exec, tasks, static_cast<int>(cores)};
    }
};

TEST(Knob, OverheadPlusWaitMeasuresEachNewValueOnOneCoreFirst) {
    wait_app app;
    aloe::knob_sources s;
    s.counters = [&app] { return app.epoch(); };
    s.limit_concurrency = [&app](int k) {
        app.limit = k;
        app.limits.push_back(k);
    };
    knob k("wait", knob_range::geometric(100, 1'000'000), 1000, "objective=overhead+wait", s);
    app.self = &k;
    EXPECT_EQ(app.limits, (std::vector<int>{1}));  // the first epoch is the start's baseline
    for (int e = 0; e < 6; ++e) k.epoch_done({1, 0.1});
    const auto h = k.history();
    ASSERT_EQ(h.size(), 6u);
    for (std::size_t i = 0; i < h.size(); ++i) {
        // baseline, judged at the same value, baseline at the next value, ...
        EXPECT_EQ(h[i].kind, i % 2 == 0 ? knob_epoch_kind::baseline : knob_epoch_kind::search) << i;
        if (i % 2 == 1) {
            EXPECT_EQ(h[i].value, h[i - 1].value);
            // T_o = tasks·1000 ns / 4 cores, T_w = (t_d − t_d1)·n_t/n_c = 0.1·t_d1·tasks/4.
            const double g = static_cast<double>(h[i].value), tasks = 1e7 / g;
            EXPECT_NEAR(h[i].objective, (tasks * 1000 / 4 + 0.1 * 1.2 * g * tasks / 4) * 1e-9, 1e-12);
            EXPECT_FALSE(h[i].wait_clamped);
        } else {
            EXPECT_TRUE(std::isnan(h[i].objective));
        }
    }
    EXPECT_EQ(app.limits, (std::vector<int>{1, 0, 1, 0, 1, 0, 1}));
}

TEST(Knob, OverheadPlusWaitTakesTheCallersBaselineWithoutOneCoreEpochs) {
    wait_app app;
    aloe::knob_sources s;
    s.counters = [&app] { return app.epoch(); };
    s.one_core_task_ns = [](std::int64_t g) { return 1.2 * static_cast<double>(g); };
    s.limit_concurrency = [&app](int k) { app.limits.push_back(k); };
    knob k("wait", knob_range::geometric(100, 1'000'000), 1000, "objective=overhead+wait", s);
    app.self = &k;
    for (int e = 0; e < 4; ++e) k.epoch_done({1, 0.1});
    for (const auto& e : k.history()) EXPECT_EQ(e.kind, knob_epoch_kind::search);
    EXPECT_TRUE(app.limits.empty());
}

TEST(Knob, OverheadPlusWaitWithoutAnyBaselineIsRefused) {
    const auto previous = aloe::set_knob_concurrency_limit(nullptr);
    aloe::knob_sources s;
    s.counters = [] { return knob_counters{}; };
    try {
        knob k("wait", knob_range::geometric(100, 1000), 100, "objective=overhead+wait", s);
        ADD_FAILURE() << "accepted";
    } catch (const aloe::error& e) {
        EXPECT_NE(std::string(e.what()).find("objective=overhead+wait needs the one-core task duration"),
                  std::string::npos);
    }
    // The process-wide limit is enough.
    aloe::set_knob_concurrency_limit([](int) {});
    EXPECT_NO_THROW(knob("wait", knob_range::geometric(100, 1000), 100, "objective=overhead+wait", s));
    aloe::set_knob_concurrency_limit(previous);
}

TEST(Knob, WithoutTaskCountersItFallsBackToWallTime) {
    std::vector<std::string> lines;
    aloe::runtime::reset_reported_for_tests();
    const auto old = aloe::runtime::set_report_sink([&lines](std::string_view l) { lines.emplace_back(l); });
    aloe::knob_sources s;
    s.counters = [] { return knob_counters{}; };  // tasks run outside aloe: nothing counted
    const knob* self = nullptr;
    knob k("no.counters", knob_range::geometric(10, 10'000'000), 170, "", s);
    self = &k;
    for (int e = 0; e < 12 && !k.converged(); ++e) k.epoch_done({1, overall_s(self->value())});
    aloe::runtime::set_report_sink(old);
    const auto h = k.history();
    ASSERT_GE(h.size(), 3u);
    EXPECT_EQ(h[0].kind, knob_epoch_kind::no_data);
    EXPECT_EQ(h[1].kind, knob_epoch_kind::search);  // the second no-data epoch is judged by its wall time
    EXPECT_NEAR(h[1].objective, overall_s(h[1].value), 1e-12);
    EXPECT_EQ(k.options().rfind("objective=time,", 0), 0u);
    EXPECT_TRUE(k.converged());
    EXPECT_LE(overall_s(k.best()) - 1, 0.03);
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_NE(lines[0].find("W310"), std::string::npos);
    EXPECT_NE(lines[0].find("using objective=time"), std::string::npos);
}

// A NaN wall time is no measurement, as an infinite one is: it was taken for "< 0, measure it",
// and the few microseconds since the last epoch_done() became that value's time.
TEST(Knob, ANaNWallTimeIsNoMeasurement) {
    aloe::knob_sources s;
    s.counters = [] { return knob_counters{}; };
    knob k("nan.wall", knob_range::geometric(10, 10'000'000), 170, "objective=time", s);
    for (int e = 0; e < 14 && !k.converged(); ++e)
        k.epoch_done({1, e == 2 ? std::numeric_limits<double>::quiet_NaN() : overall_s(k.value())});
    const auto h = k.history();
    ASSERT_GE(h.size(), 3u);
    EXPECT_FALSE(std::isfinite(h[2].wall_seconds)) << "the NaN epoch got a time: " << h[2].wall_seconds;
    EXPECT_TRUE(k.converged());
    EXPECT_LE(overall_s(k.best()) - 1, 0.03) << "chose " << k.best();
}

TEST(KnobCApi, ANegativeDivisorsOfIsRefused) {
    EXPECT_EQ(aloe_knob_create("c", 10, 1000, -12, 100, nullptr), nullptr);
    EXPECT_NE(std::string(aloe_last_error()).find("divisors_of=-12 is negative"), std::string::npos) << aloe_last_error();
}

TEST(Knob, EpochBeginMovesTheBaselines) {
    int calls = 0;
    aloe::knob_sources s;
    s.counters = [&calls] {
        ++calls;
        return knob_counters{1e9 * calls, 0, 1, 1};  // each call a different delta
    };
    knob k("begin", knob_range::geometric(10, 1000), 100, "", s);
    k.epoch_begin();  // call 1: discarded
    k.epoch_done({1, 0.1});  // call 2
    ASSERT_EQ(calls, 2);
    EXPECT_DOUBLE_EQ(k.history().at(0).counters.overall_ns, 2e9);
}

TEST(Knob, ValueIsReadableFromAnyThreadWhileEpochsEnd) {
    const knob* self = nullptr;
    knob k("threads", knob_range::geometric(10, 10'000'000), 170, "recheck=2", curve_sources(self));
    self = &k;
    std::atomic<bool> stop{false};
    std::atomic<int> bad{0};
    std::vector<std::thread> readers;
    for (int t = 0; t < 3; ++t)
        readers.emplace_back([&] {
            while (!stop.load()) {
                const std::int64_t v = k.value();
                if (!k.range().contains(v)) bad.fetch_add(1);
            }
        });
    for (int e = 0; e < 200; ++e) k.epoch_done({1, 0.01});
    stop.store(true);
    for (auto& r : readers) r.join();
    EXPECT_EQ(bad.load(), 0);
    EXPECT_TRUE(k.converged());
}

// ---- the C API ----

TEST(KnobCApi, CreatesRunsAndReportsErrors) {
    EXPECT_EQ(aloe_knob_create("c", 10, 1000, 0, 100, "search=nowhere"), nullptr);
    EXPECT_NE(std::string(aloe_last_error()).find("search=nowhere is not golden"), std::string::npos);
    EXPECT_EQ(aloe_knob_create(nullptr, 10, 1000, 0, 100, nullptr), nullptr);
    EXPECT_EQ(aloe_knob_create("c", 5, 5, 12, 5, nullptr), nullptr);  // no divisor of 12 in [5, 5]
    EXPECT_NE(std::string(aloe_last_error()).find("no divisor of 12"), std::string::npos);
    // Divisors of 10^8 between 100 and 5·10^6, the wall time as the objective.
    aloe_knob* k = aloe_knob_create("c.stencil", 100, 5'000'000, 100'000'000, 170, "objective=time");
    ASSERT_NE(k, nullptr) << aloe_last_error();
    EXPECT_EQ(aloe_knob_value(k), 160);  // the nearest divisor in log
    for (int e = 0; e < 10 && aloe_knob_converged(k) == 0; ++e)
        EXPECT_EQ(aloe_knob_epoch_done(k, 0, overall_s(aloe_knob_value(k))), ALOE_OK);
    EXPECT_EQ(aloe_knob_converged(k), 1);
    EXPECT_LE(overall_s(aloe_knob_best(k)) - 1, 0.03);
    EXPECT_EQ(aloe_knob_value(k), aloe_knob_best(k));
    aloe_knob_destroy(k);
    EXPECT_EQ(aloe_knob_epoch_done(nullptr, 1, 1), ALOE_ERROR_ARGUMENT);
    EXPECT_EQ(aloe_knob_converged(nullptr), -1);
    EXPECT_EQ(aloe_knob_value(nullptr), 0);
}

}  // namespace

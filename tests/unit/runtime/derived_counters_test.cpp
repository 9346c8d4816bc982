// Derived counters (runtime/counters.hpp) and counter windows (runtime/counter_window.hpp):
// the task scheduler's HPX formulas over fake raw counters, per worker and in total; a
// reader's delta as the formula over the interval's changes; the empty value; wildcards,
// listings and registration rules. Each test uses objects of its own ("test-d<name>").
#include "runtime/counter_window.hpp"
#include "runtime/counters.hpp"

#include <aloe/error.hpp>
#include <aloe/stats.hpp>

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace aloe::runtime {
namespace {

std::uint64_t value(std::string_view name) {
    const std::optional<counter_sample> s = read_counter(name);
    return s ? s->value : 0xdeadbeefu;  // never a value these tests expect
}

constexpr std::uint64_t ppm = 1'000'000;

// The raw counters the task scheduler keeps, and the derived ones it registers, under
// `object` (src/task/task_counters.hpp lists the real ones).
struct task_counters {
    counter_handle overall, cumulative, tasks, phases, wait_sum, wait_samples;

    explicit task_counters(std::string_view object) {
        const auto raw = [&](std::string_view name, counter_unit unit) {
            return register_counter({.object = object, .name = name, .unit = unit});
        };
        overall = raw("time/overall", counter_unit::nanoseconds);
        cumulative = raw("time/cumulative", counter_unit::nanoseconds);
        tasks = raw("count/cumulative", counter_unit::count);
        phases = raw("count/cumulative-phases", counter_unit::count);
        wait_sum = raw("wait-time/pending-sum", counter_unit::nanoseconds);
        wait_samples = raw("wait-time/pending-samples", counter_unit::count);
        const auto derived = [&](std::string_view name, counter_unit unit, counter_handle a, counter_handle b,
                                 counter_handle c, std::uint64_t scale = 1, std::uint64_t empty = 0) {
            register_derived_counter({.object = object, .name = name, .unit = unit, .help = "derived", .a = a,
                                      .b = b, .c = c, .scale = scale, .empty_value = empty});
        };
        const counter_handle none{};
        derived("idle-rate", counter_unit::ratio, overall, cumulative, overall, ppm, ppm);
        derived("time/average", counter_unit::nanoseconds, cumulative, none, tasks);
        derived("time/average-overhead", counter_unit::nanoseconds, overall, cumulative, tasks);
        derived("time/cumulative-overhead", counter_unit::nanoseconds, overall, cumulative, none);
        derived("time/average-phase", counter_unit::nanoseconds, cumulative, none, phases);
        derived("time/average-phase-overhead", counter_unit::nanoseconds, overall, cumulative, phases);
        derived("wait-time/pending", counter_unit::nanoseconds, wait_sum, none, wait_samples);
    }

    // One worker slot's counts, attributed as a folding thread does.
    void add(int worker, std::uint64_t t_func, std::uint64_t t_exec, std::uint64_t n, std::uint64_t p,
             std::uint64_t sum = 0, std::uint64_t samples = 0) const {
        overall.add_for_worker(worker, t_func);
        cumulative.add_for_worker(worker, t_exec);
        tasks.add_for_worker(worker, n);
        phases.add_for_worker(worker, p);
        wait_sum.add_for_worker(worker, sum);
        wait_samples.add_for_worker(worker, samples);
    }
};

std::string name(std::string_view object, std::string_view instance, std::string_view counter) {
    return "/" + std::string(object) + "{" + std::string(instance) + "}/" + std::string(counter);
}

TEST(RuntimeDerivedCounters, HpxFormulasPerWorkerAndTotal) {
    const task_counters t("test-dformulas");
    t.add(0, 1000, 750, 5, 10, 300, 3);
    t.add(1, 2000, 500, 3, 4);
    t.add(2, 0, 0, 0, 0);  // a worker that never ran its loop: the empty values
    const auto at = [](std::string_view instance, std::string_view counter) {
        return value(name("test-dformulas", instance, counter));
    };
    const std::string w0 = "locality#0/worker-thread#0", w1 = "locality#0/worker-thread#1",
                      w2 = "locality#0/worker-thread#2", total = "locality#0/total";
    // idle-rate = (overall − cumulative) / overall, in ppm; 100% when a worker has no t_func.
    EXPECT_EQ(at(w0, "idle-rate"), 250'000u);
    EXPECT_EQ(at(w1, "idle-rate"), 750'000u);
    EXPECT_EQ(at(w2, "idle-rate"), ppm);
    EXPECT_EQ(at(total, "idle-rate"), 583'333u) << "1750 / 3000 of the totals, rounded down";
    // time/average = cumulative / tasks
    EXPECT_EQ(at(w0, "time/average"), 150u);
    EXPECT_EQ(at(w1, "time/average"), 166u);
    EXPECT_EQ(at(w2, "time/average"), 0u);
    EXPECT_EQ(at(total, "time/average"), 156u);
    // time/average-overhead = (overall − cumulative) / tasks
    EXPECT_EQ(at(w0, "time/average-overhead"), 50u);
    EXPECT_EQ(at(w1, "time/average-overhead"), 500u);
    EXPECT_EQ(at(total, "time/average-overhead"), 218u);
    // time/cumulative-overhead = overall − cumulative (never empty: no divisor)
    EXPECT_EQ(at(w0, "time/cumulative-overhead"), 250u);
    EXPECT_EQ(at(w2, "time/cumulative-overhead"), 0u);
    EXPECT_EQ(at(total, "time/cumulative-overhead"), 1750u);
    // time/average-phase = cumulative / phases; time/average-phase-overhead = (overall − cumulative) / phases
    EXPECT_EQ(at(w0, "time/average-phase"), 75u);
    EXPECT_EQ(at(w1, "time/average-phase"), 125u);
    EXPECT_EQ(at(total, "time/average-phase"), 89u);
    EXPECT_EQ(at(w0, "time/average-phase-overhead"), 25u);
    EXPECT_EQ(at(w1, "time/average-phase-overhead"), 375u);
    EXPECT_EQ(at(total, "time/average-phase-overhead"), 125u);
    // wait-time/pending = pending-sum / pending-samples
    EXPECT_EQ(at(w0, "wait-time/pending"), 100u);
    EXPECT_EQ(at(w1, "wait-time/pending"), 0u);
    EXPECT_EQ(at(total, "wait-time/pending"), 100u);
    // Units are the spec's.
    EXPECT_EQ(read_counter(name("test-dformulas", total, "idle-rate"))->unit, counter_unit::ratio);
    EXPECT_EQ(read_counter(name("test-dformulas", w1, "time/average"))->unit, counter_unit::nanoseconds);
}

TEST(RuntimeDerivedCounters, ReaderDeltaIsTheFormulaOverTheIntervalsChanges) {
    const task_counters t("test-ddelta");
    t.add(1, 500, 100, 1, 1);  // before the readers: in no delta
    aloe::counter_reader worker(name("test-ddelta", "locality#0/worker-thread#1", "idle-rate"));
    aloe::counter_reader total(name("test-ddelta", "locality#0/total", "idle-rate"));
    aloe::counter_reader average(name("test-ddelta", "locality#0/total", "time/average"));

    t.add(1, 1000, 900, 3, 3);  // interval 1: 10% idle, 300 ns per task
    EXPECT_EQ(worker.delta().at(0).value, 100'000u);
    EXPECT_EQ(total.delta().at(0).value, 100'000u);
    EXPECT_EQ(average.delta().at(0).value, 300u);

    t.add(1, 1000, 100, 1, 1);  // interval 2: 90% idle (since the start: 56%)
    const aloe::counter_reader copy = worker;  // the same baseline, moving on its own
    EXPECT_EQ(worker.peek().at(0).value, 900'000u) << "not the difference of two rates";
    EXPECT_EQ(worker.peek().at(0).value, 900'000u) << "peek leaves the baseline";
    EXPECT_EQ(worker.delta().at(0).value, 900'000u);
    EXPECT_EQ(total.delta().at(0).value, 900'000u);
    EXPECT_EQ(average.delta().at(0).value, 100u);
    EXPECT_EQ(value(name("test-ddelta", "locality#0/total", "idle-rate")), 1400u * ppm / 2500u)
        << "a read is the formula over the totals";

    // Interval 3: the worker did not run its loop: the empty value (100% idle), average 0.
    EXPECT_EQ(worker.delta().at(0).value, ppm);
    EXPECT_EQ(average.delta().at(0).value, 0u);
    aloe::counter_reader from_copy = copy;
    EXPECT_EQ(from_copy.delta().at(0).value, 900'000u) << "the copy kept the baseline it was made with";
}

TEST(RuntimeDerivedCounters, EmptyValueIsTheSpecs) {
    const counter_handle num = register_counter({.object = "test-dempty", .name = "num"});
    const counter_handle den = register_counter({.object = "test-dempty", .name = "den"});
    const counter_handle none{};
    register_derived_counter({.object = "test-dempty", .name = "ratio", .a = num, .c = den, .empty_value = 7});
    register_derived_counter({.object = "test-dempty", .name = "plain", .a = num, .b = none, .c = none, .scale = 3});
    register_derived_counter({.object = "test-dempty", .name = "default-empty", .a = num, .c = den});
    EXPECT_EQ(value("/test-dempty{locality#0/total}/ratio"), 7u) << "den is 0";
    EXPECT_EQ(value("/test-dempty{locality#0/total}/default-empty"), 0u);
    num.add(10);
    EXPECT_EQ(value("/test-dempty{locality#0/total}/ratio"), 7u);
    EXPECT_EQ(value("/test-dempty{locality#0/total}/plain"), 30u) << "no divisor: never empty";
    den.add(4);
    EXPECT_EQ(value("/test-dempty{locality#0/total}/ratio"), 2u) << "10 / 4, rounded down";
}

TEST(RuntimeDerivedCounters, FormulaArithmetic) {
    const counter_formula f{.scale = ppm, .empty_value = 5};
    EXPECT_EQ(f.apply(3, 1, 4), 500'000u);
    EXPECT_EQ(f.apply(1, 3, 4), 0u) << "a − b below 0 counts as 0 (operands read at different moments)";
    EXPECT_EQ(f.apply(9, 0, 0), 5u);
    const std::uint64_t day_ns = 86'400'000'000'000u;
    EXPECT_EQ(f.apply(day_ns, 0, day_ns), ppm) << "no overflow in (a − b) × scale";
    constexpr std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
    EXPECT_EQ(f.apply(max, 0, 1), max) << "saturates";
    EXPECT_EQ(counter_formula{}.apply(42, 0, 1), 42u) << "a raw counter reads as itself";
}

TEST(RuntimeDerivedCounters, WildcardsListingsAndTotalsIncludeDerivedCounters) {
    const task_counters t("test-dwild");
    t.add(0, 100, 50, 1, 1);
    t.add(3, 100, 100, 1, 1);
    const std::vector<counter_sample> rates = read_counters("/test-dwild{*}/idle-rate");
    ASSERT_GE(rates.size(), 5u) << "the total and worker slots 0..3 at least";
    EXPECT_EQ(rates[0].name, "/test-dwild{locality#0/total}/idle-rate") << "the total before its workers";
    EXPECT_EQ(rates[0].value, 250'000u);
    const auto find = [&](std::string_view n) {
        return std::find_if(rates.begin(), rates.end(), [&](const counter_sample& s) { return s.name == n; });
    };
    ASSERT_NE(find("/test-dwild{locality#0/worker-thread#0}/idle-rate"), rates.end());
    EXPECT_EQ(find("/test-dwild{locality#0/worker-thread#0}/idle-rate")->value, 500'000u);
    EXPECT_EQ(find("/test-dwild{locality#0/worker-thread#3}/idle-rate")->value, 0u);
    EXPECT_EQ(find("/test-dwild{locality#0/worker-thread#1}/idle-rate")->value, ppm) << "a slot with no counts";

    // Raw and derived together, in registration order.
    const std::vector<counter_sample> all = read_counters("/test-dwild{locality#0/total}/*");
    std::vector<std::string> names;
    for (const counter_sample& s : all) names.push_back(s.name.substr(s.name.find('}') + 2));
    EXPECT_EQ(names, (std::vector<std::string>{"time/overall", "time/cumulative", "count/cumulative",
                                               "count/cumulative-phases", "wait-time/pending-sum",
                                               "wait-time/pending-samples", "idle-rate", "time/average",
                                               "time/average-overhead", "time/cumulative-overhead",
                                               "time/average-phase", "time/average-phase-overhead",
                                               "wait-time/pending"}));

    EXPECT_EQ(aloe::counter_value("/test-dwild{locality#0/total}/time/cumulative-overhead"), 50u);
    bool listed = false, in_all = false;
    for (const aloe::counter_description& d : list_counters()) {
        if (d.name == "/test-dwild{locality#0/total}/idle-rate") {
            listed = true;
            EXPECT_TRUE(d.derived);
            EXPECT_TRUE(d.per_worker);
            EXPECT_EQ(d.unit, counter_unit::ratio);
            EXPECT_EQ(d.help, "derived");
        }
        if (d.name == "/test-dwild{locality#0/total}/time/overall") {
            EXPECT_FALSE(d.derived);
        }
    }
    for (const auto& [n, v] : read_all_counters())
        if (n == "/test-dwild{locality#0/total}/time/average") {
            in_all = true;
            EXPECT_EQ(v, 75u);
        }
    EXPECT_TRUE(listed);
    EXPECT_TRUE(in_all);
}

TEST(RuntimeDerivedCounters, RegistrationRules) {
    const counter_handle a = register_counter({.object = "test-drules", .name = "a"});
    const counter_handle b = register_counter({.object = "test-drules", .name = "b"});
    const derived_counter_spec spec{.object = "test-drules", .name = "diff", .a = a, .b = b};
    const counter_key key = register_derived_counter(spec);
    EXPECT_EQ(register_derived_counter(spec), key) << "the same name: the same counter";
    EXPECT_EQ(register_derived_counter({.object = "test-drules", .name = "diff", .a = b}), key) << "the first formula stays";
    a.add(5);
    b.add(2);
    EXPECT_EQ(value("/test-drules{locality#0/total}/diff"), 3u);
    std::uint64_t by_key = 0;
    read_counter_values({&key, 1}, {&by_key, 1});
    EXPECT_EQ(by_key, 3u) << "read by key as a reader does";

    EXPECT_THROW(register_counter({.object = "test-drules", .name = "diff"}), aloe::error)
        << "no handle, so no add(), ever names a derived counter";
    EXPECT_THROW(register_derived_counter({.object = "test-drules", .name = "a", .a = a}), aloe::error)
        << "a raw counter's name";
    EXPECT_THROW(register_derived_counter({.object = "test-drules", .name = "no-a", .b = b}), aloe::error);
    EXPECT_THROW(register_derived_counter({.object = "test-drules", .name = "zero", .a = a, .scale = 0}), aloe::error);
    EXPECT_THROW(register_derived_counter({.object = "test-drules", .name = "bad*", .a = a}), aloe::error);
    EXPECT_FALSE(read_counter("/test-drules{locality#0/total}/no-a").has_value()) << "a refused counter is not made";

    // A derived counter with its own instance reads its operands' totals.
    a.add_for_worker(2, 10);
    register_derived_counter({.object = "test-drules", .name = "sum-a", .instance = "site#1", .a = a});
    EXPECT_EQ(value("/test-drules{site#1}/sum-a"), 15u);
    EXPECT_FALSE(read_counter("/test-drules{locality#0/worker-thread#2}/sum-a").has_value()) << "not per worker";
}

TEST(RuntimeDerivedCounters, WindowFromZeroSeesWhatWasCountedBefore) {
    const task_counters t("test-dwindow");
    t.add(0, 400, 100, 2, 2);
    counter_window from_zero("/test-dwindow{locality#0/total}/*-overhead", counter_window::baseline::zero);
    counter_window from_now("/test-dwindow{locality#0/total}/*-overhead");
    const std::vector<counter_sample> cumulative = from_zero.peek();
    ASSERT_EQ(cumulative.size(), 3u);  // average-, cumulative-, average-phase-overhead
    EXPECT_EQ(cumulative[0].value, 150u);
    EXPECT_EQ(cumulative[1].value, 300u);
    EXPECT_EQ(cumulative[2].value, 150u);
    EXPECT_EQ(from_now.peek().at(1).value, 0u);
    t.add(0, 100, 0, 0, 0);
    EXPECT_EQ(from_zero.delta().at(1).value, 400u);
    EXPECT_EQ(from_now.delta().at(1).value, 100u);
    EXPECT_EQ(from_now.delta().at(0).value, 0u) << "no task in the interval: the empty value";
    EXPECT_EQ(from_zero.pattern(), "/test-dwindow{locality#0/total}/*-overhead");
}

TEST(RuntimeDerivedCounters, ForkChildDerivesFromItsOwnCounts) {
    const task_counters t("test-dfork");
    t.add(1, 1000, 0, 1, 1);
    aloe::counter_reader reader("/test-dfork{locality#0/worker-thread#1}/idle-rate");
    t.add(1, 1000, 0, 1, 1);
    const pid_t pid = ::fork();
    if (pid == 0) {
        if (value("/test-dfork{locality#0/worker-thread#1}/idle-rate") != ppm) ::_exit(1);  // no counts: empty
        t.add(1, 1000, 250, 1, 1);
        if (reader.delta().at(0).value != 750'000u) ::_exit(2);
        ::_exit(0);
    }
    int status = -1;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "1: the parent's counts in the child; 2: the reader's delta there";
    EXPECT_EQ(reader.delta().at(0).value, ppm) << "the parent's reader: 100% idle over its interval";
}

}  // namespace
}  // namespace aloe::runtime

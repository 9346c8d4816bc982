// Futures (include/aloe/task.hpp): async/get for values, void and move-only types; exceptions
// through get(), then() and dataflow(); when_all of many and variadic; shared_future with
// several consumers; ready futures; misuse (no state) as aloe::error; a dropped future whose
// task still runs (no leak: the ASan build checks).
#include <aloe/task.hpp>

#include "task_test_support.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace aloe {
namespace {

using task_test::scaled;

std::uint64_t fib_serial(int n) {
    return n < 2 ? static_cast<std::uint64_t>(n) : fib_serial(n - 1) + fib_serial(n - 2);
}

std::uint64_t fib_future(int n) {
    if (n < 2) return static_cast<std::uint64_t>(n);
    future<std::uint64_t> a = async([n] { return fib_future(n - 1); });
    const std::uint64_t b = fib_future(n - 2);
    return a.get() + b;
}

TEST(TaskFuture, AsyncGetValue) {
    future<int> f = async([] { return 41; });
    EXPECT_TRUE(f.valid());
    EXPECT_EQ(f.get(), 41);
    EXPECT_FALSE(f.valid()) << "get() consumes the future";

    future<std::string> g =
        async([](const std::string& a, int b) { return a + std::to_string(b); }, std::string("x"), 7);
    g.wait();
    EXPECT_TRUE(g.is_ready());
    EXPECT_EQ(g.get(), "x7");
}

TEST(TaskFuture, AsyncVoid) {
    std::atomic<int> ran{0};
    future<void> f = async([&ran] { ran.fetch_add(1); });
    f.get();
    EXPECT_EQ(ran.load(), 1);
    EXPECT_FALSE(f.valid());
}

TEST(TaskFuture, MoveOnlyValuesAndArguments) {
    future<std::unique_ptr<int>> f = async([] { return std::make_unique<int>(5); });
    std::unique_ptr<int> p = f.get();
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(*p, 5);

    // A move-only argument, held by the task, passed as an lvalue to the function.
    future<int> g = async([](std::unique_ptr<int>& q) { return *q * 2; }, std::make_unique<int>(21));
    EXPECT_EQ(g.get(), 42);

    // Moved futures: the source has no state, the target the same result.
    future<std::unique_ptr<int>> a = async([] { return std::make_unique<int>(9); });
    future<std::unique_ptr<int>> b = std::move(a);
    EXPECT_FALSE(a.valid());  // NOLINT(bugprone-use-after-move): the point of the check
    EXPECT_EQ(*b.get(), 9);
}

TEST(TaskFuture, RecursiveFibonacci) {
    const int n = static_cast<int>(scaled(22, 16));
    EXPECT_EQ(fib_future(n), fib_serial(n));
}

TEST(TaskFuture, ExceptionTravelsThroughGet) {
    future<int> f = async([]() -> int { throw std::runtime_error("boom"); });
    f.wait();  // wait() does not throw
    EXPECT_TRUE(f.is_ready());
    try {
        (void)f.get();
        ADD_FAILURE() << "get() did not rethrow";
    } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "boom");
    }
    EXPECT_FALSE(f.valid());

    future<void> v = async([] { throw std::logic_error("void boom"); });
    EXPECT_THROW(v.get(), std::logic_error);
}

TEST(TaskFuture, ThenSeesTheReadyFutureAndChains) {
    future<int> chained = async([] { return 20; })
                              .then([](future<int> x) { return x.get() + 1; })
                              .then([](future<int> x) { return x.get() * 2; });
    EXPECT_EQ(chained.get(), 42);

    // On a ready future: runs (as a task) all the same.
    future<std::string> s =
        make_ready_future(std::string("ready")).then([](future<std::string> x) { return x.get() + "!"; });
    EXPECT_EQ(s.get(), "ready!");

    // The continuation sees the failed input: get() rethrows there.
    future<int> failed = async([]() -> int { throw std::runtime_error("input"); });
    future<std::string> seen = failed.then([](future<int> x) -> std::string {
        EXPECT_TRUE(x.is_ready());
        try {
            (void)x.get();
        } catch (const std::runtime_error& e) {
            return std::string("caught ") + e.what();
        }
        return "no exception";
    });
    EXPECT_FALSE(failed.valid()) << "then() invalidates the future";
    EXPECT_EQ(seen.get(), "caught input");

    // Not caught there: it travels on to the continuation's future.
    future<int> passed = async([]() -> int { throw std::runtime_error("passed on"); }).then([](future<int> x) {
        return x.get() + 1;
    });
    EXPECT_THROW((void)passed.get(), std::runtime_error);

    // A continuation of void, returning void.
    std::atomic<int> ran{0};
    async([&ran] { ran.fetch_add(1); }).then([&ran](future<void> x) {
        x.get();
        ran.fetch_add(1);
    }).get();
    EXPECT_EQ(ran.load(), 2);
}

TEST(TaskFuture, ManyContinuationsOnOneSharedFuture) {
    std::atomic<bool> release{false};
    shared_future<int> source = async([&release] {
        while (!release.load()) std::this_thread::yield();
        return 10;
    }).share();
    // Continuations attached while the source is still running, then chains on each.
    constexpr int n = 100;
    std::vector<future<int>> results;
    for (int i = 0; i < n; ++i)
        results.push_back(source.then([i](shared_future<int> x) { return x.get() + i; }).then([](future<int> x) {
            return x.get() * 2;
        }));
    release.store(true);
    for (int i = 0; i < n; ++i) EXPECT_EQ(results[static_cast<std::size_t>(i)].get(), (10 + i) * 2) << i;
    EXPECT_TRUE(source.valid()) << "shared_future::then() keeps it";
    EXPECT_EQ(source.get(), 10);
}

TEST(TaskFuture, SharedFutureHasSeveralConsumers) {
    shared_future<std::vector<int>> data = async([] {
        task_test::spin_ns(200'000);
        std::vector<int> v(1000);
        std::iota(v.begin(), v.end(), 0);
        return v;
    }).share();
    // Consumers: tasks, plain threads and this thread, all reading the same value.
    std::atomic<int> good{0};
    std::vector<future<void>> readers;
    for (int i = 0; i < 16; ++i)
        readers.push_back(async([data, &good] {
            if (data.get().size() == 1000 && data.get()[999] == 999) good.fetch_add(1);
        }));
    std::vector<std::thread> threads;
    for (int i = 0; i < 3; ++i)
        threads.emplace_back([data, &good] {
            if (data.get().size() == 1000 && data.get()[500] == 500) good.fetch_add(1);
        });
    for (auto& r : readers) r.get();
    for (auto& t : threads) t.join();
    EXPECT_EQ(good.load(), 19);
    const std::vector<int>& same = data.get();
    EXPECT_EQ(&same, &data.get()) << "one value, returned by reference";

    // A failed shared state rethrows to every consumer.
    shared_future<int> failed = async([]() -> int { throw std::runtime_error("shared"); }).share();
    shared_future<int> copy = failed;
    EXPECT_THROW((void)failed.get(), std::runtime_error);
    EXPECT_THROW((void)copy.get(), std::runtime_error);
    EXPECT_TRUE(copy.valid());

    shared_future<void> nothing = async([] {}).share();
    nothing.get();
    nothing.get();
}

TEST(TaskFuture, MakeReadyFuture) {
    future<int> f = make_ready_future(3);
    EXPECT_TRUE(f.is_ready());
    EXPECT_EQ(f.get(), 3);
    future<void> v = make_ready_future();
    EXPECT_TRUE(v.is_ready());
    v.get();
    future<std::unique_ptr<int>> p = make_ready_future(std::make_unique<int>(4));
    EXPECT_EQ(*p.get(), 4);
}

TEST(TaskFuture, NoStateIsAnAloeError) {
    future<int> empty;
    EXPECT_FALSE(empty.valid());
    EXPECT_FALSE(empty.is_ready());
    try {
        (void)empty.get();
        ADD_FAILURE() << "get() on a future with no state did not throw";
    } catch (const aloe::error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("get"), std::string::npos) << what;
        EXPECT_NE(what.find("no state"), std::string::npos) << what;
    }
    EXPECT_THROW(empty.wait(), aloe::error);
    EXPECT_THROW((void)empty.then([](future<int> x) { return x.get(); }), aloe::error);

    future<int> used = make_ready_future(1);
    EXPECT_EQ(used.get(), 1);
    try {
        (void)used.get();
        ADD_FAILURE() << "a second get() did not throw";
    } catch (const aloe::error& e) {
        EXPECT_NE(std::string(e.what()).find("get() called already"), std::string::npos) << e.what();
    }

    shared_future<int> no_shared;
    EXPECT_THROW((void)no_shared.get(), aloe::error);
    EXPECT_THROW(no_shared.wait(), aloe::error);

    // An invalid input to dataflow: the function runs and sees it (get() throws there).
    future<int> invalid;
    future<bool> saw = dataflow(
        [](future<int> x) {
            try {
                (void)x.get();
            } catch (const aloe::error&) {
                return true;
            }
            return false;
        },
        std::move(invalid));
    EXPECT_TRUE(saw.get());
}

TEST(TaskFuture, DroppedFutureStillRunsItsTask) {
    // Run by a worker while this thread polls (a thread that only polls runs no task).
    if (task_concurrency() < 2) GTEST_SKIP() << "needs a team of 2 or more (the suite sets ALOE_NUM_THREADS=4)";
    std::atomic<bool> go{false};
    std::atomic<int> ran{0};
    {
        future<std::vector<int>> dropped = async([&go, &ran] {
            while (!go.load()) std::this_thread::yield();
            ran.fetch_add(1);
            return std::vector<int>(1000, 1);  // freed with the state when the task ends
        });
    }
    go.store(true);
    EXPECT_TRUE(task_test::eventually([&] { return ran.load() == 1; })) << "the dropped future's task never ran";

    // Many, dropped at once, some failing: each runs; the states go with their tasks.
    std::atomic<int> many{0};
    for (int i = 0; i < 1000; ++i)
        (void)async([i, &many]() -> std::string {
            many.fetch_add(1);
            if (i % 3 == 0) throw std::runtime_error("nobody looks");
            return std::string(100, 'x');
        });
    EXPECT_TRUE(task_test::eventually([&] { return many.load() == 1000; })) << many.load();
    // Give the last tasks the time to release their states before the leak check at exit.
    async([] {}).get();
}

TEST(TaskFuture, WhenAllOfTenThousand) {
    constexpr int n = 10'000;
    std::vector<future<int>> inputs;
    inputs.reserve(n);
    for (int i = 0; i < n; ++i) inputs.push_back(async([i] { return i; }));
    future<std::vector<future<int>>> all = when_all(std::move(inputs));
    std::vector<future<int>> ready = all.get();
    ASSERT_EQ(ready.size(), static_cast<std::size_t>(n));
    std::int64_t sum = 0;
    for (auto& f : ready) {
        ASSERT_TRUE(f.is_ready());
        sum += f.get();
    }
    EXPECT_EQ(sum, std::int64_t{n} * (n - 1) / 2);

    // Of ready ones and of none.
    std::vector<future<int>> done;
    for (int i = 0; i < 100; ++i) done.push_back(make_ready_future(i));
    EXPECT_EQ(when_all(std::move(done)).get().size(), 100u);
    EXPECT_TRUE(when_all(std::vector<future<int>>{}).get().empty());
}

TEST(TaskFuture, WhenAllVariadic) {
    std::atomic<bool> side{false};
    shared_future<double> s = async([] { return 1.5; }).share();
    auto all = when_all(async([] { return 1; }), async([&side] { side.store(true); }), s,
                        async([]() -> int { throw std::runtime_error("third"); }));
    auto [a, b, c, d] = all.get();
    EXPECT_TRUE(a.is_ready() && b.is_ready() && c.is_ready() && d.is_ready());
    EXPECT_EQ(a.get(), 1);
    b.get();
    EXPECT_TRUE(side.load());
    EXPECT_EQ(c.get(), 1.5);
    EXPECT_THROW((void)d.get(), std::runtime_error) << "when_all does not fail: the input does";
}

// White-box: a dataflow of two shared futures and a small function is one 128-byte block for
// its join (task_memory's second class) and one 64-byte block for its result's state. The
// wavefront benchmark keeps millions of them alive at once; a field more doubles its join.
TEST(TaskFuture, DataflowOfTwoFuturesFitsTheAllocatorsSmallClasses) {
    using slot = shared_future<void>;
    auto f = [i = 1, j = 2](const slot&, const slot&) { return i + j; };
    using join = detail::dataflow_join<int, decltype(f), slot, slot>;
    EXPECT_EQ(sizeof(detail::embedded_arrival), sizeof(detail::linked_task)) << "its join is kept in task_node::owner";
    EXPECT_LE(sizeof(join), 128u);
    EXPECT_LE(sizeof(detail::future_state<void>), 64u);
}

TEST(TaskFuture, DataflowWithFailedInputs) {
    future<int> result = dataflow([](future<int> x, future<int> y) { return x.get() + y.get(); },
                                  async([] { return 1; }),
                                  async([]() -> int { throw std::runtime_error("y failed"); }));
    try {
        (void)result.get();
        ADD_FAILURE() << "the failed input's exception did not travel";
    } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "y failed");
    }

    // The function may handle it instead.
    future<int> handled = dataflow(
        [](future<int> x) {
            try {
                return x.get();
            } catch (const std::runtime_error&) {
                return -1;
            }
        },
        async([]() -> int { throw std::runtime_error("x"); }));
    EXPECT_EQ(handled.get(), -1);
}

// An invalid input (no state) reaches f as it is, and the inputs after it are still waited
// for: the join once stopped attaching at the invalid one and ran f at once, before them.
TEST(TaskFuture, AnInvalidInputDoesNotStopTheJoinWaitingForTheOthers) {
    std::atomic<bool> go{false};
    const auto pending = [&go] {
        return async([&go] {
            while (!go.load()) std::this_thread::yield();
            return 7;
        });
    };
    std::vector<future<int>> inputs;
    inputs.emplace_back();  // invalid
    inputs.push_back(pending());
    future<bool> vector_join = dataflow(
        [](std::vector<future<int>> in) { return !in[0].valid() && in[1].is_ready() && in[1].get() == 7; },
        std::move(inputs));
    future<bool> tuple_join = dataflow(
        [](future<int> invalid, future<int> later) {
            try {
                (void)invalid.get();
                return false;
            } catch (const aloe::error&) {  // no state: get() says so
            }
            return later.is_ready() && later.get() == 7;
        },
        future<int>{}, pending());
    // A join that ran too early is ready well before a second passes; these must not be.
    const bool early = task_test::eventually([&] { return vector_join.is_ready() || tuple_join.is_ready(); }, 1.0);
    EXPECT_FALSE(early) << "a join ran while an input after the invalid one was pending";
    go.store(true);
    EXPECT_TRUE(vector_join.get()) << "f saw the vector's pending element not ready";
    EXPECT_TRUE(tuple_join.get()) << "f saw the pending input after the invalid one not ready";

    std::vector<future<int>> mixed;
    mixed.emplace_back();
    mixed.push_back(make_ready_future(5));
    auto all = when_all(std::move(mixed)).get();
    ASSERT_EQ(all.size(), 2u);
    EXPECT_FALSE(all[0].valid());
    EXPECT_EQ(all[1].get(), 5);
}

TEST(TaskFuture, DataflowWithReadyPendingAndMixedInputs) {
    // All ready already: f still runs (as a task) and sees them.
    future<int> ready = dataflow([](future<int> a, future<int> b) { return a.get() * b.get(); }, make_ready_future(6),
                                 make_ready_future(7));
    EXPECT_EQ(ready.get(), 42);

    // A mix: ready, pending, shared, a vector of futures, a plain value passed through.
    std::atomic<bool> go{false};
    shared_future<int> shared = async([] { return 100; }).share();
    std::vector<future<int>> parts;
    for (int i = 1; i <= 10; ++i) parts.push_back(async([i] { return i; }));
    parts.push_back(make_ready_future(1000));
    future<int> mixed = dataflow(
        [](future<int> r, future<int> p, shared_future<int> s, std::vector<future<int>> v, int plain) {
            int sum = r.get() + p.get() + s.get() + plain;
            for (auto& f : v) sum += f.get();
            return sum;
        },
        make_ready_future(1), async([&go] {
            while (!go.load()) std::this_thread::yield();
            return 2;
        }),
        shared, std::move(parts), 10'000);
    EXPECT_FALSE(mixed.is_ready()) << "an input is still pending";
    go.store(true);
    EXPECT_EQ(mixed.get(), 1 + 2 + 100 + 55 + 1000 + 10'000);
    EXPECT_EQ(shared.get(), 100) << "the shared input stays readable";

    // Ranges that hold no futures (a vector of values, a string) pass through as values.
    future<std::string> values = dataflow(
        [](future<int> n, std::vector<int> v, std::string text) {
            return text + std::to_string(n.get() + static_cast<int>(v.size()));
        },
        async([] { return 40; }), std::vector<int>{1, 2}, std::string("answer "));
    EXPECT_EQ(values.get(), "answer 42");

    // Chains of dataflow: a diamond, many times over.
    for (int round = 0; round < 200; ++round) {
        shared_future<int> top = async([round] { return round; }).share();
        future<int> left = top.then([](shared_future<int> x) { return x.get() + 1; });
        future<int> right = top.then([](shared_future<int> x) { return x.get() + 2; });
        future<int> bottom = dataflow([](future<int> l, future<int> r) { return l.get() * r.get(); }, std::move(left),
                                      std::move(right));
        ASSERT_EQ(bottom.get(), (round + 1) * (round + 2));
    }
}

TEST(TaskFuture, FuturesFromAThreadOutsideTheTeam) {
    async([] {}).get();  // this thread holds slot 0; the ones below have none
    std::vector<std::thread> threads;
    std::atomic<int> good{0};
    for (int t = 0; t < 3; ++t)
        threads.emplace_back([t, &good] {
            std::vector<future<int>> fs;
            for (int i = 0; i < 300; ++i) fs.push_back(async([t, i] { return t * 1000 + i; }));
            int sum = 0;
            for (auto& f : when_all(std::move(fs)).get()) sum += f.get();
            if (sum == t * 1000 * 300 + 299 * 300 / 2 && fib_future(12) == fib_serial(12)) good.fetch_add(1);
        });
    for (auto& t : threads) t.join();
    EXPECT_EQ(good.load(), 3);
}

}  // namespace
}  // namespace aloe

// The counter registry (runtime/counters.hpp): names and aliases, totals summed over live and
// exited threads, worker-slot instances, wildcards, per-reader deltas, units, growth past a
// thread's first chunk, the capacity limit and fork. Each test uses counters of its own
// (object "test-<name>"), so the tests do not see each other's counts.
#include "runtime/counters.hpp"

#include <aloe/error.hpp>
#include <aloe/stats.hpp>

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace aloe::runtime {
namespace {

std::uint64_t value(std::string_view name) {
    const std::optional<counter_sample> s = read_counter(name);
    return s ? s->value : ~std::uint64_t{0};  // never a count these tests make
}

TEST(RuntimeCounters, RegistrationIsIdempotentByName) {
    const counter_spec spec{.object = "test-idem", .name = "hits", .unit = counter_unit::count, .help = "h",
                            .alias = "test.idem.hits"};
    const counter_handle a = register_counter(spec);
    ASSERT_TRUE(a.valid());
    EXPECT_EQ(register_counter(spec).id(), a.id());
    // Same full name, other help and unit: the same counter, the first unit stays.
    EXPECT_EQ(register_counter({.object = "test-idem", .name = "hits", .unit = counter_unit::bytes}).id(), a.id());
    EXPECT_EQ(read_counter("/test-idem{locality#0/total}/hits")->unit, counter_unit::count);
    // Another instance is another counter.
    const counter_handle site = register_counter({.object = "test-idem", .name = "hits", .instance = "site#1"});
    EXPECT_NE(site.id(), a.id());
    a.add(3);
    site.add(4);
    EXPECT_EQ(value("/test-idem{locality#0/total}/hits"), 3u);
    EXPECT_EQ(value("test.idem.hits"), 3u) << "the alias reads the total";
    EXPECT_EQ(value("/test-idem{site#1}/hits"), 4u);

    EXPECT_THROW(register_counter({.object = "test-idem", .name = "other", .alias = "test.idem.hits"}), aloe::error)
        << "an alias names one counter";
    EXPECT_THROW(register_counter({.object = "", .name = "x"}), aloe::error);
    EXPECT_THROW(register_counter({.object = "a/b", .name = "x"}), aloe::error);
    EXPECT_THROW(register_counter({.object = "test-idem", .name = "x*"}), aloe::error);
    EXPECT_THROW(register_counter({.object = "test-idem", .name = "x", .instance = "locality#0/total"}), aloe::error);
    EXPECT_FALSE(counter_handle{}.valid());
    counter_handle{}.add(1);  // a disabled handle drops its counts
    counter_handle{}.add_for_worker(0, 1);
}

TEST(RuntimeCounters, TotalIsTheSumOverLiveAndExitedThreads) {
    const counter_handle h = register_counter({.object = "test-sum", .name = "hits"});
    constexpr int threads = 8, per_thread = 5000;
    std::atomic<int> done{0};
    std::atomic<bool> release{false};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            for (int i = 0; i < per_thread; ++i) h.add(static_cast<std::uint64_t>(t + 1));
            done.fetch_add(1);
            if (t % 2 == 0) return;  // half exit before the first read
            while (!release.load()) std::this_thread::yield();
        });
    while (done.load() < threads) std::this_thread::yield();
    const std::uint64_t expected = per_thread * (threads * (threads + 1) / 2);
    EXPECT_EQ(value("/test-sum{locality#0/total}/hits"), expected) << "live blocks and exited threads' folds";
    release.store(true);
    for (auto& t : pool) t.join();
    EXPECT_EQ(value("/test-sum{locality#0/total}/hits"), expected) << "every thread exited: all folded";
    h.add(1);
    EXPECT_EQ(value("/test-sum{locality#0/total}/hits"), expected + 1);
}

TEST(RuntimeCounters, ThreadsCountInTheirWorkerSlot) {
    const counter_handle h = register_counter({.object = "test-slot", .name = "hits"});
    std::thread([&] {
        set_counter_worker(3);
        EXPECT_EQ(counter_worker(), 3);
        h.add(5);
    }).join();
    std::thread([&] {
        set_counter_worker(5);
        h.add(7);
        set_counter_worker(6);  // what it counted under slot 5 stays there
        h.add(1);
    }).join();
    h.add_for_worker(3, 100);  // attributed by this thread, as count_loop does
    EXPECT_EQ(value("/test-slot{locality#0/worker-thread#3}/hits"), 105u);
    EXPECT_EQ(value("/test-slot{locality#0/worker-thread#5}/hits"), 7u);
    EXPECT_EQ(value("/test-slot{locality#0/worker-thread#6}/hits"), 1u);
    EXPECT_EQ(value("/test-slot{locality#0/worker-thread#4}/hits"), 0u);
    EXPECT_EQ(value("/test-slot{locality#0/total}/hits"), 113u);

    // A thread that declares nothing gets a slot no live thread holds, at its first count.
    std::thread([&] {
        EXPECT_EQ(counter_worker(), -1);
        h.add(1000);
        const int slot = counter_worker();
        ASSERT_GE(slot, 0);
        EXPECT_GE(value("/test-slot{locality#0/worker-thread#" + std::to_string(slot) + "}/hits"), 1000u);
    }).join();
    EXPECT_EQ(value("/test-slot{locality#0/total}/hits"), 1113u);
}

// Threads count without a lock while a reader sums: one reading's total must still be the sum
// of its instances (a delta of the total and the deltas of the instances come from such
// readings; the task counters' test saw them differ by one worker's 2 ms under TSan).
TEST(RuntimeCounters, OneReadingsTotalIsTheSumOfItsInstancesWhileThreadsCount) {
    const counter_handle h = register_counter({.object = "test-torn", .name = "hits"});
    constexpr int counting = 3;
    std::atomic<bool> stop{false};
    std::atomic<int> started{0};
    std::vector<std::thread> pool;
    for (int w = 0; w < counting; ++w)
        pool.emplace_back([&, w] {
            set_counter_worker(w + 1);
            h.add(1);
            started.fetch_add(1);
            while (!stop.load(std::memory_order_relaxed)) h.add(1);
        });
    while (started.load() < counting) std::this_thread::yield();
    int readings = 0, torn = 0;
    std::uint64_t last_total = 0;
    for (; readings < 2000; ++readings) {
        std::uint64_t total = 0, sum = 0;
        for (const aloe::counter_sample& s : read_counters("/test-torn{locality#0/*}/hits")) {
            if (s.name == "/test-torn{locality#0/total}/hits") total = s.value;
            else sum += s.value;
        }
        if (total != sum) ++torn;
        EXPECT_GE(total, last_total) << "a count never goes back";
        last_total = total;
    }
    stop.store(true);
    for (auto& t : pool) t.join();
    EXPECT_EQ(torn, 0) << "of " << readings << " readings, some had a total apart from their instances' sum";
    EXPECT_GE(last_total, std::uint64_t{counting}) << "the threads counted while the readings were made";
}

TEST(RuntimeCounters, WildcardsMatchFullNames) {
    const counter_handle per_worker = register_counter({.object = "test-wild", .name = "time/busy", .unit = counter_unit::nanoseconds});
    const counter_handle one = register_counter({.object = "test-wild", .name = "hits", .instance = "site#1"});
    const counter_handle two = register_counter({.object = "test-wild", .name = "hits", .instance = "site#2"});
    one.add(1);
    two.add(2);
    per_worker.add_for_worker(2, 9);

    const std::vector<counter_sample> sites = read_counters("/test-wild{*}/hits");
    ASSERT_EQ(sites.size(), 2u);
    EXPECT_EQ(sites[0].name, "/test-wild{site#1}/hits");
    EXPECT_EQ(sites[0].value, 1u);
    EXPECT_EQ(sites[1].name, "/test-wild{site#2}/hits");
    EXPECT_EQ(sites[1].value, 2u);

    const std::vector<counter_sample> slots = read_counters("/test-wild{locality#0/*}/time/busy");
    ASSERT_GE(slots.size(), 4u) << "the total and worker slots 0, 1, 2 at least";
    EXPECT_EQ(slots[0].name, "/test-wild{locality#0/total}/time/busy");
    EXPECT_EQ(slots[0].value, 9u);
    EXPECT_EQ(slots[0].unit, counter_unit::nanoseconds);
    bool found_slot = false;
    for (const counter_sample& s : slots) {
        EXPECT_EQ(s.value, s.name == "/test-wild{locality#0/worker-thread#2}/time/busy" || s.name == slots[0].name ? 9u : 0u) << s.name;
        found_slot = found_slot || s.name == "/test-wild{locality#0/worker-thread#2}/time/busy";
    }
    EXPECT_TRUE(found_slot);

    EXPECT_EQ(read_counters("/test-wild{locality#0/worker-thread#*}/time/busy").size(), slots.size() - 1);
    EXPECT_EQ(read_counters("/test-wild*").size(), slots.size() + 2);
    EXPECT_TRUE(read_counters("/test-wild{site#3}/*").empty());
    bool everything = false;
    for (const counter_sample& s : read_counters("*")) everything = everything || s.name == "/test-wild{site#2}/hits";
    EXPECT_TRUE(everything);
}

TEST(RuntimeCounters, UnknownNamesReadEmpty) {
    register_counter({.object = "test-unknown", .name = "hits"});
    register_counter({.object = "test-unknown", .name = "hits", .instance = "site#1"});
    EXPECT_TRUE(read_counter("/test-unknown{locality#0/total}/hits").has_value());
    EXPECT_TRUE(read_counter("/test-unknown{locality#0/worker-thread#4095}/hits").has_value());
    EXPECT_FALSE(read_counter("/test-unknown{locality#0/total}/misses").has_value());
    EXPECT_FALSE(read_counter("/test-unknown{locality#0/worker-thread#4096}/hits").has_value()) << "past the slots";
    EXPECT_FALSE(read_counter("/test-unknown{locality#0/worker-thread#01}/hits").has_value());
    EXPECT_FALSE(read_counter("/test-unknown{locality#0/worker-thread#}/hits").has_value());
    EXPECT_FALSE(read_counter("/test-unknown{locality#0/worker-thread#-1}/hits").has_value());
    EXPECT_FALSE(read_counter("/test-unknown{site#2}/hits").has_value());
    EXPECT_FALSE(read_counter("test.unknown.hits").has_value());
    EXPECT_FALSE(read_counter("/test-unknown{*}/hits").has_value()) << "a pattern is not a name";
    EXPECT_TRUE(read_counters("/test-unknown{nothing*}/hits").empty());
}

TEST(RuntimeCounters, EachReaderHasItsOwnBaseline) {
    const counter_handle h = register_counter({.object = "test-reader", .name = "hits"});
    h.add(100);  // before either reader: in neither's deltas
    aloe::counter_reader first("/test-reader{locality#0/total}/hits");
    aloe::counter_reader second("/test-reader{locality#0/total}/hits");
    h.add(10);
    ASSERT_EQ(first.delta().size(), 1u);
    h.add(5);
    EXPECT_EQ(first.delta().at(0).value, 5u) << "since its own last delta";
    EXPECT_EQ(second.peek().at(0).value, 15u) << "the first reader's deltas moved only its own baseline";
    second.reset();
    h.add(1);
    EXPECT_EQ(second.peek().at(0).value, 1u);
    EXPECT_EQ(second.peek().at(0).value, 1u) << "peek leaves the baseline";
    EXPECT_EQ(first.peek().at(0).value, 1u);
    first.reset();
    EXPECT_EQ(first.peek().at(0).value, 0u);
    EXPECT_EQ(second.delta().at(0).value, 1u) << "the first reader's reset is its own";
    EXPECT_EQ(value("/test-reader{locality#0/total}/hits"), 116u) << "readers never change the counter";

    // A wildcard reader takes in a worker slot that appears later, from 0.
    aloe::counter_reader slots("/test-reader{locality#0/worker-thread#*}/hits");
    const std::size_t before = slots.peek().size();
    h.add_for_worker(before + 7 < max_counter_workers ? static_cast<int>(before) + 7 : 0, 2);
    const std::vector<counter_sample> after = slots.delta();
    ASSERT_GT(after.size(), before);
    std::uint64_t sum = 0;
    for (const counter_sample& s : after) sum += s.value;
    EXPECT_EQ(sum, 2u);
}

TEST(RuntimeCounters, UnitsArePrintedWithValues) {
    const counter_handle h =
        register_counter({.object = "test-units", .name = "time/wait", .unit = counter_unit::nanoseconds, .help = "waiting"});
    h.add(1250);
    const std::optional<counter_sample> s = read_counter("/test-units{locality#0/total}/time/wait");
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(format_sample(*s), "/test-units{locality#0/total}/time/wait 1250 [ns]");
    EXPECT_EQ(aloe::to_string(*s), format_sample(*s));
    EXPECT_EQ(counter_unit_name(counter_unit::count), "count");
    EXPECT_EQ(counter_unit_name(counter_unit::bytes), "bytes");
    EXPECT_EQ(counter_unit_name(counter_unit::ratio), "ppm");
    bool listed = false;
    for (const aloe::counter_description& d : list_counters())
        if (d.name == "/test-units{locality#0/total}/time/wait") {
            listed = true;
            EXPECT_EQ(d.unit, counter_unit::nanoseconds);
            EXPECT_EQ(d.help, "waiting");
            EXPECT_TRUE(d.per_worker);
        }
    EXPECT_TRUE(listed);
}

TEST(RuntimeCounters, GrowsPastAThreadsFirstChunk) {
    const counter_handle first = register_counter({.object = "test-grow", .name = "c0"});
    first.add(1);  // this thread's block exists, with the chunk of `first`
    std::vector<counter_handle> more;
    for (std::uint32_t i = 1; i <= 3 * counters_per_chunk; ++i)
        more.push_back(register_counter({.object = "test-grow", .name = "c" + std::to_string(i)}));
    ASSERT_GE(more.back().id() / counters_per_chunk, first.id() / counters_per_chunk + 2) << "later chunks";
    more.back().add(7);
    more.back().add_for_worker(1, 3);
    EXPECT_EQ(value("/test-grow{locality#0/total}/c" + std::to_string(3 * counters_per_chunk)), 10u);
    EXPECT_EQ(value("/test-grow{locality#0/worker-thread#1}/c" + std::to_string(3 * counters_per_chunk)), 3u);
    EXPECT_EQ(value("/test-grow{locality#0/total}/c0"), 1u);
    EXPECT_EQ(value("/test-grow{locality#0/total}/c1"), 0u);
}

// A thread_local whose destructor counts after the thread's block was folded (thread_locals
// are destroyed in the reverse order of their construction).
struct counts_at_exit {
    counter_handle h;
    ~counts_at_exit() { h.add(10); }
};

TEST(RuntimeCounters, CountsMadeAfterAThreadsFoldAreKept) {
    const counter_handle h = register_counter({.object = "test-late", .name = "hits"});
    std::thread([h] {
        static thread_local counts_at_exit late;
        late.h = h;  // constructed first, destroyed after the block's fold
        h.add(1);
    }).join();
    EXPECT_EQ(value("/test-late{locality#0/total}/hits"), 11u);
}

// Runs `child` in a forked process; its return value is the exit status.
template <class F>
int in_child(F child) {
    const pid_t pid = ::fork();
    if (pid == 0) ::_exit(child());
    int status = 0;
    if (pid < 0 || ::waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
    return WEXITSTATUS(status);
}

TEST(RuntimeCounters, ForkChildStartsFromZero) {
    const counter_handle h = register_counter({.object = "test-fork", .name = "hits"});
    h.add(42);
    h.add_for_worker(2, 8);
    std::thread([h] { h.add(5); }).join();
    aloe::counter_reader reader("/test-fork{locality#0/total}/hits");
    h.add(1);
    const int status = in_child([&]() -> int {
        if (value("/test-fork{locality#0/total}/hits") != 0) return 1;
        if (value("/test-fork{locality#0/worker-thread#2}/hits") != 0) return 2;
        if (reader.peek().at(0).value != 0) return 3;
        h.add(3);
        h.add_for_worker(2, 4);
        if (value("/test-fork{locality#0/total}/hits") != 7) return 4;
        if (reader.delta().at(0).value != 7) return 5;
        return 0;
    });
    EXPECT_EQ(status, 0) << "1, 2: counts left from the parent; 3, 5: the reader; 4: counting in the child";
    EXPECT_EQ(value("/test-fork{locality#0/total}/hits"), 56u) << "the parent keeps its counts";
    EXPECT_EQ(reader.delta().at(0).value, 1u);
}

TEST(RuntimeCounters, AFullRegistryThrows) {
    // In a child: filling the registry would leave this process without room.
    const int status = in_child([]() -> int {
        counter_handle last;
        std::string last_name;
        try {
            for (std::uint32_t i = 0; i <= max_counters; ++i) {
                std::string name = "c" + std::to_string(i);
                last = register_counter({.object = "test-full", .name = name});
                last_name = "/test-full{locality#0/total}/" + name;
            }
            return 1;  // never full
        } catch (const aloe::error& e) {
            if (std::string(e.what()).find("full") == std::string::npos) return 2;
        }
        if (!last.valid() || last.id() != max_counters - 1) return 3;
        last.add(6);
        return value(last_name) == 6 ? 0 : 4;
    });
    EXPECT_EQ(status, 0) << "1: never full; 2: no clear message; 3: the last handle; 4: unreadable";
}

}  // namespace
}  // namespace aloe::runtime

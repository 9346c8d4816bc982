// counters_bench: what a counter update and a counter read cost (issue 13, item 2).
//
//   build/<dir>/bench/micro/counters_bench [--reps R] [--batch B]
//
// Update groups, nanoseconds per add (median, minimum and maximum over R repetitions of a
// batch of B adds per thread; the variants of a group interleaved per repetition):
//   1 thread   counter_handle::add against a shared std::atomic's relaxed fetch_add;
//   2 threads  the same, each thread adding to a different counter (atomic) and to the same
//              one: a handle writes only the calling thread's own lane, so "same" costs what
//              "different" does; a shared atomic's line bounces between the cores.
// Every add goes through a noinline function, so each one pays the thread-local load (as a
// call from another function would) and both sides pay the same call.
// Read group, nanoseconds per read of one total while N threads hold a block (N = 1, 2, 8,
// 32): the registry's lock plus a sum over the N blocks; by key (what a counter_reader does
// per instance) and by full name (a lookup first).
// A benchmark, not a test: nothing is asserted, and the figures depend on the machine. On
// a 2-core machine the 2-thread groups need both cores: run it on a quiet machine.
#include "runtime/counters.hpp"

#include <aloe/stats.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;
using aloe::runtime::counter_handle;

struct alignas(64) padded_atomic {
    std::atomic<std::uint64_t> value{0};
};

[[gnu::noinline]] void handle_add(const counter_handle& h) { h.add(1); }
[[gnu::noinline]] void atomic_add(std::atomic<std::uint64_t>& a) { a.fetch_add(1, std::memory_order_relaxed); }

double ns_since(clock_type::time_point t0, std::uint64_t ops) {
    return std::chrono::duration<double, std::nano>(clock_type::now() - t0).count() / static_cast<double>(ops);
}

// Runs `body(thread index)` on `threads` threads started together; the slowest thread's
// nanoseconds per op.
double run_threads(int threads, std::uint64_t batch, const std::function<void(int)>& body) {
    std::atomic<int> ready{0};
    std::atomic<bool> go{false};
    std::vector<double> ns(static_cast<std::size_t>(threads));
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            ready.fetch_add(1);
            while (!go.load(std::memory_order_acquire)) {
            }
            const auto t0 = clock_type::now();
            body(t);
            ns[static_cast<std::size_t>(t)] = ns_since(t0, batch);
        });
    while (ready.load() < threads) std::this_thread::yield();
    go.store(true, std::memory_order_release);
    for (auto& t : pool) t.join();
    return *std::max_element(ns.begin(), ns.end());
}

struct variant {
    std::string group, name;
    std::function<double()> run;  // one batch: ns per op
    std::vector<double> ns;
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    int reps = 21;
    std::uint64_t batch = 2'000'000;
    for (int i = 1; i < argc; ++i) {
        const bool has_value = i + 1 < argc;
        if (std::strcmp(argv[i], "--reps") == 0 && has_value) {
            reps = std::max(1, std::atoi(argv[++i]));
        } else if (std::strcmp(argv[i], "--batch") == 0 && has_value) {
            batch = std::max<std::uint64_t>(1000, std::strtoull(argv[++i], nullptr, 10));
        } else {
            std::fprintf(stderr, "usage: %s [--reps R] [--batch B]\n", argv[0]);
            return 2;
        }
    }

    using aloe::runtime::register_counter;
    const counter_handle a = register_counter({.object = "bench", .name = "a"});
    const counter_handle b = register_counter({.object = "bench", .name = "b"});
    padded_atomic shared_a, shared_b;

    std::vector<variant> variants;
    const auto add = [&](std::string group, std::string name, std::function<double()> run) {
        variants.push_back({std::move(group), std::move(name), std::move(run), {}});
    };
    add("update, 1 thread", "counter_handle::add", [&] {
        return run_threads(1, batch, [&](int) { for (std::uint64_t i = 0; i < batch; ++i) handle_add(a); });
    });
    add("update, 1 thread", "atomic fetch_add", [&] {
        return run_threads(1, batch, [&](int) { for (std::uint64_t i = 0; i < batch; ++i) atomic_add(shared_a.value); });
    });
    add("update, 2 threads", "handle, different counters", [&] {
        return run_threads(2, batch, [&](int t) {
            const counter_handle& h = t == 0 ? a : b;
            for (std::uint64_t i = 0; i < batch; ++i) handle_add(h);
        });
    });
    add("update, 2 threads", "handle, same counter", [&] {
        return run_threads(2, batch, [&](int) { for (std::uint64_t i = 0; i < batch; ++i) handle_add(a); });
    });
    add("update, 2 threads", "atomic, different lines", [&] {
        return run_threads(2, batch, [&](int t) {
            std::atomic<std::uint64_t>& x = t == 0 ? shared_a.value : shared_b.value;
            for (std::uint64_t i = 0; i < batch; ++i) atomic_add(x);
        });
    });
    add("update, 2 threads", "atomic, same counter", [&] {
        return run_threads(2, batch, [&](int) { for (std::uint64_t i = 0; i < batch; ++i) atomic_add(shared_a.value); });
    });

    // Interleaved: repetition r runs every update variant once, in an order rotated by r.
    for (int r = 0; r < reps; ++r)
        for (std::size_t k = 0; k < variants.size(); ++k) {
            variant& v = variants[(k + static_cast<std::size_t>(r)) % variants.size()];
            v.ns.push_back(v.run());
        }

    std::printf("| group | variant | ns/op median | min | max |\n|---|---|---|---|---|\n");
    for (const variant& v : variants)
        std::printf("| %s | %s | %.2f | %.2f | %.2f |\n", v.group.c_str(), v.name.c_str(), median(v.ns),
                    *std::min_element(v.ns.begin(), v.ns.end()), *std::max_element(v.ns.begin(), v.ns.end()));

    // Reads: N parked threads that counted once each (so N blocks are live).
    const counter_handle c = register_counter({.object = "bench", .name = "read"});
    const std::string name = "/bench{locality#0/total}/read";
    const aloe::runtime::counter_key key = aloe::runtime::find_counters(name).at(0).key;
    std::printf("\n| threads holding a block | read by key, ns | read by name, ns | total |\n|---|---|---|---|\n");
    for (const int n : {1, 2, 8, 32}) {
        std::atomic<int> counted{0};
        std::atomic<bool> leave{false};
        std::vector<std::thread> parked;
        for (int t = 0; t < n; ++t)
            parked.emplace_back([&] {
                c.add(1);
                counted.fetch_add(1);
                while (!leave.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
            });
        while (counted.load() < n) std::this_thread::yield();
        const std::uint64_t reads = std::max<std::uint64_t>(1000, batch / 200);
        std::vector<double> by_key, by_name;
        std::uint64_t value = 0;
        for (int r = 0; r < reps; ++r) {
            auto t0 = clock_type::now();
            for (std::uint64_t i = 0; i < reads; ++i) aloe::runtime::read_counter_values({&key, 1}, {&value, 1});
            by_key.push_back(ns_since(t0, reads));
            t0 = clock_type::now();
            for (std::uint64_t i = 0; i < reads; ++i) value = aloe::read_counter(name)->value;
            by_name.push_back(ns_since(t0, reads));
        }
        std::printf("| %d | %.1f | %.1f | %llu |\n", n, median(by_key), median(by_name),
                    static_cast<unsigned long long>(value));
        leave.store(true);
        for (auto& t : parked) t.join();
    }
    return 0;
}

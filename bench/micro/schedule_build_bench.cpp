// schedule_build_bench: what it costs to make an aloe::schedule (issue 13, item 6).
//
//   build/<dir>/bench/micro/schedule_build_bench [--reps R] [--batch B]
//
// Three groups, each a nanoseconds-per-operation figure (median, minimum and maximum over R
// repetitions of one batch of B operations, variants interleaved per repetition):
//   build   the builders (schedule::dynamic(4), ::hybrid(0.8, 4), …);
//   parse   the constructor from a string, for comparison (what a builder cost when it
//           printed its string and parsed it back);
//   call    an empty loop (first == last) through the C API, aloe::parallel_for and an
//           aloe::loop_handle constructed (and destroyed) with no thread asking, once with a
//           schedule string and once with a schedule value built beforehand:
//           the difference is what the string costs per call (a parse, or a cache hit).
//           An empty loop does the site lookup and counts an empty call, no fork.
// A benchmark, not a test: nothing is asserted, and the figures depend on the machine.
#include <aloe/aloe.h>
#include <aloe/aloe.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

// Keeps the compiler from dropping a value it could prove unused.
template <class T>
void escape(const T& value) {
    asm volatile("" : : "g"(&value) : "memory");
}

struct variant {
    std::string group;
    std::string name;
    std::function<void(int)> run;  // runs `batch` operations
    std::vector<double> ns_per_op;
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t m = v.size() / 2;
    return v.size() % 2 != 0 ? v[m] : (v[m - 1] + v[m]) / 2;
}

void empty_c_body(int64_t, int64_t, int, void*) {}

// A builder per kind, with its arguments read through a volatile so that nothing is folded.
volatile std::int64_t chunk_arg = 4;
volatile double fs_arg = 0.8;

std::vector<variant> make_variants() {
    using aloe::schedule;
    std::vector<variant> v;
    auto build = [&v](std::string name, std::function<schedule()> make) {
        v.push_back({"build", std::move(name), [make](int batch) {
                         for (int i = 0; i < batch; ++i) escape(make());
                     }, {}});
    };
    build("static_cyclic(4)", [] { return schedule::static_cyclic(chunk_arg); });
    build("dynamic(4)", [] { return schedule::dynamic(chunk_arg); });
    build("guided(4)", [] { return schedule::guided(chunk_arg); });
    build("hybrid(0.8, 4)", [] { return schedule::hybrid(fs_arg, chunk_arg); });
    build("staggered(0.8, 4, mutex)",
          [] { return schedule::staggered(fs_arg, chunk_arg, aloe::queue_claim::mutex); });
    build("weighted(0.8, 4)", [] { return schedule::weighted(fs_arg, chunk_arg); });
    build("tasklets(32, 0.8, 4, 0)", [] { return schedule::tasklets(32, fs_arg, 4.0, false); });
    build("adaptive(nlopt, 4, pess.)",
          [] { return schedule::adaptive(aloe::adaptive_search::nlopt, chunk_arg, aloe::delay_model::pessimistic); });

    for (const char* text : {"dynamic,chunk=4", "hybrid,fs=0.8,chunk=4",
                             "tasklets,n=32,fs=0.8,skew=4,locality=0"}) {
        v.push_back({"parse", text, [text](int batch) {
                         for (int i = 0; i < batch; ++i) escape(schedule(text));
                     }, {}});
    }

    static const schedule dynamic4 = schedule::dynamic(4);
    v.push_back({"call", "C aloe_parallel_for, string", [](int batch) {
                     for (int i = 0; i < batch; ++i)
                         escape(aloe_parallel_for_site(0, 0, 1, "dynamic,chunk=4", "bench/c-string", &empty_c_body,
                                                       nullptr));
                 }, {}});
    v.push_back({"call", "C aloe_parallel_for, string, no site", [](int batch) {
                     for (int i = 0; i < batch; ++i)
                         escape(aloe_parallel_for(0, 0, 1, "dynamic,chunk=4", &empty_c_body, nullptr));
                 }, {}});
    v.push_back({"call", "C aloe_parallel_for, NULL (env)", [](int batch) {
                     for (int i = 0; i < batch; ++i)
                         escape(aloe_parallel_for_site(0, 0, 1, nullptr, "bench/c-env", &empty_c_body, nullptr));
                 }, {}});
    v.push_back({"call", "C++ parallel_for, string", [](int batch) {
                     for (int i = 0; i < batch; ++i) aloe::parallel_for(0, 0, "dynamic,chunk=4", [](std::int64_t) {});
                 }, {}});
    v.push_back({"call", "C++ parallel_for, value", [](int batch) {
                     for (int i = 0; i < batch; ++i) aloe::parallel_for(0, 0, dynamic4, [](std::int64_t) {});
                 }, {}});
    v.push_back({"call", "C++ loop_handle, string", [](int batch) {
                     for (int i = 0; i < batch; ++i) aloe::loop_handle h(0, 0, "dynamic,chunk=4");
                 }, {}});
    v.push_back({"call", "C++ loop_handle, value", [](int batch) {
                     for (int i = 0; i < batch; ++i) aloe::loop_handle h(0, 0, dynamic4);
                 }, {}});
    return v;
}

int parse_flag(int argc, char** argv, int& i, const char* flag) {
    if (i + 1 >= argc) {
        std::fprintf(stderr, "schedule_build_bench: %s needs a value\n", flag);
        std::exit(2);
    }
    char* end = nullptr;
    const long value = std::strtol(argv[++i], &end, 10);
    if (*end != '\0' || value < 1 || value > 100'000'000) {
        std::fprintf(stderr, "schedule_build_bench: %s=%s is not an integer in [1, 1e8]\n", flag, argv[i]);
        std::exit(2);
    }
    return static_cast<int>(value);
}

}  // namespace

int main(int argc, char** argv) {
    int reps = 31;
    int batch = 20'000;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--reps") == 0) reps = parse_flag(argc, argv, i, "--reps");
        else if (std::strcmp(argv[i], "--batch") == 0) batch = parse_flag(argc, argv, i, "--batch");
        else {
            std::fprintf(stderr, "usage: schedule_build_bench [--reps R] [--batch B]\n");
            return 2;
        }
    }
    std::vector<variant> variants = make_variants();
    for (variant& v : variants) v.run(std::max(1, batch / 10));  // warm-up: team, sites, caches

    using clock = std::chrono::steady_clock;
    for (int r = 0; r < reps; ++r) {
        // Rotated order, so drift falls on every variant alike.
        for (std::size_t k = 0; k < variants.size(); ++k) {
            variant& v = variants[(k + static_cast<std::size_t>(r)) % variants.size()];
            const auto t0 = clock::now();
            v.run(batch);
            const auto t1 = clock::now();
            v.ns_per_op.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / batch);
        }
    }
    std::printf("%-6s %-40s %10s %10s %10s\n", "group", "variant", "median ns", "min ns", "max ns");
    for (const variant& v : variants) {
        std::printf("%-6s %-40s %10.1f %10.1f %10.1f\n", v.group.c_str(), v.name.c_str(), median(v.ns_per_op),
                    *std::min_element(v.ns_per_op.begin(), v.ns_per_op.end()),
                    *std::max_element(v.ns_per_op.begin(), v.ns_per_op.end()));
    }
    std::printf("(%d repetitions of %d operations each)\n", reps, batch);
    return 0;
}

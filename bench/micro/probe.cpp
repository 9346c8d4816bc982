// Callgrind probe: one variant, K loops, no timing; instruction counts come from valgrind.
// The loops' body is an empty, not-inlined call, defined in this file beside them.
#include "probe.hpp"

#include <aloe/parallel_for.hpp>
#include <aloe/schedule.hpp>
#include <aloe/team.hpp>

#include <omp.h>

#include <cstdint>
#include <functional>
#include <iostream>
#include <string>
#include <string_view>

namespace aloe_overhead {
namespace {

/// An empty body for the callgrind probes: one call the compiler cannot drop.
[[gnu::noinline]] void touch(std::int64_t i) { asm volatile("" : : "r"(i) : "memory"); }

}  // namespace

int callgrind_probe(const options& o) {
    const int p = o.threads;
    const std::int64_t n = o.probe_iters > 0 ? o.probe_iters : 64 * static_cast<std::int64_t>(p);
    omp_set_num_threads(p);
    aloe::team team(p);
    const auto body = [](std::int64_t i) { touch(i); };
    std::function<void()> one;
    const std::string& v = o.probe;
    auto aloe_loop = [&](const char* spec) {
        one = [&team, s = aloe::schedule(spec), n, body] {
            aloe::parallel_for(team, 0, n, s, body, aloe::loop_site(std::string_view{"probe"}));
        };
    };
    if (v == "serial") one = [n] { for (std::int64_t i = 0; i < n; ++i) touch(i); };
    else if (v == "gomp-parallel") one = [] {
#pragma omp parallel
        touch(0);
    };
    else if (v == "gomp-static") one = [n] {
#pragma omp parallel for schedule(static)
        for (std::int64_t i = 0; i < n; ++i) touch(i);
    };
    else if (v == "gomp-dynamic") one = [n] {
#pragma omp parallel for schedule(dynamic, 1)
        for (std::int64_t i = 0; i < n; ++i) touch(i);
    };
    else if (v == "gomp-guided") one = [n] {
#pragma omp parallel for schedule(guided, 1)
        for (std::int64_t i = 0; i < n; ++i) touch(i);
    };
    else if (v == "aloe-static") aloe_loop("static");
    else if (v == "aloe-dynamic") aloe_loop("dynamic,chunk=1");
    else if (v == "aloe-guided") aloe_loop("guided,chunk=1");
    else if (v == "aloe-hybrid") aloe_loop("hybrid,fs=0.5,chunk=1");
    else if (v == "aloe-staggered") aloe_loop("staggered,fs=0,chunk=1,queue=atomic");
    else if (v == "aloe-staggered-mutex") aloe_loop("staggered,fs=0,chunk=1,queue=mutex");
    else usage_error("--callgrind-probe: unknown variant '" + v + "'");
    for (int k = 0; k < o.probe_loops; ++k) one();
    std::cout << "probe " << v << " loops " << o.probe_loops << " threads " << p << " iterations " << n << "\n";
    return 0;
}

}  // namespace aloe_overhead

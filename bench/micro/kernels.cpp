// The measured kernels: the reference, aloe's and libgomp's loop constructs, all with the
// same delay() body in this one file (so each calls the very same code), and the test groups
// built from them. Compiled with the same flags as the rest of aloe_overhead (CMakeLists.txt).
#include "kernels.hpp"

#include <aloe/parallel_for.hpp>

#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>

namespace aloe_overhead {
namespace {

/// EPCC's delay(): a dependent chain of float adds the compiler can neither remove nor
/// vectorise. Not inlined, so both runtimes' bodies call the very same code.
[[gnu::noinline]] void delay(int n) {
    float a = 0.0f;
    for (int i = 0; i < n; ++i) {
        a += static_cast<float>(i);
        asm volatile("" : "+x"(a));
    }
    if (a < 0.0f) std::printf("%f\n", static_cast<double>(a));
}

/// Chunks a guided schedule hands out (ceil(remaining/p), at least c: libgomp and aloe alike).
double guided_chunks(std::int64_t n, std::int64_t p, std::int64_t c) {
    double count = 0;
    for (std::int64_t left = n; left > 0; ++count) left -= std::min(left, std::max(c, (left + p - 1) / p));
    return count;
}

/// Chunks of c in worker blocks (staggered with fs=0: every worker's block cut separately).
double blocked_chunks(std::int64_t n, std::int64_t p, std::int64_t c) {
    double count = 0;
    for (std::int64_t t = 0; t < p; ++t) {
        const std::int64_t size = n * (t + 1) / p - n * t / p;
        count += static_cast<double>((size + c - 1) / c);
    }
    return count;
}

variant make_ref(int dl, std::int64_t per_construct) {
    variant v;
    v.name = "reference";
    v.run = [dl, per_construct](int inner) {
        for (int k = 0; k < inner; ++k)
            for (std::int64_t i = 0; i < per_construct; ++i) delay(dl);
    };
    return v;
}

variant make_aloe(aloe::team& team, const std::string& spec, std::int64_t n, int dl, std::string peer,
                  std::int64_t chunk, double units) {
    variant v;
    v.name = "aloe " + spec;
    v.rt = runtime_kind::aloe;
    v.peer = std::move(peer);
    v.chunk = chunk;
    v.units = units;
    // Parsed once, outside the timed loop, as gomp's schedule is fixed at compile time. Each
    // variant has its own loop site, so no variant sees another's history.
    v.run = [&team, s = aloe::schedule(spec), site_name = v.name, n, dl](int inner) {
        const aloe::loop_site site(std::string_view{site_name});
        for (int k = 0; k < inner; ++k) aloe::parallel_for(team, 0, n, s, [dl](std::int64_t) { delay(dl); }, site);
    };
    return v;
}

enum class omp_kind { parallel, static_block, dynamic, guided };

std::function<void(int)> gomp_loop(omp_kind kind, std::int64_t n, int dl, std::int64_t c) {
    switch (kind) {
    case omp_kind::parallel:
        return [dl](int inner) {
            for (int k = 0; k < inner; ++k) {
#pragma omp parallel
                delay(dl);
            }
        };
    case omp_kind::static_block:
        return [n, dl](int inner) {
            for (int k = 0; k < inner; ++k) {
#pragma omp parallel for schedule(static)
                for (std::int64_t i = 0; i < n; ++i) delay(dl);
            }
        };
    case omp_kind::dynamic:
        return [n, dl, c](int inner) {
            for (int k = 0; k < inner; ++k) {
#pragma omp parallel for schedule(dynamic, c)
                for (std::int64_t i = 0; i < n; ++i) delay(dl);
            }
        };
    case omp_kind::guided:
        return [n, dl, c](int inner) {
            for (int k = 0; k < inner; ++k) {
#pragma omp parallel for schedule(guided, c)
                for (std::int64_t i = 0; i < n; ++i) delay(dl);
            }
        };
    }
    return {};
}

variant make_gomp(const std::string& name, omp_kind kind, std::int64_t n, int dl, std::int64_t c, double units) {
    variant v;
    v.name = name;
    v.rt = runtime_kind::gomp;
    v.chunk = c;
    v.units = units;
    v.run = gomp_loop(kind, n, dl, c);
    return v;
}

}  // namespace

double delay_iters_per_us() {
    constexpr int len = 20000;
    double best = 1e300;
    for (int k = 0; k < 31; ++k) {
        const double t0 = now_us();
        delay(len);
        best = std::min(best, now_us() - t0);
    }
    return len / best;
}

void gomp_spin_construct(int threads) {
    const int p = threads;
#pragma omp parallel for schedule(static)
    for (int i = 0; i < p; ++i) delay(1);
}

void aloe_spin_construct(aloe::team& team, int threads, const aloe::schedule& st) {
    const int p = threads;
    aloe::parallel_for(team, 0, p, st, [](std::int64_t) { delay(1); }, aloe::loop_site(std::string_view{"spin"}));
}

std::vector<group> make_groups(const options& opt, aloe::team& team, int fork_dl, int balanced_dl, int chunk_dl) {
    const std::int64_t pp = opt.threads;
    const std::int64_t n = static_cast<std::int64_t>(opt.iters_per_thread) * pp;
    std::vector<group> groups;
    if (opt.fork) {
        group g{"fork", {}};
        g.v.push_back(make_ref(fork_dl, 1));
        g.v.push_back(make_gomp("gomp parallel", omp_kind::parallel, pp, fork_dl, 0, 1));
        g.v.push_back(make_gomp("gomp parallel for static", omp_kind::static_block, pp, fork_dl, 0, 1));
        g.v.push_back(make_aloe(team, "static", pp, fork_dl, "gomp parallel for static", 0, 1));
        groups.push_back(std::move(g));
    }
    if (opt.balanced) {
        group g{"balanced", {}};
        g.v.push_back(make_ref(balanced_dl, n / pp));
        g.v.push_back(make_gomp("gomp static", omp_kind::static_block, n, balanced_dl, 0, 1));
        for (const char* s : {"static", "hybrid,fs=1", "staggered,fs=1"})
            g.v.push_back(make_aloe(team, s, n, balanced_dl, "gomp static", 0, 1));
        groups.push_back(std::move(g));
    }
    if (opt.chunk) {
        group g{"chunk", {}};
        g.v.push_back(make_ref(chunk_dl, n / pp));
        const int dl = chunk_dl;
        for (std::int64_t c = 1; c <= 128; c *= 2) {
            const std::string cs = std::to_string(c);
            const double dyn = static_cast<double>((n + c - 1) / c), gui = guided_chunks(n, pp, c);
            const std::string gdyn = "gomp dynamic," + cs, ggui = "gomp guided," + cs;
            const std::string stag = "staggered,fs=0,chunk=" + cs + ",queue=";
            g.v.push_back(make_gomp(gdyn, omp_kind::dynamic, n, dl, c, dyn));
            g.v.push_back(make_gomp(ggui, omp_kind::guided, n, dl, c, gui));
            g.v.push_back(make_aloe(team, "dynamic,chunk=" + cs, n, dl, gdyn, c, dyn));
            g.v.push_back(make_aloe(team, "guided,chunk=" + cs, n, dl, ggui, c, gui));
            g.v.push_back(make_aloe(team, "hybrid,fs=0.5,chunk=" + cs, n, dl, gdyn, c,
                                    static_cast<double>(pp + (n - n / 2 + c - 1) / c)));
            g.v.push_back(make_aloe(team, stag + "atomic", n, dl, gdyn, c, blocked_chunks(n, pp, c)));
            g.v.push_back(make_aloe(team, stag + "mutex", n, dl, "aloe " + stag + "atomic", c,
                                    blocked_chunks(n, pp, c)));
            g.v.push_back(make_aloe(team, "tasklets,n=" + std::to_string(n / c), n, dl, gdyn, c,
                                    static_cast<double>(n / c)));
        }
        groups.push_back(std::move(g));
    }
    return groups;
}

}  // namespace aloe_overhead

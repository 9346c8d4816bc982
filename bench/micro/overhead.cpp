// aloe_overhead: the cost of a loop construct, aloe against libgomp, in the style of the
// EPCC OpenMP micro-benchmarks (syncbench, schedbench). See README.md in this folder.
//
// Method (EPCC): a test times a batch of `inner` loop constructs whose body does delay(d)
// per iteration, and a reference times the same work run by one thread divided over the
// threads (for a loop of n iterations on p threads: n/p delays). The overhead of one
// construct is test − reference; per chunk it is that divided by the chunks the construct
// hands out. Every variant of a test group runs once per repetition, in a rotated order, so
// drift hits all alike; medians over the repetitions are reported, with min, max and the
// machine's noise (the spread of the reference).
//
// Fairness: same thread count for both runtimes; neither is bound (binding is whatever
// OMP_PROC_BIND / ALOE_PROC_BIND say, both unset by default); both are warmed up before
// timing and before each timed batch; after each batch the program sleeps longer than
// either runtime's idle-spin phase (measured at start), so one runtime's spinning workers
// never take the cores from the other's (--no-settle turns this off).
#include <aloe/parallel_for.hpp>
#include <aloe/schedule.hpp>
#include <aloe/team.hpp>
#include <aloe/version.hpp>

#include <omp.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

extern char** environ;  // listed, never changed: the OMP_/GOMP_/ALOE_ settings in effect

namespace {

// ---------------------------------------------------------------------------------------
// Work and clocks

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

/// An empty body for the callgrind probes: one call the compiler cannot drop.
[[gnu::noinline]] void touch(std::int64_t i) { asm volatile("" : : "r"(i) : "memory"); }

double now_us() {
    using clock = std::chrono::steady_clock;
    return std::chrono::duration<double, std::micro>(clock::now().time_since_epoch()).count();
}

double process_cpu_us() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) * 1e-3;
}

void sleep_us(double us) {
    if (us > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::micro>(us));
}

double quantile(std::vector<double> v, double q) {
    if (v.empty()) return std::nan("");
    std::sort(v.begin(), v.end());
    const double pos = q * static_cast<double>(v.size() - 1);
    const auto lo = static_cast<std::size_t>(pos);
    const std::size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}
double median(const std::vector<double>& v) { return quantile(v, 0.5); }

/// Delay iterations per microsecond: the fastest of several timed runs (EPCC calibrates
/// the same way; the fastest is the one no interruption inflated).
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

// ---------------------------------------------------------------------------------------
// Options

struct options {
    int threads = 0;
    int reps = 51;
    bool quick = false;
    std::string out;
    bool fork = true, balanced = true, chunk = true;
    bool settle = true;
    double settle_us = -1;  // < 0: measured
    double target_us = 3000;
    int iters_per_thread = 1024;
    double fork_delay_us = 0.1;
    double balanced_delay_us = 0.25;
    double chunk_delay_us = 0.1;
    std::string probe;  // --callgrind-probe
    int probe_loops = 1000;
    int probe_iters = 0;  // 0: 64 per thread
};

[[noreturn]] void usage_error(const std::string& what) {
    std::cerr << "aloe_overhead: " << what << " (see --help)\n";
    std::exit(2);
}

void print_help() {
    std::cout <<
        R"(aloe_overhead: EPCC-style loop overheads, aloe against libgomp, interleaved.

  --threads N        threads for both runtimes (default: nproc)
  --reps R           outer repetitions, every variant once per repetition (default 51)
  --quick            smoke run: 5 repetitions, short batches
  --out DIR          results folder (default bench/results/overhead-YYYYMMDD)
  --only LIST        fork, balanced, chunk (comma-separated; default all)
  --no-settle        do not sleep between variants (see README: unfair on few cores)
  --settle-us US     sleep this long between variants instead of the measured value
  --target-ms MS     length of one timed batch (default 3)
  --iters-per-thread K   schedbench's itersperthr (default 1024)
  --callgrind-probe V    run variant V --probe-loops times and exit (for callgrind);
                     V: serial, gomp-parallel, gomp-static, gomp-dynamic, gomp-guided,
                        aloe-static, aloe-dynamic, aloe-guided, aloe-hybrid,
                        aloe-staggered, aloe-staggered-mutex
  --probe-loops K    loops run by a probe (default 1000)
  --probe-iters N    iterations per probe loop (default 64 per thread)
)";
}

int parse_int(const std::string& flag, const char* v, int lo, int hi) {
    char* end = nullptr;
    errno = 0;
    const long x = std::strtol(v, &end, 10);
    if (end == v || *end != '\0' || errno != 0 || x < lo || x > hi)
        usage_error(flag + " needs an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got '" +
                    v + "'");
    return static_cast<int>(x);
}

double parse_double(const std::string& flag, const char* v, double lo, double hi) {
    char* end = nullptr;
    errno = 0;
    const double x = std::strtod(v, &end);
    if (end == v || *end != '\0' || errno != 0 || !(x >= lo && x <= hi))
        usage_error(flag + " needs a number in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got '" +
                    v + "'");
    return x;
}

std::string today() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    localtime_r(&t, &tm);
    char buf[16];
    std::strftime(buf, sizeof buf, "%Y%m%d", &tm);
    return buf;
}

options parse_options(int argc, char** argv) {
    options o;
    o.threads = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
    bool reps_given = false, target_given = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> const char* {
            if (i + 1 >= argc) usage_error(a + " needs a value");
            return argv[++i];
        };
        if (a == "--help" || a == "-h") {
            print_help();
            std::exit(0);
        } else if (a == "--threads") {
            o.threads = parse_int(a, value(), 1, 4096);
        } else if (a == "--reps") {
            o.reps = parse_int(a, value(), 1, 100000);
            reps_given = true;
        } else if (a == "--quick") {
            o.quick = true;
        } else if (a == "--out") {
            o.out = value();
            if (o.out.empty()) usage_error("--out needs a folder");
        } else if (a == "--only") {
            o.fork = o.balanced = o.chunk = false;
            std::stringstream list(value());
            for (std::string item; std::getline(list, item, ',');) {
                if (item == "fork") o.fork = true;
                else if (item == "balanced") o.balanced = true;
                else if (item == "chunk") o.chunk = true;
                else usage_error("--only takes fork, balanced or chunk, got '" + item + "'");
            }
        } else if (a == "--no-settle") {
            o.settle = false;
        } else if (a == "--settle-us") {
            o.settle_us = parse_double(a, value(), 0, 1e7);
        } else if (a == "--target-ms") {
            o.target_us = 1000 * parse_double(a, value(), 0.01, 10000);
            target_given = true;
        } else if (a == "--iters-per-thread") {
            o.iters_per_thread = parse_int(a, value(), 128, 1 << 20);
        } else if (a == "--callgrind-probe") {
            o.probe = value();
        } else if (a == "--probe-loops") {
            o.probe_loops = parse_int(a, value(), 1, 100000000);
        } else if (a == "--probe-iters") {
            o.probe_iters = parse_int(a, value(), 1, 100000000);
        } else {
            usage_error("unknown flag '" + a + "'");
        }
    }
    if (o.quick) {
        if (!reps_given) o.reps = 5;
        if (!target_given) o.target_us = 500;
    }
    if (o.out.empty()) o.out = "bench/results/overhead-" + today();
    return o;
}

// ---------------------------------------------------------------------------------------
// Variants and groups

enum class runtime_kind { ref, gomp, aloe };

struct variant {
    std::string name;   // e.g. "aloe dynamic,chunk=4", "gomp dynamic,4", "reference"
    runtime_kind rt = runtime_kind::ref;
    std::string peer;   // the variant it is compared with ("" for none)
    std::int64_t chunk = 0;
    double units = 1;   // chunks (or loops) per construct, for the per-unit cost
    std::function<void(int)> run;  // runs `inner` constructs
    int inner = 1;
    std::vector<double> us;        // per-construct time of each repetition, µs
};

struct group {
    std::string test;  // fork | balanced | chunk
    std::vector<variant> v;  // v.front() is the reference
};

struct runner {
    const options& opt;
    double settle_us = 0;

    void settle() const { sleep_us(settle_us); }

    /// Times `inner` constructs after one untimed construct (it wakes sleeping workers).
    double time_batch(variant& v, int inner) const {
        v.run(1);
        const double t0 = now_us();
        v.run(inner);
        return (now_us() - t0) / inner;
    }

    void run(group& g) const {
        const std::size_t k = g.v.size();
        // Warm-up and batch size: each variant gets enough constructs per batch for about
        // target_us (EPCC sizes innerreps the same way).
        for (variant& v : g.v) {
            std::vector<double> t;
            for (int i = 0; i < 3; ++i) {
                t.push_back(time_batch(v, 1));
                settle();
            }
            v.inner = static_cast<int>(std::clamp(std::ceil(opt.target_us / std::max(median(t), 0.01)), 1.0, 1e7));
        }
        std::cerr << "  " << g.test << ": " << k << " variants x " << opt.reps << " reps " << std::flush;
        const double t0 = now_us();
        for (int r = 0; r < opt.reps; ++r) {
            for (std::size_t j = 0; j < k; ++j) {
                variant& v = g.v[(j + static_cast<std::size_t>(r)) % k];
                v.us.push_back(time_batch(v, v.inner));
                settle();
            }
            std::cerr << '.' << std::flush;
        }
        std::cerr << " " << std::lround((now_us() - t0) / 1e6) << " s\n";
    }
};

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

// ---------------------------------------------------------------------------------------
// Idle spinning: how long each runtime's workers burn a core after a loop

/// CPU time (µs per worker) the workers use in the `window_us` after one construct: the
/// length of their spin (and yield) phase before they sleep.
double idle_spin_us(const std::function<void()>& construct, int threads, double window_us, int tries) {
    if (threads < 2) return 0;
    std::vector<double> v;
    for (int k = 0; k < tries; ++k) {
        construct();
        const double c0 = process_cpu_us();
        sleep_us(window_us);
        v.push_back((process_cpu_us() - c0) / (threads - 1));
    }
    return median(v);
}

// ---------------------------------------------------------------------------------------
// Placement: do a runtime's threads share a CPU in the loops after they slept?

/// Distinct CPUs among cpu[0..p).
int distinct_cpus(const std::vector<int>& cpu) {
    std::vector<int> c = cpu;
    std::sort(c.begin(), c.end());
    return static_cast<int>(std::unique(c.begin(), c.end()) - c.begin());
}

/// Share of loops in which the team's threads ran on fewer CPUs than they could have: after
/// a sleep of `pause_us` (all workers asleep), `loops` back-to-back loops of one iteration per
/// thread, each recording the CPU it ran on; `rounds` times.
double shared_cpu_share(const std::function<void(std::vector<int>&)>& loop, int threads, double pause_us, int rounds,
                        int loops) {
    const int ncpu = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
    const int want = std::min(threads, ncpu);
    std::vector<int> cpu(static_cast<std::size_t>(threads), -1);
    int shared = 0;
    for (int r = 0; r < rounds; ++r) {
        sleep_us(pause_us);
        for (int k = 0; k < loops; ++k) {
            loop(cpu);
            shared += distinct_cpus(cpu) < want ? 1 : 0;
        }
    }
    return static_cast<double>(shared) / (rounds * loops);
}

// ---------------------------------------------------------------------------------------
// Output

std::string run_command(const std::string& cmd) {
    std::string out;
    if (FILE* f = popen((cmd + " 2>/dev/null").c_str(), "r")) {
        char buf[512];
        while (std::fgets(buf, sizeof buf, f)) out += buf;
        pclose(f);
    }
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
    return out.empty() ? "(not available)" : out;
}

/// The OMP_*, GOMP_*, ALOE_* and KMP_* variables of this process, as NAME=value.
std::vector<std::string> runtime_environment() {
    std::vector<std::string> out;
    for (char** e = environ; *e != nullptr; ++e) {
        const std::string s = *e;
        if (s.rfind("OMP_", 0) == 0 || s.rfind("GOMP_", 0) == 0 || s.rfind("ALOE_", 0) == 0 || s.rfind("KMP_", 0) == 0)
            out.push_back(s);
    }
    std::sort(out.begin(), out.end());
    return out;
}

/// "unbound", or the binding variables that are set.
std::string binding_text() {
    std::string b;
    for (const std::string& s : runtime_environment())
        if (s.rfind("OMP_PROC_BIND=", 0) == 0 || s.rfind("ALOE_PROC_BIND=", 0) == 0 || s.rfind("OMP_PLACES=", 0) == 0)
            b += (b.empty() ? "" : ", ") + s;
    return b.empty() ? "unbound" : "bound by " + b;
}

/// A path as written into the results: relative to the working directory when under it,
/// else its file name, so no machine path reaches a committed file.
std::string portable_path(const std::string& p) {
    namespace fs = std::filesystem;
    if (p.empty() || p[0] != '/') return p;
    std::error_code ec;
    const fs::path rel = fs::path(p).lexically_relative(fs::current_path(ec));
    if (!ec && !rel.empty() && *rel.begin() != "..") return rel.string();
    return fs::path(p).filename().string();
}

std::string shell_quote(const std::string& s) {
    if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=,./:+") ==
                          std::string::npos)
        return s;
    std::string q = "'";
    for (char ch : s) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    return q + "'";
}

std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"") == std::string::npos) return s;
    std::string q = "\"";
    for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return q + "\"";
}

std::string fmt(double x, int decimals = 3) {
    if (std::isnan(x)) return "n/a";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, x);
    return buf;
}

struct summary_row {
    const variant* v;
    double median_us, min_us, max_us, spread;
    double per_unit_us;  // median over repetitions of (test − reference) / units
};

summary_row summarise(const group& g, const variant& v) {
    const variant& ref = g.v.front();
    std::vector<double> per_unit;
    for (std::size_t r = 0; r < v.us.size(); ++r) per_unit.push_back((v.us[r] - ref.us[r]) / v.units);
    const double m = median(v.us);
    return {&v, m, *std::min_element(v.us.begin(), v.us.end()), *std::max_element(v.us.begin(), v.us.end()),
            (quantile(v.us, 0.9) - quantile(v.us, 0.1)) / m, &v == &ref ? 0.0 : median(per_unit)};
}

const variant* find(const group& g, const std::string& name) {
    for (const variant& v : g.v)
        if (v.name == name) return &v;
    return nullptr;
}

/// Repetitions in which a's per-unit cost was no higher than b's (paired by repetition).
int wins(const group& g, const variant& a, const variant& b) {
    const variant& ref = g.v.front();
    int w = 0;
    for (std::size_t r = 0; r < a.us.size(); ++r)
        w += (a.us[r] - ref.us[r]) / a.units <= (b.us[r] - ref.us[r]) / b.units ? 1 : 0;
    return w;
}

// ---------------------------------------------------------------------------------------
// Callgrind probe: one variant, K loops, no timing; instruction counts come from valgrind.

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

// ---------------------------------------------------------------------------------------
// The machine's state (other processes) and the reports, which only format what the
// groups measured.

/// System-wide CPU time, seconds summed over CPUs, from the kernel's "cpu" line.
struct cpu_times {
    double busy = 0, steal = 0, total = 0;
};

cpu_times read_cpu_times() {
    cpu_times t;
    std::ifstream f("/proc/stat");
    std::string cpu;
    double v[8] = {0, 0, 0, 0, 0, 0, 0, 0};  // user nice system idle iowait irq softirq steal
    if (!(f >> cpu) || cpu != "cpu") return t;
    for (double& x : v) f >> x;
    const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
    t.steal = v[7] / tick;
    t.busy = (v[0] + v[1] + v[2] + v[5] + v[6]) / tick;
    t.total = (v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7]) / tick;
    return t;
}

/// Share of the machine's CPU time that other processes used between `a` and `b` (this
/// process used `own_s` of it), and the share the hypervisor stole.
struct other_load {
    double others = 0, steal = 0;
};

other_load load_between(const cpu_times& a, const cpu_times& b, double own_s) {
    const double total = b.total - a.total;
    if (total <= 0) return {};
    return {std::max(0.0, (b.busy - a.busy - own_s) / total), (b.steal - a.steal) / total};
}

/// Above this share of the CPU time used by other processes, the results say the machine
/// was not quiet.
constexpr double quiet_limit = 0.05;

struct run_info {
    options opt;
    std::string command;
    double iters_per_us = 0;
    int fork_dl = 0, balanced_dl = 0, chunk_dl = 0;
    double gomp_spin_us = 0, aloe_spin_us = 0, spin_window_us = 0;
    double settle_us = 0;
    std::string settle_how;
    double seconds = 0;
    other_load before, during;  // other processes' share of the CPUs: 1 s before, and during the run
    double gomp_shared_cpu = 0, aloe_shared_cpu = 0;  // placement check (shared_cpu_share)
};



void write_machine(const run_info& info, const std::string& path) {
    std::ofstream f(path);
    f << "# machine and settings of this run\n"
      << "date: " << run_command("date -u '+%Y-%m-%d %H:%M:%S UTC'") << "\n"
      << "nproc: " << run_command("nproc --all") << " (nproc --all); this process may run on " << run_command("nproc")
      << " (nproc, after any binding)\n"
      << "kernel: " << run_command("uname -sr") << " (" << run_command("uname -m") << ")\n"
      << "compiler: g++ " << __VERSION__ << ", -O2 for both runtimes' loops\n"
      << "openmp: _OPENMP " << _OPENMP << ", libgomp package " << run_command("dpkg-query -W -f='${Version}' libgomp1")
      << "\n"
      << "aloe: " << aloe::version() << ", source " << run_command("git describe --always --dirty")
      << " (git describe --always --dirty)\n"
      << "threads: " << info.opt.threads << " for both (omp_set_num_threads and aloe::team)\n"
      << "binding: " << binding_text() << " (the program itself binds nothing)\n"
      << "nice: " << getpriority(PRIO_PROCESS, 0) << " (scheduling policy "
      << (sched_getscheduler(0) == SCHED_OTHER ? "SCHED_OTHER" : "not SCHED_OTHER") << ")\n"
      << "other processes: " << fmt(100 * info.before.others, 1) << " % of the CPU time in the second before the run, "
      << fmt(100 * info.during.others, 1) << " % during it; hypervisor steal " << fmt(100 * info.before.steal, 1)
      << " % and " << fmt(100 * info.during.steal, 1) << " %\n"
      << "\n## lscpu (flags and vulnerabilities left out)\n"
      << run_command("lscpu | grep -v -e '^Flags:' -e '^Vulnerability'") << "\n"
      << "\n## environment (OMP_*, GOMP_*, ALOE_*, KMP_* set for this run)\n";
    const std::vector<std::string> env = runtime_environment();
    for (const std::string& s : env) f << s << "\n";
    if (env.empty()) f << "(none set)\n";
    f << "Defaults where unset: libgomp OMP_WAIT_POLICY unset = spin GOMP_SPINCOUNT (300000 pause rounds)\n"
         "then futex; aloe ALOE_WAIT_POLICY=hybrid (spin, yield, then futex; ALOE_SPIN_US sets the phases).\n"
      << "\n## idle spin after a loop (CPU time per worker in a " << fmt(info.spin_window_us / 1000, 0)
      << " ms window, median)\n"
      << "libgomp: " << fmt(info.gomp_spin_us, 0) << " us\n"
      << "aloe:    " << fmt(info.aloe_spin_us, 0) << " us\n"
      << "settle between variants: " << fmt(info.settle_us, 0) << " us (" << info.settle_how << ")\n"
      << "\n## placement after sleeping (loops whose threads shared a CPU)\n"
      << "aloe: " << fmt(100 * info.aloe_shared_cpu, 0) << " %, libgomp: " << fmt(100 * info.gomp_shared_cpu, 0)
      << " %\n"
      << "\n## work\n"
      << "delay(): " << fmt(info.iters_per_us, 1) << " iterations per us\n"
      << "fork body: delay(" << info.fork_dl << "), balanced body: delay(" << info.balanced_dl
      << "), chunk body: delay(" << info.chunk_dl << ")\n"
      << "clock: std::chrono::steady_clock\n";
}

void write_csv(const std::vector<group>& groups, const run_info& info, const std::string& path) {
    std::ofstream f(path);
    f << "variant,peer,test,chunk,threads,reps,median_us,min_us,max_us,per_unit_us\n";
    for (const group& g : groups)
        for (const variant& v : g.v) {
            const summary_row s = summarise(g, v);
            f << csv_field(v.name) << ',' << csv_field(v.peer) << ',' << g.test << ',' << v.chunk << ','
              << info.opt.threads << ',' << v.us.size() << ',' << fmt(s.median_us, 4) << ',' << fmt(s.min_us, 4) << ','
              << fmt(s.max_us, 4) << ',' << fmt(s.per_unit_us, 5) << '\n';
        }
}

void write_raw(const std::vector<group>& groups, const std::string& dir) {
    std::filesystem::create_directories(dir);
    std::ofstream f(dir + "/samples.csv");
    f << "test,variant,rep,inner,us_per_construct\n";
    for (const group& g : groups)
        for (const variant& v : g.v)
            for (std::size_t r = 0; r < v.us.size(); ++r)
                f << g.test << ',' << csv_field(v.name) << ',' << r << ',' << v.inner << ',' << fmt(v.us[r], 4) << '\n';
}

struct target {
    std::string name, figure;
    bool met;
    bool comparison = false;  // no threshold was set: reported, not judged
};

std::string win_text(const group& g, const variant& a, const variant& b) {
    return "aloe <= gomp in " + std::to_string(wins(g, a, b)) + "/" + std::to_string(a.us.size()) + " reps";
}

void fork_section(std::ostream& out, const group& g, std::vector<target>& targets) {
    const variant& gpf = *find(g, "gomp parallel for static");
    const summary_row o = summarise(g, gpf);
    out << "| variant | median us/loop | min | max | spread % | overhead us/loop | ratio vs gomp parallel for |\n"
           "|---|---:|---:|---:|---:|---:|---:|\n";
    for (const variant& v : g.v) {
        const summary_row s = summarise(g, v);
        out << "| " << v.name << " | " << fmt(s.median_us) << " | " << fmt(s.min_us) << " | " << fmt(s.max_us) << " | "
            << fmt(100 * s.spread, 1) << " | " << fmt(s.per_unit_us) << " | "
            << (v.rt == runtime_kind::ref ? "" : fmt(s.per_unit_us / o.per_unit_us, 2)) << " |\n";
    }
    const variant& av = *find(g, "aloe static");
    const summary_row a = summarise(g, av);
    targets.push_back({"fork-join + barrier per loop <= libgomp (`parallel for schedule(static)`, one iteration "
                       "per thread)",
                       "aloe " + fmt(a.per_unit_us) + " us vs gomp " + fmt(o.per_unit_us) + " us (ratio " +
                           fmt(a.per_unit_us / o.per_unit_us, 2) + ", " + win_text(g, av, gpf) + ")",
                       a.per_unit_us <= o.per_unit_us});
}

void balanced_section(std::ostream& out, const group& g, std::vector<target>& targets) {
    const variant& gs = *find(g, "gomp static");
    const summary_row o = summarise(g, gs);
    const double ideal = summarise(g, g.v.front()).median_us;
    out << "Efficiency = reference / loop time (1 = no overhead).\n\n"
           "| variant | median us/loop | min | max | spread % | overhead us/loop | efficiency | time ratio vs gomp "
           "static |\n|---|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const variant& v : g.v) {
        const summary_row s = summarise(g, v);
        out << "| " << v.name << " | " << fmt(s.median_us) << " | " << fmt(s.min_us) << " | " << fmt(s.max_us) << " | "
            << fmt(100 * s.spread, 1) << " | " << fmt(s.per_unit_us) << " | " << fmt(ideal / s.median_us, 3) << " | "
            << (v.rt == runtime_kind::ref ? "" : fmt(s.median_us / o.median_us, 4)) << " |\n";
    }
    for (const std::string spec : {"static", "hybrid,fs=1"}) {
        const variant& av = *find(g, "aloe " + spec);
        const double ratio = summarise(g, av).median_us / o.median_us;
        targets.push_back({"`" + spec + "` within 2% of libgomp static (balanced loop)",
                           "time ratio " + fmt(ratio, 4) + " (" + fmt(summarise(g, av).median_us) + " vs " +
                               fmt(o.median_us) + " us/loop; " + win_text(g, av, gs) + ")",
                           ratio <= 1.02});
    }
}

/// `fork`: the fork group when it ran, to show the per-chunk cost without the fork-join.
void chunk_section(std::ostream& out, const group& g, const group* fork, std::vector<target>& targets) {
    std::vector<std::int64_t> chunks;
    for (const variant& v : g.v)
        if (v.chunk > 0 && std::find(chunks.begin(), chunks.end(), v.chunk) == chunks.end()) chunks.push_back(v.chunk);
    auto ns = [&](const variant& v) { return 1000 * summarise(g, v).per_unit_us; };
    auto by = [&](const std::string& name) -> const variant& { return *find(g, name); };
    double fj_aloe = std::nan(""), fj_gomp = std::nan("");
    if (fork != nullptr) {
        fj_aloe = summarise(*fork, *find(*fork, "aloe static")).per_unit_us;
        fj_gomp = summarise(*fork, *find(*fork, "gomp parallel for static")).per_unit_us;
    }
    // Per chunk after taking the runtime's own fork-join overhead off the loop's overhead.
    auto excl = [&](const variant& v, double fj) {
        return 1000 * (summarise(g, v).per_unit_us * v.units - fj) / v.units;
    };

    out << "Cost per chunk in ns = (loop time − reference) / chunks handed out, median over repetitions. It\n"
           "includes the loop's fork-join spread over its chunks; \"excl. f-j\" takes each runtime's own\n"
           "fork-join overhead (fork test) off first, which matters at large chunks (few chunks per loop);\n"
           "n/a where the fork test's overhead exceeds this loop's (then the fork test is not representative).\n\n"
           "| chunk | chunks/loop | gomp dynamic | aloe dynamic | ratio | aloe<=gomp | ratio excl. f-j | "
           "gomp guided | aloe guided | ratio |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    std::string dyn_misses, mutex_ratios;
    int dyn_met = 0, atomic_cheaper = 0;
    for (std::int64_t c : chunks) {
        const std::string cs = std::to_string(c);
        const variant &gd = by("gomp dynamic," + cs), &ad = by("aloe dynamic,chunk=" + cs);
        const variant &gg = by("gomp guided," + cs), &ag = by("aloe guided,chunk=" + cs);
        const double ratio = ns(ad) / ns(gd);
        out << "| " << c << " | " << fmt(gd.units, 0) << " | " << fmt(ns(gd), 1) << " | " << fmt(ns(ad), 1) << " | "
            << fmt(ratio, 2) << " | " << wins(g, ad, gd) << "/" << ad.us.size() << " | "
            << (excl(ad, fj_aloe) > 0 && excl(gd, fj_gomp) > 0 ? fmt(excl(ad, fj_aloe) / excl(gd, fj_gomp), 2) : "n/a")
            << " | " << fmt(ns(gg), 1) << " | " << fmt(ns(ag), 1)
            << " | " << fmt(ns(ag) / ns(gg), 2) << " |\n";
        if (ratio <= 1) ++dyn_met;
        else dyn_misses += (dyn_misses.empty() ? "" : ", ") + cs + " (ratio " + fmt(ratio, 2) + ")";
    }
    out << "\naloe's other schedules, same loop, ns per chunk (gomp dynamic repeated for scale):\n\n"
           "| chunk | gomp dynamic | hybrid fs=0.5 | staggered atomic | staggered mutex | mutex/atomic | "
           "atomic<=mutex | tasklets n=N/c |\n|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for (std::int64_t c : chunks) {
        const std::string cs = std::to_string(c);
        const std::string stag = "aloe staggered,fs=0,chunk=" + cs + ",queue=";
        const variant &sa = by(stag + "atomic"), &sm = by(stag + "mutex");
        const variant* tl = nullptr;
        for (const variant& v : g.v)
            if (v.chunk == c && v.name.rfind("aloe tasklets", 0) == 0) tl = &v;
        out << "| " << c << " | " << fmt(ns(by("gomp dynamic," + cs)), 1) << " | "
            << fmt(ns(by("aloe hybrid,fs=0.5,chunk=" + cs)), 1) << " | " << fmt(ns(sa), 1) << " | " << fmt(ns(sm), 1)
            << " | " << fmt(ns(sm) / ns(sa), 2) << " | " << wins(g, sa, sm) << "/" << sa.us.size() << " | "
            << (tl ? fmt(ns(*tl), 1) : "") << " |\n";
        if (ns(sa) <= ns(sm)) ++atomic_cheaper;
        mutex_ratios += (mutex_ratios.empty() ? "" : ", ") + cs + ": " + fmt(ns(sm) / ns(sa), 2);
    }
    const auto n_chunks = static_cast<int>(chunks.size());
    targets.push_back({"aloe `dynamic` per-chunk cost <= libgomp dynamic at every chunk size",
                       "met at " + std::to_string(dyn_met) + "/" + std::to_string(n_chunks) + " chunk sizes" +
                           (dyn_misses.empty() ? "" : "; missed at chunk " + dyn_misses),
                       dyn_met == n_chunks});
    targets.push_back({"staggered `queue=atomic` against `queue=mutex`, per chunk",
                       "atomic cheaper at " + std::to_string(atomic_cheaper) + "/" + std::to_string(n_chunks) +
                           " chunk sizes; mutex/atomic by chunk: " + mutex_ratios,
                       atomic_cheaper == n_chunks, true});
}

std::string lscpu_field(const std::string& key) {
    return run_command("lscpu | sed -n 's/^" + key + ":[[:space:]]*//p' | head -1");
}

void write_summary(const std::vector<group>& groups, const run_info& info, const std::string& path) {
    std::ostringstream body;
    std::vector<target> targets;
    const group* fork = nullptr;
    for (const group& g : groups) {
        const summary_row ref = summarise(g, g.v.front());
        body << "\n## "
             << (g.test == "fork"       ? "Fork-join (syncbench PARALLEL, PARALLEL FOR)"
                 : g.test == "balanced" ? "Balanced loop"
                                        : "Per-chunk cost (schedbench)")
             << "\n\nNoise: the reference's spread (p90 − p10) / median is " << fmt(100 * ref.spread, 1)
             << " %; its median is " << fmt(ref.median_us, 3) << " us per construct (the ideal: work / threads).\n\n";
        if (g.test == "fork") {
            fork = &g;
            fork_section(body, g, targets);
        } else if (g.test == "balanced") {
            balanced_section(body, g, targets);
        } else {
            chunk_section(body, g, fork, targets);
        }
    }

    std::ofstream f(path);
    f << "# aloe against libgomp: loop overheads (EPCC method)\n\n"
      << "Machine: " << lscpu_field("Model name") << ", " << run_command("nproc --all") << " CPUs (hypervisor: "
      << lscpu_field("Hypervisor vendor") << "), kernel " << run_command("uname -r") << "; details in machine.txt.\n"
      << "Threads: " << info.opt.threads << " for both runtimes, " << binding_text()
      << " · repetitions: " << info.opt.reps
      << " (every variant once per repetition, rotated order) · timed batch: about "
      << fmt(info.opt.target_us / 1000, 1) << " ms · settle between variants: " << fmt(info.settle_us / 1000, 1)
      << " ms · run time " << fmt(info.seconds, 0) << " s.\n\n"
      << "Command: `" << info.command << "`\n\n";
    f << "Other processes used " << fmt(100 * info.before.others, 1)
      << " % of the CPU time in the second before the run and " << fmt(100 * info.during.others, 1)
      << " % during it (hypervisor steal: " << fmt(100 * info.during.steal, 1)
      << " %).\n\n";
    f << "Placement check: in the 50 loops after each of 10 sleeps of "
      << fmt(std::max(info.settle_us, 5000.0) / 1000, 1)
      << " ms, the threads shared a CPU (fewer CPUs than threads and cores allow) in "
      << fmt(100 * info.aloe_shared_cpu, 0) << " % of aloe's loops and " << fmt(100 * info.gomp_shared_cpu, 0)
      << " % of libgomp's. A loop whose threads share a CPU runs their work one after the other, and\n"
         "whoever waits spins on the CPU the other one needs (see README, \"Placement\").\n\n";
    if (std::max(info.aloe_shared_cpu, info.gomp_shared_cpu) > 0)
        f << "**Placement dominates**: a runtime whose threads share a CPU runs the loop's work on one CPU,\n"
             "and its waiting thread spins on the CPU the other needs (for up to its spin phase: libgomp's is\n"
             "milliseconds); that costs far more than any overhead measured here. Rerun with both runtimes\n"
             "bound (OMP_PROC_BIND=close ALOE_PROC_BIND=close) to measure overhead apart from placement; the\n"
             "figures below are what unbound threads cost.\n\n";
    if (std::max(info.before.others, info.during.others) > quiet_limit)
        f << "**The machine was not quiet**: other work shared the cores, so these figures measure the runtimes\n"
             "under contention, not their overhead on a quiet node.\n\n";
    f
      << "Medians over repetitions; ratios are aloe / libgomp of the medians (below 1: aloe cheaper).\n"
      << "\"aloe<=gomp\" counts the repetitions in which aloe's cost was no higher, paired by repetition\n"
      << "(about half of them: no real difference).\n"
      << "\n## Targets\n\n| target | figures | result |\n|---|---|---|\n";
    for (const target& t : targets) {
        const char* result = t.comparison ? (t.met ? "comparison: atomic cheaper" : "comparison: mixed")
                             : t.met      ? "met"
                                          : "**missed**";
        f << "| " << t.name << " | " << t.figure << " | " << result << " |\n";
    }
    f << body.str();
}

}  // namespace

int main(int argc, char** argv) {
    const options opt = parse_options(argc, argv);
    if (!opt.probe.empty()) return callgrind_probe(opt);

    run_info info;
    info.opt = opt;
    {
        const cpu_times a = read_cpu_times();
        const double own = process_cpu_us();
        sleep_us(1e6);
        info.before = load_between(a, read_cpu_times(), (process_cpu_us() - own) / 1e6);
    }
    const cpu_times run_start = read_cpu_times();
    const double run_own = process_cpu_us();
    // The runtimes' environment first, so that the line reruns the same configuration.
    for (const std::string& s : runtime_environment()) {
        const std::size_t eq = s.find('=');
        info.command += s.substr(0, eq + 1) + shell_quote(s.substr(eq + 1)) + " ";
    }
    info.command += shell_quote(portable_path(argv[0]));
    for (int i = 1; i < argc; ++i) {
        const bool is_out = i > 1 && std::string(argv[i - 1]) == "--out";
        info.command += " " + shell_quote(is_out ? portable_path(argv[i]) : argv[i]);
    }

    const int p = opt.threads;
    omp_set_num_threads(p);
    aloe::team team(p);
    int omp_team = 0;
#pragma omp parallel
    {
#pragma omp single
        omp_team = omp_get_num_threads();
    }
    if (omp_team != p || team.size() != p) {
        std::cerr << "aloe_overhead: asked for " << p << " threads, libgomp gave " << omp_team << " and aloe "
                  << team.size() << " (is OMP_DYNAMIC or OMP_THREAD_LIMIT set?)\n";
        return 1;
    }
    if (p == 1) std::cerr << "aloe_overhead: 1 thread: aloe runs loops serially, libgomp still forks\n";

    info.iters_per_us = delay_iters_per_us();
    auto dl_for = [&](double us) { return std::max(1, static_cast<int>(std::lround(us * info.iters_per_us))); };
    info.fork_dl = dl_for(opt.fork_delay_us);
    info.balanced_dl = dl_for(opt.balanced_delay_us);
    info.chunk_dl = dl_for(opt.chunk_delay_us);

    // Both runtimes' idle spin, measured, decides the settle time.
    info.spin_window_us = opt.quick ? 100000 : 200000;
    const int tries = opt.quick ? 3 : 5;
    const aloe::schedule st("static");
    info.gomp_spin_us = idle_spin_us(
        [p] {
#pragma omp parallel for schedule(static)
            for (int i = 0; i < p; ++i) delay(1);
        },
        p, info.spin_window_us, tries);
    info.aloe_spin_us = idle_spin_us(
        [&] {
            aloe::parallel_for(team, 0, p, st, [](std::int64_t) { delay(1); },
                               aloe::loop_site(std::string_view{"spin"}));
        },
        p, info.spin_window_us, tries);
    if (!opt.settle) {
        info.settle_us = 0;
        info.settle_how = "--no-settle";
    } else if (opt.settle_us >= 0) {
        info.settle_us = opt.settle_us;
        info.settle_how = "--settle-us";
    } else {
        info.settle_us = std::clamp(1.5 * std::max(info.gomp_spin_us, info.aloe_spin_us) + 1000, 5000.0, 100000.0);
        info.settle_how = "1.5 x the longer measured idle spin + 1 ms, at least 5 ms";
        if (std::max(info.gomp_spin_us, info.aloe_spin_us) > 0.9 * info.spin_window_us)
            std::cerr << "aloe_overhead: a runtime's workers spin for the whole measuring window (active wait "
                         "policy?); settling cannot keep them apart\n";
    }

    const std::int64_t pp = p;
    const std::int64_t n = static_cast<std::int64_t>(opt.iters_per_thread) * pp;
    std::vector<group> groups;
    if (opt.fork) {
        group g{"fork", {}};
        g.v.push_back(make_ref(info.fork_dl, 1));
        g.v.push_back(make_gomp("gomp parallel", omp_kind::parallel, pp, info.fork_dl, 0, 1));
        g.v.push_back(make_gomp("gomp parallel for static", omp_kind::static_block, pp, info.fork_dl, 0, 1));
        g.v.push_back(make_aloe(team, "static", pp, info.fork_dl, "gomp parallel for static", 0, 1));
        groups.push_back(std::move(g));
    }
    if (opt.balanced) {
        group g{"balanced", {}};
        g.v.push_back(make_ref(info.balanced_dl, n / pp));
        g.v.push_back(make_gomp("gomp static", omp_kind::static_block, n, info.balanced_dl, 0, 1));
        for (const char* s : {"static", "hybrid,fs=1", "staggered,fs=1"})
            g.v.push_back(make_aloe(team, s, n, info.balanced_dl, "gomp static", 0, 1));
        groups.push_back(std::move(g));
    }
    if (opt.chunk) {
        group g{"chunk", {}};
        g.v.push_back(make_ref(info.chunk_dl, n / pp));
        const int dl = info.chunk_dl;
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

    std::cerr << "aloe_overhead: " << p << " threads, " << opt.reps << " reps, settle " << fmt(info.settle_us / 1000, 1)
              << " ms (idle spin: libgomp " << fmt(info.gomp_spin_us / 1000, 2) << " ms, aloe "
              << fmt(info.aloe_spin_us / 1000, 2) << " ms)\n";
    const runner run{opt, info.settle_us};
    const double t0 = now_us();
    for (group& g : groups) run.run(g);
    info.seconds = (now_us() - t0) / 1e6;
    {
        // Placement after sleeping, with the same pause as between variants (at least 5 ms).
        const double pause = std::max(info.settle_us, 5000.0);
        const aloe::loop_site site(std::string_view{"placement"});
        info.aloe_shared_cpu = shared_cpu_share(
            [&](std::vector<int>& cpu) {
                aloe::parallel_for(team, 0, p, st, [&](aloe::subrange, int w) {
                    cpu[static_cast<std::size_t>(w)] = sched_getcpu();
                }, site);
            },
            p, pause, 10, 50);
        info.gomp_shared_cpu = shared_cpu_share(
            [&](std::vector<int>& cpu) {
#pragma omp parallel for schedule(static)
                for (int i = 0; i < p; ++i) cpu[static_cast<std::size_t>(omp_get_thread_num())] = sched_getcpu();
            },
            p, pause, 10, 50);
    }
    info.during = load_between(run_start, read_cpu_times(), (process_cpu_us() - run_own) / 1e6);
    if (std::max(info.before.others, info.during.others) > quiet_limit)
        std::cerr << "aloe_overhead: other processes used " << fmt(100 * info.before.others, 0) << " % (before) and "
                  << fmt(100 * info.during.others, 0) << " % (during) of the CPU time: the machine was not quiet\n";

    std::filesystem::create_directories(opt.out);
    write_csv(groups, info, opt.out + "/overhead.csv");
    write_raw(groups, opt.out + "/raw");
    write_machine(info, opt.out + "/machine.txt");
    write_summary(groups, info, opt.out + "/summary.md");
    std::ofstream(opt.out + "/command.txt") << info.command << "\n";
    std::cout << std::ifstream(opt.out + "/summary.md").rdbuf() << "\nresults in " << portable_path(opt.out) << "\n";
    return 0;
}

// A timestepped loop with an imbalanced, noisy iteration cost, run with several schedules.
//
// Each timestep runs `iterations` iterations whose cost grows linearly across the range
// (imbalance), and with probability `noise_p` one iteration's thread is delayed by
// `noise_us` (a stand-in for OS noise). Prints per schedule the median timestep time, its
// ratio to static, and the loop site's imbalance and steal counts from aloe's statistics.
//
//   aloe_example_imbalance [--steps N] [--iterations N] [--noise-p P] [--noise-us U] [--seed S]
//                          [--env-schedule]
// --env-schedule runs only the schedule ALOE_SCHEDULE names (static when unset), through the
// parallel_for overload that takes no schedule.
#include <aloe/aloe.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

struct options {
    int steps = 60;
    std::int64_t iterations = 4096;
    double noise_p = 0.2;
    double noise_us = 400;
    unsigned seed = 1;
    bool env_schedule = false;
};

[[noreturn]] void usage_error(const std::string& what) {
    std::fprintf(stderr, "aloe_example_imbalance: %s\nusage: aloe_example_imbalance [--steps N] [--iterations N] "
                         "[--noise-p P] [--noise-us U] [--seed S]\n", what.c_str());
    std::exit(2);
}

double number_after(int& i, int argc, char** argv) {
    if (i + 1 >= argc) usage_error(std::string(argv[i]) + " needs a value");
    char* end = nullptr;
    const double v = std::strtod(argv[++i], &end);
    if (end == argv[i] || *end != '\0' || !std::isfinite(v) || v < 0)
        usage_error(std::string(argv[i - 1]) + ": '" + argv[i] + "' is not a non-negative number");
    return v;
}

options parse(int argc, char** argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--steps") o.steps = static_cast<int>(number_after(i, argc, argv));
        else if (a == "--iterations") o.iterations = static_cast<std::int64_t>(number_after(i, argc, argv));
        else if (a == "--noise-p") o.noise_p = number_after(i, argc, argv);
        else if (a == "--noise-us") o.noise_us = number_after(i, argc, argv);
        else if (a == "--seed") o.seed = static_cast<unsigned>(number_after(i, argc, argv));
        else if (a == "--env-schedule") o.env_schedule = true;
        else usage_error("unknown argument '" + a + "'");
    }
    if (o.steps < 1 || o.iterations < 1) usage_error("--steps and --iterations must be at least 1");
    if (o.noise_p > 1) usage_error("--noise-p must be in [0, 1]");
    return o;
}

// Busy work the compiler cannot drop: about `units` short dependent operations.
double spin(std::int64_t units) {
    double x = 1.0;
    for (std::int64_t k = 0; k < units; ++k) x = x * 1.0000001 + 1e-9;
    return x;
}

void busy_for_us(double us) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double, std::micro>(us);
    while (std::chrono::steady_clock::now() < end) {
    }
}

}  // namespace

int main(int argc, char** argv) {
    const options o = parse(argc, argv);
    std::vector<std::string> schedules = {"static", "dynamic,chunk=4", "guided", "hybrid,fs=0.7,chunk=4",
                                          "staggered,fs=0.7,chunk=4", "tasklets,n=64,fs=0.5,skew=4", "adaptive"};
    if (o.env_schedule) schedules = {aloe::schedule_from_environment().to_string()};
    std::vector<double> sink(static_cast<std::size_t>(o.iterations));
    std::printf("aloe %s, %d threads, %lld iterations x %d steps, noise p=%.2f delta=%.0f us\n", aloe::version(),
                aloe::team::global().size(), static_cast<long long>(o.iterations), o.steps, o.noise_p, o.noise_us);
    std::printf("%-30s %12s %10s %10s %8s\n", "schedule", "median step", "vs static", "imbalance", "steals");
    double static_median = 0;
    for (const std::string& spec : schedules) {
        const aloe::schedule s(spec);
        const aloe::loop_site site(spec);  // one site per schedule, so statistics separate
        std::mt19937 rng(o.seed);          // the same noise for every schedule
        std::uniform_real_distribution<double> u(0, 1);
        std::vector<double> times;
        for (int step = 0; step < o.steps; ++step) {
            const std::int64_t noisy = u(rng) < o.noise_p ? static_cast<std::int64_t>(u(rng) * static_cast<double>(o.iterations)) : -1;
            const auto t0 = std::chrono::steady_clock::now();
            const auto body = [&](std::int64_t i) {
                sink[static_cast<std::size_t>(i)] = spin(50 + 100 * i / o.iterations);
                if (i == noisy) busy_for_us(o.noise_us);
            };
            if (o.env_schedule) aloe::parallel_for(0, o.iterations, body, site);
            else aloe::parallel_for(0, o.iterations, s, body, site);
            times.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
        }
        std::sort(times.begin(), times.end());
        const double median = times[times.size() / 2];
        if (spec == "static" || static_median == 0) static_median = median;
        const auto st = aloe::stats_of(site);
        std::uint64_t steals = 0;
        if (st)
            for (const auto& t : st->total) steals += t.steals;
        std::printf("%-30s %9.1f us %9.2fx %10.2f %8llu\n", spec.c_str(), median, median / static_median,
                    st ? st->imbalance_mean : 0.0, static_cast<unsigned long long>(steals));
    }
    double check = 0;
    for (double v : sink) check += v;
    if (!(check > 0)) {
        std::fprintf(stderr, "aloe_example_imbalance: wrong result\n");
        return 1;
    }
    return 0;
}

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
//
// The files: options (command line), kernels (delay() and both runtimes' loops, the test
// groups), measure (the interleaved loop and statistics), checks (machine load, idle spin,
// placement), probe (--callgrind-probe), results and summary (the results folder), and this
// one, which runs them in order.
#include "checks.hpp"
#include "kernels.hpp"
#include "measure.hpp"
#include "options.hpp"
#include "probe.hpp"
#include "results.hpp"
#include "summary.hpp"

#include <aloe/parallel_for.hpp>
#include <aloe/schedule.hpp>
#include <aloe/team.hpp>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include <sched.h>

namespace aloe_overhead {
namespace {

int run_program(int argc, char** argv) {
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
    info.gomp_spin_us = idle_spin_us([p] { gomp_spin_construct(p); }, p, info.spin_window_us, tries);
    info.aloe_spin_us = idle_spin_us([&] { aloe_spin_construct(team, p, st); }, p, info.spin_window_us, tries);
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

    std::vector<group> groups = make_groups(opt, team, info.fork_dl, info.balanced_dl, info.chunk_dl);

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
    save_result(opt.out + "/command.txt", info.command + "\n");
    std::cout << std::ifstream(opt.out + "/summary.md").rdbuf() << "\nresults in " << portable_path(opt.out) << "\n";
    return 0;
}

}  // namespace
}  // namespace aloe_overhead

int main(int argc, char** argv) { return aloe_overhead::run_program(argc, argv); }

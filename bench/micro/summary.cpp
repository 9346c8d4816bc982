// summary.md: the run's header (machine, threads, binding, load, placement), the targets and
// one table per test group (fork, balanced, chunk). It only formats what the groups measured.
#include "summary.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <ostream>
#include <sstream>

namespace aloe_overhead {
namespace {

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

}  // namespace

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

    std::ostringstream f;
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
    save_result(path, f.str());
}

}  // namespace aloe_overhead

// machine.txt, overhead.csv and raw/samples.csv, and the helpers that keep the results free
// of machine paths and name the runtimes' settings (see README.md, "Results").
#include "results.hpp"

#include <aloe/version.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "runtime/output_file.hpp"

#include <sched.h>
#include <sys/resource.h>

extern char** environ;  // listed, never changed: the OMP_/GOMP_/ALOE_ settings in effect

namespace aloe_overhead {
namespace {

std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"") == std::string::npos) return s;
    std::string q = "\"";
    for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return q + "\"";
}

}  // namespace

void save_result(const std::string& path, const std::string& text) {
    std::string error;  // whole or not at all (runtime/output_file.hpp)
    if (!aloe::runtime::write_output_file(path, text, error))
        std::cerr << "aloe_overhead: cannot write a result: " << error << "\n";
}

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

std::string binding_text() {
    std::string b;
    for (const std::string& s : runtime_environment())
        if (s.rfind("OMP_PROC_BIND=", 0) == 0 || s.rfind("ALOE_PROC_BIND=", 0) == 0 || s.rfind("OMP_PLACES=", 0) == 0)
            b += (b.empty() ? "" : ", ") + s;
    return b.empty() ? "unbound" : "bound by " + b;
}

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

std::string fmt(double x, int decimals) {
    if (std::isnan(x)) return "n/a";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, x);
    return buf;
}

void write_machine(const run_info& info, const std::string& path) {
    std::ostringstream f;
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
    save_result(path, f.str());
}

void write_csv(const std::vector<group>& groups, const run_info& info, const std::string& path) {
    std::ostringstream f;
    f << "variant,peer,test,chunk,threads,reps,median_us,min_us,max_us,per_unit_us\n";
    for (const group& g : groups)
        for (const variant& v : g.v) {
            const summary_row s = summarise(g, v);
            f << csv_field(v.name) << ',' << csv_field(v.peer) << ',' << g.test << ',' << v.chunk << ','
              << info.opt.threads << ',' << v.us.size() << ',' << fmt(s.median_us, 4) << ',' << fmt(s.min_us, 4) << ','
              << fmt(s.max_us, 4) << ',' << fmt(s.per_unit_us, 5) << '\n';
        }
    save_result(path, f.str());
}

void write_raw(const std::vector<group>& groups, const std::string& dir) {
    std::filesystem::create_directories(dir);
    std::ostringstream f;
    f << "test,variant,rep,inner,us_per_construct\n";
    for (const group& g : groups)
        for (const variant& v : g.v)
            for (std::size_t r = 0; r < v.us.size(); ++r)
                f << g.test << ',' << csv_field(v.name) << ',' << r << ',' << v.inner << ',' << fmt(v.us[r], 4) << '\n';
    save_result(dir + "/samples.csv", f.str());
}

}  // namespace aloe_overhead

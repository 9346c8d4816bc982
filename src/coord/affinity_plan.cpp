#include "coord/affinity_plan.hpp"

#include "runtime/topology.hpp"

#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace aloe::coord {

std::vector<std::vector<int>> plan_confinement(const core_list& cores, const std::vector<unsigned>& allocations) {
    std::vector<int> flat;  // whole cores, in order
    for (const auto& core : cores) flat.insert(flat.end(), core.begin(), core.end());
    std::vector<std::vector<int>> runs;
    std::size_t next = 0;
    for (const unsigned want : allocations) {
        std::vector<int> run;
        for (unsigned k = 0; k < std::max(want, 1u) && next < flat.size(); ++k) run.push_back(flat[next++]);
        if (run.empty() && !flat.empty()) run = cores.back();  // out of CPUs: share the last core
        runs.push_back(std::move(run));
    }
    return runs;
}

core_list cores_of(const runtime::topology& t, unsigned most) {
    core_list out;
    for (int c = 0; c < t.cores() && (most == 0 || out.size() < most); ++c) {
        auto cpus = t.cpus_of_core(c);
        if (!cpus.empty()) out.push_back(std::move(cpus));
    }
    return out;
}

core_list daemon_cores(unsigned cores) { return cores_of(runtime::topology::machine(), cores); }

std::string confine_process(pid_t pid, const std::vector<int>& cpus, const std::string& proc_root) {
    if (cpus.empty()) return "no CPUs to confine to";
    cpu_set_t set;
    CPU_ZERO(&set);
    for (const int c : cpus)
        if (c >= 0 && c < CPU_SETSIZE) CPU_SET(c, &set);
    const std::string tasks = proc_root + "/" + std::to_string(pid) + "/task";
    DIR* dir = ::opendir(tasks.c_str());
    if (dir == nullptr) return "cannot list the threads of pid " + std::to_string(pid) + ": " + std::strerror(errno);
    std::string problem;
    while (const dirent* e = ::readdir(dir)) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        const pid_t tid = static_cast<pid_t>(std::strtol(e->d_name, nullptr, 10));
        if (::sched_setaffinity(tid, sizeof set, &set) != 0 && errno != ESRCH && problem.empty())
            problem = "cannot set the affinity of thread " + std::to_string(tid) + " of pid " + std::to_string(pid) + ": " +
                      std::strerror(errno);
    }
    ::closedir(dir);
    return problem;
}

}  // namespace aloe::coord

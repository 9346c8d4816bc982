// What one process saw under the interposer, as plain values: its parallel regions and its
// worksharing loops. The interposer fills one at exit (exit_report.cpp); `aloe run` reads
// one back from each process of the program it ran (tools/aloe/run_reports.cpp) and prints
// them together. Both print through the two formatters below, so a summary or a statistics
// file looks the same whether one process or many wrote it.
//
// Statistics JSON (one document, whatever the number of processes):
//   {"tool": "aloe run", "aloe_version", "schedule", "threads", "rules",
//    "program_sets_threads",               first process that set its own thread count, or null
//    "processes": [{"pid", "ppid", "command": [argv...], "executable",
//                   "program_sets_threads", "regions": n, "loops": n}],
//    "regions": [{"pid", "site", "source", "invocations", ...}],   every process's rows
//    "loops":   [{"pid", "site", "source", "asked", "calls", ...}]}
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace aloe::omp {

struct region_report {
    std::string site;    ///< "module+0xOFFSET"
    std::string source;  ///< "file:line (function)"; empty when unknown
    std::uint64_t invocations = 0;
    int threads_last = 0;
    int threads_max = 0;
    double time_s = 0;
    double imbalance_mean = 0;  ///< 0 when it never ran
    std::string thread_count_set_by;  ///< why the program's count was kept; empty: aloe chose
};

struct loop_report {
    std::string site;
    std::string source;
    std::string asked;  ///< the schedule the program asked for
    std::uint64_t forwarded = 0;
    std::uint64_t forwarded_iterations = 0;
    double forwarded_time_s = 0;
    std::string forward_reason;  ///< empty: never forwarded
    std::string note;            ///< why a taken loop ran its own schedule instead
    std::uint64_t taken = 0;
    std::string schedule;        ///< aloe's schedule, last run; empty when never taken
    std::uint64_t iterations = 0;  ///< taken invocations
    double time_s = 0;
    double imbalance_mean = 0;
    std::string tuning_chosen;   ///< adaptive sites
    std::string tuning_state;
    std::string tuning_json;     ///< the tuner's JSON object; empty for other schedules
    std::string slack_json;      ///< the MPI slack policy's JSON object (libaloe-mpi loaded); else empty

    std::uint64_t calls() const noexcept { return taken + forwarded; }
};

struct process_report {
    long pid = 0;
    long ppid = 0;
    std::vector<std::string> command;  ///< argv
    std::string executable;
    std::string program_sets_threads;  ///< why, when the program called omp_set_num_threads
    std::vector<region_report> regions;
    std::vector<loop_report> loops;

    /// Whether the process reached the OpenMP runtime at all (a shell, or python starting
    /// the program, loads the interposer too and reports nothing).
    bool ran_openmp() const noexcept { return !regions.empty() || !loops.empty(); }
};

/// What `aloe run` was asked (the header of both outputs).
struct run_request {
    std::string schedule_text;  ///< "program", "forward" or a schedule
    int threads = 0;            ///< 0: libgomp's default
    std::string rules_file;
};

/// The summary table: parallel regions and loops of every process that ran OpenMP code (a
/// `pid` column when there are several), and a line for those that did not.
/// Why a run can end with no report from any process (the summary and `aloe run` say it).
/// Several threads calling exit() at once is undefined in C, and glibc then lets a later
/// call end the process while the first still runs the exit handlers (GCC's libgomp test
/// sections-2.c does it: every section calls exit).
inline constexpr const char* no_report_causes =
    "the program ended before its exit handlers ran (a signal, _exit or abort, or several of its threads "
    "calling exit() at once), never loaded the interposer (statically linked, or setuid), or could not write "
    "its report";

std::string format_summary(const run_request& run, const std::vector<process_report>& processes);

/// The statistics document above.
std::string format_stats_json(const run_request& run, const std::vector<process_report>& processes);

}  // namespace aloe::omp

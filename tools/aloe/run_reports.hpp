// `aloe run`'s report folder: a private folder every process of the program writes its own
// report into (the interposer, at exit, when ALOE_OMP_REPORT_DIR names it), read back and
// merged when the program has ended. A shell, a Python driver, `make`, or every rank mpirun
// starts on this node: each keeps its own report, none overwrites another's.
//
// Layout (mode 0700, files 0600): `.lock` (held with flock by the aloe run that owns the
// folder), then per process `<start ticks>-<pid>.json` (format_stats_json of that process)
// and, with --trace, `<start ticks>-<pid>.trace` (its trace events); a rank that lends cores
// (libaloe-mpi, issue 19) adds `mpi-<pid>.lending` and `mpi-<pid>.trace`. A folder whose owner
// died without cleaning up (SIGKILL) is removed by the next aloe run of the same user.
#pragma once

#include "omp/process_report.hpp"

#include <string>
#include <vector>

namespace aloe::cli {

class report_folder {
public:
    /// Creates a fresh folder in `parent` (the temporary directory), after removing this
    /// user's folders there whose aloe run is gone. `error` set and !ok() on failure.
    explicit report_folder(const std::string& parent);
    ~report_folder();  ///< removes the folder and everything in it
    report_folder(const report_folder&) = delete;
    report_folder& operator=(const report_folder&) = delete;

    bool ok() const noexcept { return !path_.empty(); }
    const std::string& path() const noexcept { return path_; }
    const std::string& error() const noexcept { return error_; }

    /// Every process report, in the order the processes started. A report that cannot be
    /// read is named in `problems` and skipped.
    std::vector<omp::process_report> read_reports(std::vector<std::string>& problems) const;

    /// The lending summaries libaloe-mpi's ranks left (`mpi-<pid>.lending`, issue 19), joined;
    /// empty when none lent.
    std::string lending_summaries() const;

    /// Writes one trace document joining every process's events to `target` (libaloe-mpi's
    /// step events, `mpi-<pid>.trace`, included).
    bool write_trace(const std::string& target, std::string& error) const;

private:
    std::string path_;
    std::string error_;
    int lock_fd_ = -1;
};

/// Removes this user's report folders in `parent` whose aloe run is gone (their lock is free).
void sweep_abandoned_report_folders(const std::string& parent);

/// One report document (format_stats_json's) back into values; false and `error` when the
/// text is not such a document.
bool parse_process_reports(const std::string& text, std::vector<omp::process_report>& out, std::string& error);

}  // namespace aloe::cli

#include "mpi/mpi_session.hpp"

#include "mpi/calibration.hpp"
#include "mpi/rank_lending.hpp"
#include "mpi/call_table.hpp"
#include "mpi/slack_board.hpp"
#include "runtime/borrowed_cores.hpp"
#include "runtime/clock.hpp"
#include "runtime/code_address.hpp"
#include "runtime/config.hpp"
#include "runtime/json_text.hpp"
#include "runtime/output_file.hpp"
#include "runtime/output_path.hpp"
#include "runtime/report.hpp"

#include <mpi.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

namespace aloe::mpi {

namespace {

struct session {
    std::mutex mutex;
    int rank = -1;
    int size = 0;
    std::string library;  // the first line of MPI_Get_library_version
    bool written = false;
    bool lending_written = false;
    calibration calibrated;
};

session& state() {
    static session* const s = new session;  // never destroyed: the exit hook runs after statics
    return *s;
}

// Under `aloe run` with lending on: the per-step summary lines (`aloe run` prints them after
// the OpenMP summary) and, with --trace, the steps' trace events, into the run's folder
// (every file a process writes there is its own: the pid names it).
void write_lending_for_aloe_run(const runtime::config& cfg, int rank) {
    if (cfg.omp_report_dir.empty() || std::string_view(lending_statistics().mode) == "off") return;
    struct stat folder {};
    if (::stat(cfg.omp_report_dir.c_str(), &folder) != 0) return;  // its aloe run has ended
    const std::string base = cfg.omp_report_dir + "/mpi-" + std::to_string(static_cast<long>(getpid()));
    std::string error;
    bool ok = runtime::write_output_file(base + ".lending", lending_summary(rank), error, runtime::private_file_mode);
    if (ok && !cfg.trace_file.empty())
        ok = runtime::write_output_file(base + ".trace", lending_trace_events(static_cast<long>(getpid()), rank), error,
                                        runtime::private_file_mode);
    if (!ok)
        runtime::report_once({runtime::report_level::warning, runtime::report_category::mpi, "W602",
                              "libaloe-mpi: the lending report for aloe run: " + error,
                              "none (this rank's steps are missing from the summary or trace)"});
}

void write_statistics() noexcept {
    try {
        const runtime::config& cfg = runtime::current_config();
        bool lending_first = false;
        int rank = -1;
        {
            std::lock_guard lock(state().mutex);
            lending_first = !std::exchange(state().lending_written, true);
            rank = state().rank;
        }
        if (lending_first) write_lending_for_aloe_run(cfg, rank);
        if (cfg.mpi_stats_file.empty()) return;
        // The launcher's variables name the rank as well, but MPI itself is surer.
        runtime::process_identity who = runtime::process_identity::of_this_process(cfg);
        {
            std::lock_guard lock(state().mutex);
            if (state().written) return;
            state().written = true;
            who.rank = state().rank;
            who.job_size = state().size;
        }
        const std::string& pattern = cfg.mpi_stats_file;
        const std::string path = runtime::expand_output_path(pattern, who);
        std::string error;
        if (!runtime::write_output_file(path, statistics_json(), error, runtime::shared_file_mode))
            runtime::report_once({runtime::report_level::warning, runtime::report_category::mpi, "W601",
                                  "ALOE_MPI_STATS: " + error, "none (this rank's MPI statistics are lost)"});
    } catch (...) {
        // At exit or inside MPI_Finalize nothing may escape; the statistics are lost, said once.
        runtime::report_once({runtime::report_level::warning, runtime::report_category::mpi, "W601",
                              "ALOE_MPI_STATS: the statistics could not be made (out of memory)", "none (this rank's MPI statistics are lost)"});
    }
}

std::atomic<bool> exit_hook_set{false};

// A predictor's score: its error relative to the slack (undefined, -1, where a path never
// waited) and to the time between invocations.
std::string error_json(const prediction_error& e) {
    return "{\"predictions\": " + std::to_string(e.predictions) +
           ", \"error_of_slack\": " + runtime::json_number(e.relative_to_slack()) +
           ", \"error_of_interval\": " + runtime::json_number(e.relative_to_interval()) +
           ", \"abs_error_s\": " + runtime::json_number(e.abs_error_s) + "}";
}

std::string calibration_json(const calibration& c) {
    std::string j = "{\"ran\": " + std::string(c.ran ? "true" : "false") + ", \"seconds\": " + runtime::json_number(c.seconds) +
                    ", \"naive_calls\": " + std::to_string(c.naive_calls) + ", \"naive_s\": " + runtime::json_number(c.naive_s) +
                    ", \"cost\": [";
    for (int k = 0; k < cost_class_count; ++k) {
        const cost_line& l = c.cost.line(static_cast<cost_class>(k));
        j += (k ? ", " : "") + std::string("{\"class\": ") + runtime::json_quote(cost_class_name(static_cast<cost_class>(k))) +
             ", \"latency_s\": " + runtime::json_number(l.latency_s) + ", \"per_byte_s\": " + runtime::json_number(l.per_byte_s) + "}";
    }
    return j + "]}";
}

std::string lending_json() {
    const lending_totals l = lending_statistics();
    return "{\"mode\": " + runtime::json_quote(l.mode) + ", \"polite_collectives\": " + (l.collectives ? "true" : "false") +
           ", \"polite_waits\": " + std::to_string(l.polite_waits) + ", \"lends\": " + std::to_string(l.lends) +
           ", \"lends_at_entry\": " + std::to_string(l.lends_at_entry) +
           ", \"lent_s\": " + runtime::json_number(l.lent_s) + ", \"asks\": " + std::to_string(l.asks) +
           ", \"take_backs\": " + std::to_string(l.take_backs) + ", \"phase_lends\": " + std::to_string(l.phase_lends) +
           ", \"phase_misses\": " + std::to_string(l.phase_misses) + ", \"phase_core_s\": " + runtime::json_number(l.phase_core_s) +
           ", \"lend_cost_s\": " + runtime::json_number(l.lend_cost_s) +
           ", \"refused_for_cost\": " + std::to_string(l.refused_for_cost) +
           ", \"idle_core_wakes\": " + std::to_string(l.idle_core_wakes) +
           ", \"idle_core_watch\": " + (l.idle_core_watch ? "true" : "false") +
           ", \"regions_without_guests\": " + std::to_string(runtime::regions_kept_without_guests()) + ",\n  " +
           lending_steps_json() + "}";
}

}  // namespace

void after_init() noexcept {
    int rank = -1, size = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
    int length = 0;
    PMPI_Get_library_version(version, &length);
    std::string library(version, static_cast<std::size_t>(length > 0 ? length : 0));
    if (const std::size_t eol = library.find_first_of("\r\n,"); eol != std::string::npos) library.resize(eol);
    {
        std::lock_guard lock(state().mutex);
        state().rank = rank;
        state().size = size;
        state().library = library;
    }
    // Collective: every rank that loaded libaloe-mpi is here, right after its MPI_Init.
    const calibration c = calibrate(MPI_COMM_WORLD, runtime::current_config().mpi_calibration);
    set_process_cost(c.cost);
    process_calls().set_naive(c.naive_s);
    {
        std::lock_guard lock(state().mutex);
        state().calibrated = c;
    }
    lending_after_init(MPI_COMM_WORLD);  // collective too: the job agrees how collectives wait
    // A program that exits without MPI_Finalize still leaves its statistics.
    if (!exit_hook_set.exchange(true)) std::atexit([] { write_statistics(); });
    runtime::report_once({runtime::report_level::info, runtime::report_category::mpi, "I601",
                          "libaloe-mpi: rank " + std::to_string(rank) + " of " + std::to_string(size) + " under " + library,
                          ""});
    runtime::report_once(
        {runtime::report_level::info, runtime::report_category::mpi, "I602",
         c.ran ? "libaloe-mpi: calibrated in " + std::to_string(static_cast<int>(c.seconds * 1e3 + 0.5)) +
                     " ms: naive slack " + std::to_string(c.naive_s * 1e6) + " us, Allreduce latency " +
                     std::to_string(c.cost.line(cost_class::reduction).latency_s * 1e6) + " us"
               : "libaloe-mpi: no calibration (ALOE_MPI_CALIBRATION=off on some rank)",
         c.ran ? "" : "the whole time inside each call as its slack, and 0 as the naive prediction"});
}

void before_finalize() noexcept {
    runtime::send_idle_guests_home(true);  // after the last step no thread sits on another rank's CPU
    write_statistics();
}

std::string statistics_json() {
    int rank = -1, size = 0;
    std::string library;
    calibration calibrated;
    {
        std::lock_guard lock(state().mutex);
        rank = state().rank;
        size = state().size;
        library = state().library;
        calibrated = state().calibrated;
    }
    using runtime::json_number;
    using runtime::json_quote;
    std::string j = "{\"tool\": \"libaloe-mpi\", \"pid\": " + std::to_string(getpid()) + ", \"rank\": " + std::to_string(rank) +
                    ", \"size\": " + std::to_string(size) + ", \"mpi_library\": " + json_quote(library) +
                    ",\n \"calibration\": " + calibration_json(calibrated) + ",\n \"lending\": " + lending_json() +
                    ",\n \"calls\": [";
    bool first = true;
    for (const call_site_record& r : process_calls().rows()) {
        const call_path& p = r.path;
        const std::string site = p.site == nullptr ? "(other sites)" : runtime::code_site_name(runtime::locate_code(p.site));
        j += first ? "\n  " : ",\n  ";
        first = false;
        char path[24];
        std::snprintf(path, sizeof path, "%016llx", static_cast<unsigned long long>(p.site ? path_key(p) : 0));
        j += "{\"call\": " + json_quote(call_name(p.call)) + ", \"kind\": " + json_quote(kind_name(kind_of(p.call))) +
             ", \"site\": " + json_quote(site) + ", \"path\": " + json_quote(path) +
             ", \"depth\": " + std::to_string(p.depth) + ", \"calls\": " + std::to_string(r.calls) +
             ", \"time_s\": " + json_number(r.inside_s) + ", \"max_s\": " + json_number(r.max_s) +
             ", \"slack_s\": " + json_number(r.slack_s) + ", \"comm_s\": " + json_number(r.cost_s) +
             ", \"phase_changes\": " + std::to_string(r.changes) + ",\n   \"predictors\": {\"last\": " +
             error_json(r.path_last) + ", \"median\": " + error_json(r.path_median) +
             ", \"type\": " + error_json(r.type_last) + ", \"naive\": " + error_json(r.naive) + "}}";
    }
    j += "\n ],\n \"types\": [";
    first = true;
    for (const auto& [call, e] : process_calls().type_errors()) {
        j += first ? "\n  " : ",\n  ";
        first = false;
        j += "{\"call\": " + json_quote(call_name(call)) + ", \"last\": " + error_json(e) + "}";
    }
    j += "\n ]}\n";
    return j;
}

}  // namespace aloe::mpi

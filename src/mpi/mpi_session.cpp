#include "mpi/mpi_session.hpp"

#include "mpi/call_table.hpp"
#include "runtime/clock.hpp"
#include "runtime/code_address.hpp"
#include "runtime/config.hpp"
#include "runtime/json_text.hpp"
#include "runtime/output_file.hpp"
#include "runtime/output_path.hpp"
#include "runtime/report.hpp"

#include <mpi.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>

namespace aloe::mpi {

namespace {

struct session {
    std::mutex mutex;
    int rank = -1;
    int size = 0;
    std::string library;  // the first line of MPI_Get_library_version
    bool written = false;
};

session& state() {
    static session* const s = new session;  // never destroyed: the exit hook runs after statics
    return *s;
}

void write_statistics() noexcept {
    try {
        const runtime::config& cfg = runtime::current_config();
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
    // A program that exits without MPI_Finalize still leaves its statistics.
    if (!exit_hook_set.exchange(true)) std::atexit([] { write_statistics(); });
    runtime::report_once({runtime::report_level::info, runtime::report_category::mpi, "I601",
                          "libaloe-mpi: rank " + std::to_string(rank) + " of " + std::to_string(size) + " under " + library,
                          ""});
}

void before_finalize() noexcept { write_statistics(); }

std::string statistics_json() {
    int rank = -1, size = 0;
    std::string library;
    {
        std::lock_guard lock(state().mutex);
        rank = state().rank;
        size = state().size;
        library = state().library;
    }
    using runtime::json_number;
    using runtime::json_quote;
    std::string j = "{\"tool\": \"libaloe-mpi\", \"pid\": " + std::to_string(getpid()) + ", \"rank\": " + std::to_string(rank) +
                    ", \"size\": " + std::to_string(size) + ", \"mpi_library\": " + json_quote(library) + ",\n \"calls\": [";
    bool first = true;
    for (const call_site_record& r : process_calls().rows()) {
        const std::string site = r.site == nullptr ? "(other sites)" : runtime::code_site_name(runtime::locate_code(r.site));
        j += first ? "\n  " : ",\n  ";
        first = false;
        j += "{\"call\": " + json_quote(call_name(r.call)) + ", \"kind\": " + json_quote(kind_name(kind_of(r.call))) +
             ", \"site\": " + json_quote(site) + ", \"calls\": " + std::to_string(r.calls) +
             ", \"time_s\": " + json_number(runtime::ticks_to_seconds(r.inside_ticks)) +
             ", \"max_s\": " + json_number(runtime::ticks_to_seconds(r.max_ticks)) + "}";
    }
    j += "\n ]}\n";
    return j;
}

}  // namespace aloe::mpi

// Every setting aloe reads from the environment, parsed once into an immutable struct.
//
// One table in config.cpp lists each variable with its type, default, range, help text,
// parser and printer; no other file calls getenv (a test checks it). Precedence, highest
// first: API value, `aloe run` option, ALOE_* variable, OMP_* variable, default.
// A bad value gives one warning naming the variable, the value and the value used instead.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aloe::runtime {

/// How a waiting thread passes time (OMP_WAIT_POLICY's three choices).
enum class wait_policy_kind { active, passive, hybrid };

/// Whether this process joins the node daemon aloed (src/coord/, docs/daemon.md): `off`
/// never; `auto` when one serves this user or the node (silent when none does); `on`
/// expects one and says once when there is none.
enum class daemon_mode { off, automatic, on };

/// Whether the ranks of an MPI job on one node lend each other cores through aloed
/// (issue 19, docs/mpi.md "Lending cores"): `off`; `reactive` (a rank lends when its
/// blocking call has waited a moment, DLB LeWI's rule); `predictive` (a rank lends at the
/// call's entry when its slack is predicted, only the rank predicted critical asks, and it sizes phases);
/// `auto` is predictive in an MPI job whose daemon answers, off otherwise.
enum class lend_mode { off, automatic, reactive, predictive };

/// Where workers are bound. `none` leaves placement to the OS.
enum class proc_bind_kind { none, close, spread };

/// How ALOE_PRINT_COUNTER prints (runtime/counter_printer.hpp).
enum class counter_print_format { text, csv };

/// ALOE_PRINT_COUNTER and its companions: which counters to print, when and where
/// (runtime/counter_printer.hpp, docs/counters.md).
struct counter_print_config {
    /// ALOE_PRINT_COUNTER: names or patterns with `*`, split at the commas outside braces.
    /// Empty: nothing is printed.
    std::vector<std::string> patterns;
    std::int64_t interval_ms = 0;  ///< ALOE_PRINT_COUNTER_INTERVAL; 0: only at exit
    bool reset = false;            ///< ALOE_PRINT_COUNTER_RESET: each print shows the change since the last
    counter_print_format format = counter_print_format::text;  ///< ALOE_PRINT_COUNTER_FORMAT
    /// ALOE_PRINT_COUNTER_DESTINATION as given (%p, %r, %h: output_path.hpp); empty: stdout.
    std::string destination;
};

/// Where an effective setting came from, for ALOE_DISPLAY_ENV and `--show-config`.
enum class setting_source { default_value, omp_environment, aloe_environment, api };

struct config {
    int num_threads = 0;  ///< 0: one worker per core hwloc reports
    /// Where num_threads came from: ALOE_NUM_THREADS, OMP_NUM_THREADS, default or API.
    setting_source num_threads_source = setting_source::default_value;
    int omp_num_threads = 0;  ///< OMP_NUM_THREADS (first of its list); 0 when unset or bad
    proc_bind_kind proc_bind = proc_bind_kind::none;
    wait_policy_kind wait_policy = wait_policy_kind::hybrid;
    /// Spin phase of the hybrid policy, microseconds. The default is a guess of the order
    /// of the gaps between the loops of one timestep; bench/micro should tune it.
    std::int64_t spin_us = 1000;
    std::string schedule;      ///< ALOE_SCHEDULE as given; empty means "none set"
    std::string stats_file;    ///< ALOE_STATS: write per-site statistics as JSON here at exit
    std::string tuning_file;   ///< ALOE_TUNING: adaptive sites' tuning, kept across runs (docs/tuning.md)
    // The GOMP interposer's (src/omp/, loaded by `aloe run`); other programs ignore them.
    std::string omp_rules_file;    ///< ALOE_OMP_RULES: per-loop-site schedules
    std::string omp_stats_file;    ///< ALOE_OMP_STATS: region and loop sites as JSON at exit
    std::string omp_summary_file;  ///< ALOE_OMP_SUMMARY: the per-site table at exit ("-": stderr)
    std::string trace_file;        ///< ALOE_TRACE: Chrome trace-event JSON at exit
    /// ALOE_OMP_SCHEDULE: the interposer's choice for every loop (`program`, `forward` or an
    /// aloe schedule); `aloe run --schedule` sets it. Empty: ALOE_SCHEDULE, else `program`.
    std::string omp_schedule;
    /// ALOE_OMP_REPORT_DIR: set by `aloe run`; every interposed process writes its own
    /// report into this private folder, and `aloe run` merges them.
    std::string omp_report_dir;
    daemon_mode daemon = daemon_mode::automatic;  ///< ALOE_DAEMON
    std::string daemon_socket;     ///< ALOE_DAEMON_SOCKET: the daemon's socket (empty: the usual places)
    lend_mode lend = lend_mode::automatic;  ///< ALOE_LEND
    std::string mpi_stats_file;    ///< ALOE_MPI_STATS: libaloe-mpi's per-rank call statistics (src/mpi/)
    bool mpi_calibration = true;   ///< ALOE_MPI_CALIBRATION: libaloe-mpi calibrates at MPI_Init
    /// ALOE_SITE_LIMIT: loop sites whose history and statistics are kept in full; colder
    /// ones beyond it are folded (src/loop/site_registry.hpp).
    std::int64_t site_limit = 4096;
    std::string verbose;       ///< ALOE_VERBOSE: report categories shown at info level
    bool display_env = false;  ///< ALOE_DISPLAY_ENV: print the effective settings at start-up
    counter_print_config print_counter;  ///< ALOE_PRINT_COUNTER*
    /// This process's place in a parallel job, from its launcher's variables (mpirun, srun,
    /// Hydra); read here because no other file reads the environment. Output file names use
    /// it so that the ranks of a job never write the same file (output_path.hpp).
    int job_rank = -1;          ///< -1: not launched as one rank of a job
    int job_size = 0;           ///< ranks in the job; 0: unknown
    std::string job_rank_from;  ///< the variable job_rank came from, e.g. "OMPI_COMM_WORLD_RANK"
    /// Where each variable's value came from, by variable name; a name that is absent has
    /// its default. (The ALOE_NUM_THREADS row shows num_threads_source instead, the source
    /// of the effective thread count.)
    std::map<std::string, setting_source, std::less<>> sources;
};

/// Largest thread count ALOE_NUM_THREADS and OMP_NUM_THREADS accept: a guess, well above
/// any shared-memory node today, that keeps a typo from starting millions of threads.
inline constexpr int max_num_threads = 4096;

/// Reads a variable; std::nullopt when unset. Tests pass a fake one.
using env_lookup = std::function<std::optional<std::string>(std::string_view name)>;

/// The process environment (the only getenv in aloe).
env_lookup process_environment();

/// Parses every setting from `env`, warning once per bad value through report.hpp.
config load_config(const env_lookup& env);

/// Only the ALOE_PRINT_COUNTER* rows and the job place (rank, for output names) of `env`,
/// parsed and warned about as load_config() does; every other field keeps its default, and
/// nothing is read or warned about when ALOE_PRINT_COUNTER is unset. The counter printer
/// reads these when the library loads, before the program could change the environment the
/// rest of the settings are read from at first use (a program may set ALOE_NUM_THREADS
/// before its first loop); current_config() reads the same rows again.
config load_counter_print_config(const env_lookup& env);

/// The settings of this process, read on first use and never changed afterwards.
/// Thread-safe. The first call also sets the report verbosity (ALOE_VERBOSE) and, with
/// ALOE_DISPLAY_ENV, prints format_settings() to stderr.
const config& current_config();

/// True while the calling thread is inside current_config()'s first load. report.cpp asks
/// this before it loads the configuration to learn ALOE_VERBOSE, so it never recurses.
bool config_loading_on_this_thread() noexcept;

/// The team size `cfg` asks for: num_threads, or `cores` when it is 0 (never below 1).
/// Pass topology::default_threads() as `cores`: the allowed cores, fewer under a cgroup CPU
/// quota. An explicit count wins even when it exceeds them (as in libgomp).
int resolved_num_threads(const config& cfg, int cores) noexcept;

class topology;

/// Where resolved_num_threads(cfg, machine.default_threads()) came from, in words:
/// "ALOE_NUM_THREADS", "OMP_NUM_THREADS", "API", or machine.default_threads_source()
/// ("hwloc cores", "allowed cores (affinity mask)", "cgroup CPU quota 1.5 CPUs", ...).
std::string describe_num_threads_source(const config& cfg, const topology& machine);

/// The same without the limits: "hwloc cores" (or "online CPUs" when `from_hwloc` is
/// false) for the default. Kept for callers that have no topology.
std::string describe_num_threads_source(const config& cfg, bool from_hwloc);

/// One row of the settings table, as shown by ALOE_DISPLAY_ENV and the docs.
struct setting_row {
    std::string name;     ///< e.g. "ALOE_NUM_THREADS"
    std::string type;     ///< e.g. "integer"
    std::string fallback; ///< default, printed
    std::string range;    ///< accepted values, printed
    std::string help;     ///< one line
    std::string value;    ///< effective value, printed
    setting_source source = setting_source::default_value;
};

/// The whole table with the effective values of `cfg`.
std::vector<setting_row> describe_settings(const config& cfg);

/// Prints describe_settings() as aligned text (ALOE_DISPLAY_ENV=1, `aloe info`).
std::string format_settings(const config& cfg);

/// The table as Markdown (name, type, default, range, help; no effective values), for
/// docs/configuration.md and `aloe info --settings-markdown`.
std::string format_settings_markdown();

std::string_view to_string(wait_policy_kind k);
std::string_view to_string(proc_bind_kind k);
std::string_view to_string(lend_mode k);
/// The mode a keyword names, in any case (as ALOE_LEND and `aloe run --lend` read it).
std::optional<lend_mode> lend_mode_named(std::string_view s);
std::string_view to_string(setting_source s);

}  // namespace aloe::runtime

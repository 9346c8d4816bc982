// Every environment variable aloe reads, in one table (STYLE.md, "Configuration").
//
// Each row names a variable and gives its type, default, accepted range, one line of help,
// a parser and a printer. load_config() runs every parser over the environment, then warns
// once for each rejected value, naming the variable, the value and the value used instead;
// the value used is the row's printer applied to the finished configuration, so it already
// reflects precedence (a bad ALOE_NUM_THREADS falls back to OMP_NUM_THREADS, then to one
// worker per core). The same table prints ALOE_DISPLAY_ENV's listing and the Markdown table
// in docs/configuration.md.
//
// Parsing rules, shared by every row: surrounding blanks are ignored, an empty value counts
// as unset, keywords are case-insensitive, and numbers are plain decimal digits (no sign,
// no trailing text, no overflow).
#include "runtime/config.hpp"

#include "runtime/plain_text.hpp"
#include "runtime/printable_text.hpp"
#include "runtime/report.hpp"
#include "runtime/topology.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>
#include <cstdlib>
#include <system_error>

namespace aloe::runtime {
namespace {

constexpr std::int64_t max_threads = max_num_threads;
// Upper bound on the hybrid wait policy's spin phase: one second.
constexpr std::int64_t max_spin_us = 1'000'000;
// ALOE_SITE_LIMIT's range: below 64 even a small program would churn its tuners; above a
// million the bound no longer bounds anything (about 1.4 KB per adaptive site).
constexpr std::int64_t min_site_limit = 64;
constexpr std::int64_t max_site_limit = 1'000'000;


std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(), [](char c) {
        return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    });
    return out;
}

// Plain decimal digits only: no sign, no blanks, no trailing text. `too_large` is set when
// the digits do not fit.
std::optional<std::int64_t> parse_digits(std::string_view s, bool& too_large) {
    too_large = false;
    if (s.empty() || s.find_first_not_of("0123456789") != std::string_view::npos) {
        return std::nullopt;
    }
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc::result_out_of_range) {
        too_large = true;
        return std::nullopt;
    }
    if (ec != std::errc{} || end != s.data() + s.size()) return std::nullopt;
    return v;
}

using parse_result = std::optional<std::string>;  // why the value was rejected; nullopt: ok

// A thread count: `min_value`..max_threads.
parse_result parse_thread_count(std::string_view s, std::int64_t min_value, int& out) {
    bool too_large = false;
    const std::optional<std::int64_t> v = parse_digits(s, too_large);
    if (too_large || (v && *v > max_threads)) {
        return "is larger than " + std::to_string(max_threads);
    }
    if (!v || *v < min_value) return std::string("is not a positive integer");
    out = static_cast<int>(*v);
    return std::nullopt;
}

std::string join_names(std::initializer_list<std::string_view> names) {
    std::string out;
    for (std::string_view n : names) {
        if (!out.empty()) out += ", ";
        out += n;
    }
    return out;
}

// --- parsers: each takes the trimmed, non-empty value and fills `cfg` on success ---------

parse_result parse_num_threads(std::string_view s, config& cfg) {
    int n = 0;
    if (parse_result bad = parse_thread_count(s, 0, n)) return bad;
    cfg.num_threads = n;
    cfg.num_threads_source = setting_source::aloe_environment;
    return std::nullopt;
}

// OMP_NUM_THREADS is a list, one count per nesting level; aloe uses the first. Every
// element must be valid so that a typo deeper in the list is not silently accepted.
parse_result parse_omp_num_threads(std::string_view s, config& cfg) {
    int first = 0;
    std::string_view rest = s;
    for (bool is_first = true;; is_first = false) {
        const std::size_t comma = rest.find(',');
        int n = 0;
        if (parse_thread_count(trim(rest.substr(0, comma)), 1, n)) {
            return std::string("is not a comma-separated list of positive integers (1..") +
                   std::to_string(max_threads) + ")";
        }
        if (is_first) first = n;
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
    }
    cfg.omp_num_threads = first;
    if (cfg.num_threads_source != setting_source::aloe_environment) {
        cfg.num_threads = first;
        cfg.num_threads_source = setting_source::omp_environment;
    }
    return std::nullopt;
}

parse_result parse_proc_bind(std::string_view s, config& cfg) {
    const std::string v = lower(s);
    if (v == "none" || v == "false") cfg.proc_bind = proc_bind_kind::none;
    else if (v == "close" || v == "true") cfg.proc_bind = proc_bind_kind::close;
    else if (v == "spread") cfg.proc_bind = proc_bind_kind::spread;
    else return "is not one of " + join_names({"none", "close", "spread", "true", "false"});
    return std::nullopt;
}

parse_result parse_wait_policy(std::string_view s, config& cfg) {
    const std::string v = lower(s);
    if (v == "active") cfg.wait_policy = wait_policy_kind::active;
    else if (v == "passive") cfg.wait_policy = wait_policy_kind::passive;
    else if (v == "hybrid") cfg.wait_policy = wait_policy_kind::hybrid;
    else return "is not one of " + join_names({"active", "passive", "hybrid"});
    return std::nullopt;
}

parse_result parse_daemon_mode(std::string_view s, config& cfg) {
    const std::string v = lower(s);
    if (v == "off") cfg.daemon = daemon_mode::off;
    else if (v == "auto") cfg.daemon = daemon_mode::automatic;
    else if (v == "on") cfg.daemon = daemon_mode::on;
    else return "is not one of " + join_names({"off", "auto", "on"});
    return std::nullopt;
}

parse_result parse_lend_mode(std::string_view s, config& cfg) {
    const std::optional<lend_mode> mode = lend_mode_named(s);
    if (!mode) return "is not one of " + join_names({"off", "auto", "reactive", "predictive"});
    cfg.lend = *mode;
    return std::nullopt;
}

parse_result parse_spin_us(std::string_view s, config& cfg) {
    bool too_large = false;
    const std::optional<std::int64_t> v = parse_digits(s, too_large);
    if (!v || *v > max_spin_us) {
        return "is not an integer in 0.." + std::to_string(max_spin_us);
    }
    cfg.spin_us = *v;
    return std::nullopt;
}

parse_result parse_site_limit(std::string_view s, config& cfg) {
    bool too_large = false;
    const std::optional<std::int64_t> v = parse_digits(s, too_large);
    if (!v || *v < min_site_limit || *v > max_site_limit)
        return "is not an integer in " + std::to_string(min_site_limit) + ".." + std::to_string(max_site_limit);
    cfg.site_limit = *v;
    return std::nullopt;
}

parse_result parse_schedule(std::string_view s, config& cfg) {
    cfg.schedule = std::string(s);  // the loop layer parses and validates it
    return std::nullopt;
}

// Paths: stored as given; whoever writes or reads the file reports a problem with it.
template <std::string config::*field>
parse_result parse_text(std::string_view s, config& cfg) {
    cfg.*field = std::string(s);
    return std::nullopt;
}

// "all", "none", or a comma list of report categories; stored normalised ("" for none).
parse_result parse_verbose(std::string_view s, config& cfg) {
    const std::string v = lower(s);
    if (v == "all" || v == "none") {
        cfg.verbose = v == "all" ? "all" : "";
        return std::nullopt;
    }
    std::string normalised;
    std::string_view rest = v;
    for (;;) {
        const std::size_t comma = rest.find(',');
        const std::string_view item = trim(rest.substr(0, comma));
        if (!parse_report_category(item)) {
            std::string known = "all, none";
            for (report_category c : all_report_categories) {
                known += ", ";
                known += to_string(c);
            }
            return "names unknown category '" + printable(item) + "' (known: " + known + ")";
        }
        if (!normalised.empty()) normalised += ',';
        normalised += item;
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
    }
    cfg.verbose = normalised;
    return std::nullopt;
}

// A boolean: 1, true or on; 0, false or off (any case).
parse_result parse_boolean(std::string_view s, bool& out) {
    const std::string v = lower(s);
    if (v == "1" || v == "true" || v == "on") out = true;
    else if (v == "0" || v == "false" || v == "off") out = false;
    else return "is not one of " + join_names({"0", "1", "true", "false", "on", "off"});
    return std::nullopt;
}

template <bool config::*Member>
parse_result parse_flag(std::string_view s, config& cfg) {
    return parse_boolean(s, cfg.*Member);
}

// ALOE_PRINT_COUNTER: names split at the commas outside braces, so an instance that holds a
// comma (`/loop{a,b}/time`) stays one name. Every item must be non-empty: a stray comma is
// a typo, not "no counter".
parse_result parse_print_counter(std::string_view s, config& cfg) {
    std::vector<std::string> names;
    int depth = 0;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= s.size(); ++i) {
        if (i < s.size() && s[i] == '{') ++depth;
        if (i < s.size() && s[i] == '}' && depth > 0) --depth;
        if (i < s.size() && (s[i] != ',' || depth > 0)) continue;
        const std::string_view item = trim(s.substr(start, i - start));
        if (item.empty())
            return "is not a comma-separated list of counter names: name " + std::to_string(names.size() + 1) + " is empty";
        names.emplace_back(item);
        start = i + 1;
    }
    cfg.print_counter.patterns = std::move(names);
    return std::nullopt;
}

// Milliseconds between prints: up to a day, beyond which a program is better served by
// reading its counters itself.
constexpr std::int64_t max_print_interval_ms = 86'400'000;

parse_result parse_print_interval(std::string_view s, config& cfg) {
    bool too_large = false;
    const std::optional<std::int64_t> v = parse_digits(s, too_large);
    if (!v || *v > max_print_interval_ms)
        return "is not a whole number of milliseconds in 0.." + std::to_string(max_print_interval_ms);
    cfg.print_counter.interval_ms = *v;
    return std::nullopt;
}

parse_result parse_print_reset(std::string_view s, config& cfg) { return parse_boolean(s, cfg.print_counter.reset); }

parse_result parse_print_format(std::string_view s, config& cfg) {
    const std::string v = lower(s);
    if (v == "text") cfg.print_counter.format = counter_print_format::text;
    else if (v == "csv") cfg.print_counter.format = counter_print_format::csv;
    else return "is not one of " + join_names({"text", "csv"});
    return std::nullopt;
}

parse_result parse_print_destination(std::string_view s, config& cfg) {
    cfg.print_counter.destination = std::string(s);  // the printer reports a file it cannot write (W017)
    return std::nullopt;
}

// --- printers: the effective value, as ALOE_DISPLAY_ENV and warnings show it -------------

std::string or_none(const std::string& s) { return s.empty() ? "(none)" : s; }

std::string print_num_threads(const config& cfg) {
    if (cfg.num_threads > 0) {  // no need to discover the machine
        const std::string n = std::to_string(cfg.num_threads);
        if (cfg.num_threads_source == setting_source::aloe_environment) return n;
        return n + " (" + describe_num_threads_source(cfg, true) + ")";
    }
    const topology& machine = topology::machine();
    return std::to_string(resolved_num_threads(cfg, machine.default_threads())) + " (" +
           describe_num_threads_source(cfg, machine) + ")";
}

std::string print_omp_num_threads(const config& cfg) {
    if (cfg.omp_num_threads == 0) return "(none)";
    std::string out = std::to_string(cfg.omp_num_threads);
    if (cfg.num_threads_source == setting_source::aloe_environment) {
        out += " (overridden by ALOE_NUM_THREADS)";
    }
    return out;
}

std::string print_proc_bind(const config& cfg) { return std::string(to_string(cfg.proc_bind)); }
std::string print_wait_policy(const config& cfg) {
    return std::string(to_string(cfg.wait_policy));
}
std::string print_spin_us(const config& cfg) { return std::to_string(cfg.spin_us); }
std::string print_daemon_mode(const config& cfg) {
    switch (cfg.daemon) {
    case daemon_mode::off: return "off";
    case daemon_mode::automatic: return "auto";
    case daemon_mode::on: return "on";
    }
    return "?";
}
std::string print_lend_mode(const config& cfg) { return std::string(to_string(cfg.lend)); }
std::string print_site_limit(const config& cfg) { return std::to_string(cfg.site_limit); }
std::string print_schedule(const config& cfg) { return or_none(cfg.schedule); }
template <std::string config::*field>
std::string print_text(const config& cfg) {
    return or_none(cfg.*field);
}
std::string print_verbose(const config& cfg) {
    return cfg.verbose.empty() ? "none" : cfg.verbose;
}
std::string print_display_env(const config& cfg) { return cfg.display_env ? "true" : "false"; }
std::string print_print_counter(const config& cfg) {
    std::string out;
    for (const std::string& name : cfg.print_counter.patterns) out += (out.empty() ? "" : ",") + name;
    return or_none(out);
}
std::string print_print_interval(const config& cfg) {
    const std::int64_t ms = cfg.print_counter.interval_ms;
    return ms == 0 ? "0 (at exit only)" : std::to_string(ms);
}
std::string print_print_reset(const config& cfg) { return cfg.print_counter.reset ? "true" : "false"; }
std::string print_print_format(const config& cfg) {
    return cfg.print_counter.format == counter_print_format::csv ? "csv" : "text";
}
std::string print_print_destination(const config& cfg) {
    return cfg.print_counter.destination.empty() ? "(none): stdout" : cfg.print_counter.destination;
}
std::string print_mpi_calibration(const config& cfg) { return cfg.mpi_calibration ? "on" : "off"; }

// --- the table ---------------------------------------------------------------------------

struct setting_spec {
    std::string_view name;
    std::string_view warning_id;  ///< stable ID of the bad-value warning
    std::string_view type;
    std::string_view fallback;
    std::string_view range;
    std::string_view help;
    setting_source source_when_set;
    parse_result (*parse)(std::string_view value, config& cfg);
    std::string (*print)(const config& cfg);
    /// What a warning about a bad value says is used instead; `print` when null.
    std::string (*print_used)(const config& cfg) = nullptr;
};

static_assert(max_num_threads == 4096, "update the ranges in settings_table");

// Parse order matters once: ALOE_NUM_THREADS before OMP_NUM_THREADS, so the OMP parser can
// see that the ALOE variable already set the count.
constexpr std::array settings_table{
    setting_spec{"ALOE_NUM_THREADS", "W101", "integer", "0 (one worker per core)",
                 "0..4096", "Team size; 0 or unset: one worker per allowed core (affinity mask, cgroup cpuset; fewer under a cgroup CPU quota).",
                 setting_source::aloe_environment, parse_num_threads, print_num_threads},
    setting_spec{"OMP_NUM_THREADS", "W102", "integer list", "(none)",
                 "1..4096, comma list (first used)",
                 "Team size when ALOE_NUM_THREADS is unset; only the first level is used.",
                 setting_source::omp_environment, parse_omp_num_threads,
                 print_omp_num_threads, print_num_threads},
    setting_spec{"ALOE_PROC_BIND", "W103", "keyword", "none",
                 "none, close, spread; true = close, false = none",
                 "Worker binding: none (the OS places threads), close (worker i on core i "
                 "mod cores), spread (workers spaced evenly over the cores).",
                 setting_source::aloe_environment, parse_proc_bind, print_proc_bind},
    setting_spec{"ALOE_WAIT_POLICY", "W104", "keyword", "hybrid", "active, passive, hybrid",
                 "How idle workers wait: active spins, passive sleeps at once, hybrid spins "
                 "2 us, then spins yielding the CPU for ALOE_SPIN_US, then sleeps.",
                 setting_source::aloe_environment, parse_wait_policy, print_wait_policy},
    setting_spec{"ALOE_SPIN_US", "W105", "integer", "1000", "0..1000000",
                 "Yielding spin phase of the hybrid wait policy, in microseconds; also the longest a spare "
                 "worker on a CPU lent by another rank waits awake between its rank's loops.",
                 setting_source::aloe_environment, parse_spin_us, print_spin_us},
    setting_spec{"ALOE_SCHEDULE", "W106", "schedule", "(none): static",
                 "kind[,key=value...], e.g. static, dynamic,chunk=4, hybrid,fs=0.8",
                 "Schedule of loops that use the runtime schedule; checked by the loop layer "
                 "when first used.",
                 setting_source::aloe_environment, parse_schedule, print_schedule},
    setting_spec{"ALOE_STATS", "W107", "path", "(none)", "file path",
                 "Write per-loop-site statistics as JSON to this file at exit.",
                 setting_source::aloe_environment, parse_text<&config::stats_file>, print_text<&config::stats_file>},
    setting_spec{"ALOE_VERBOSE", "W108", "category list", "none",
                 "all, none, or a comma list of runtime, topology, config, loop, caps, omp, mpi, coord",
                 "Report categories whose info messages are printed (warnings always are).",
                 setting_source::aloe_environment, parse_verbose, print_verbose},
    setting_spec{"ALOE_DISPLAY_ENV", "W109", "boolean", "false", "0, 1, true, false, on, off",
                 "Print the effective settings and their sources to stderr at start-up.",
                 setting_source::aloe_environment, parse_flag<&config::display_env>, print_display_env},
    setting_spec{"ALOE_OMP_RULES", "W110", "path", "(none)", "file path",
                 "GOMP interposer (aloe run --rules): a file of 'site schedule' lines choosing "
                 "the schedule per OpenMP loop site.",
                 setting_source::aloe_environment, parse_text<&config::omp_rules_file>, print_text<&config::omp_rules_file>},
    setting_spec{"ALOE_OMP_STATS", "W111", "path", "(none)", "file path",
                 "GOMP interposer (aloe run --stats): write region and loop sites as JSON at exit.",
                 setting_source::aloe_environment, parse_text<&config::omp_stats_file>, print_text<&config::omp_stats_file>},
    setting_spec{"ALOE_OMP_SUMMARY", "W112", "path", "(none)", "file path, or - for stderr",
                 "GOMP interposer: write the per-site summary table at exit (aloe run prints it).",
                 setting_source::aloe_environment, parse_text<&config::omp_summary_file>, print_text<&config::omp_summary_file>},
    setting_spec{"ALOE_TRACE", "W113", "path", "(none)", "file path",
                 "GOMP interposer (aloe run --trace): write a Chrome trace-event JSON of regions "
                 "and loops per thread at exit (open it in Perfetto).",
                 setting_source::aloe_environment, parse_text<&config::trace_file>, print_text<&config::trace_file>},
    setting_spec{"ALOE_OMP_SCHEDULE", "W114", "choice", "(none): ALOE_SCHEDULE, else program",
                 "program, forward, or an aloe schedule",
                 "GOMP interposer (aloe run --schedule): what runs every OpenMP loop; aloe's own "
                 "loops ignore it.",
                 setting_source::aloe_environment, parse_text<&config::omp_schedule>, print_text<&config::omp_schedule>},
    setting_spec{"ALOE_OMP_REPORT_DIR", "W115", "path", "(none)", "folder path",
                 "Set by aloe run: every interposed process writes its own report into this "
                 "private folder, and aloe run merges them.",
                 setting_source::aloe_environment, parse_text<&config::omp_report_dir>, print_text<&config::omp_report_dir>},
    setting_spec{"ALOE_SITE_LIMIT", "W116", "integer", "4096", "64..1000000",
                 "Loop sites kept in full (history, tuner, per-thread statistics); the coldest "
                 "beyond it are folded into one summary row.",
                 setting_source::aloe_environment, parse_site_limit, print_site_limit},
    setting_spec{"ALOE_TUNING", "W117", "path", "(none)", "file path",
                 "Keep what each adaptive loop site learnt in this file and start the next run of "
                 "the same binary from it (docs/tuning.md).",
                 setting_source::aloe_environment, parse_text<&config::tuning_file>, print_text<&config::tuning_file>},
    setting_spec{"ALOE_MPI_STATS", "W118", "path", "(none)", "file path (%r, %p, %h; rank inserted)",
                 "libaloe-mpi: write each rank's MPI calls (time inside, per call and call site) as "
                 "JSON when MPI is finalised, or at exit.",
                 setting_source::aloe_environment, parse_text<&config::mpi_stats_file>, print_text<&config::mpi_stats_file>},
    setting_spec{"ALOE_MPI_CALIBRATION", "W119", "boolean", "on", "0, 1, true, false, on, off",
                 "libaloe-mpi: time a few hundred small collectives at MPI_Init (the communication "
                 "cost that slack is measured beyond, and the naive slack prediction); off on any "
                 "rank turns it off on all.",
                 setting_source::aloe_environment, parse_flag<&config::mpi_calibration>, print_mpi_calibration},
    // Read when the library loads (load_counter_print_config): their rows stay together.
    setting_spec{"ALOE_PRINT_COUNTER", "W120", "counter list", "(none)",
                 "counter names or patterns with *, comma list",
                 "Print these counters at exit, HPX-style, e.g. /threads{locality#0/total}/idle-rate or "
                 "/threads{*}/idle-rate (docs/counters.md); a name that matches nothing is reported (W016).",
                 setting_source::aloe_environment, parse_print_counter, print_print_counter},
    setting_spec{"ALOE_PRINT_COUNTER_INTERVAL", "W121", "integer", "0 (at exit only)", "0..86400000 (milliseconds)",
                 "Also print ALOE_PRINT_COUNTER's counters every this many milliseconds (a background thread "
                 "that sleeps in between).",
                 setting_source::aloe_environment, parse_print_interval, print_print_interval},
    setting_spec{"ALOE_PRINT_COUNTER_RESET", "W122", "boolean", "false", "0, 1, true, false, on, off",
                 "Each print shows what changed since the previous print (HPX's --hpx:reset-counters), "
                 "not the values since the start.",
                 setting_source::aloe_environment, parse_print_reset, print_print_reset},
    setting_spec{"ALOE_PRINT_COUNTER_FORMAT", "W123", "keyword", "text", "text, csv",
                 "text: a line per counter, name,sample,seconds,[s],value,[unit] (HPX's); csv: a header of "
                 "names, then a row per print.",
                 setting_source::aloe_environment, parse_print_format, print_print_format},
    setting_spec{"ALOE_PRINT_COUNTER_DESTINATION", "W124", "path", "(none): stdout",
                 "file path (%p, %r, %h; rank inserted)",
                 "Write the printed counters to this file (whole, at exit) instead of stdout.",
                 setting_source::aloe_environment, parse_print_destination, print_print_destination},
    setting_spec{"ALOE_DAEMON", "W125", "keyword", "auto", "off, auto, on",
                 "Join the node daemon aloed, which shares the node's cores between programs by "
                 "measured efficiency: auto when one runs, on to expect one, off never (docs/daemon.md).",
                 setting_source::aloe_environment, parse_daemon_mode, print_daemon_mode},
    setting_spec{"ALOE_DAEMON_SOCKET", "W126", "path", "(none): the user's, then the node's",
                 "socket path",
                 "The daemon's socket, for its clients and for aloed itself; unset: "
                 "$XDG_RUNTIME_DIR/aloe/aloed.sock (else /tmp/aloe-<uid>/aloed.sock), then /run/aloe/aloed.sock.",
                 setting_source::aloe_environment, parse_text<&config::daemon_socket>, print_text<&config::daemon_socket>},
    setting_spec{"ALOE_LEND", "W127", "keyword", "auto", "off, auto, reactive, predictive",
                 "Ranks of an MPI job on one node lend their cores through aloed while they wait in MPI, "
                 "and the rank the others wait for borrows them: reactive lends after a blocking call has "
                 "waited a moment (DLB LeWI's rule), predictive at the call when slack is predicted; auto is "
                 "predictive where a daemon answers in an MPI job, off otherwise (docs/mpi.md).",
                 setting_source::aloe_environment, parse_lend_mode, print_lend_mode},
};

thread_local bool loading_on_this_thread = false;

struct loading_scope {
    loading_scope() { loading_on_this_thread = true; }
    ~loading_scope() { loading_on_this_thread = false; }
    loading_scope(const loading_scope&) = delete;
    loading_scope& operator=(const loading_scope&) = delete;
};

category_set verbose_categories(const config& cfg) {
    if (cfg.verbose == "all") return all_categories;
    category_set set = no_categories;
    std::string_view rest = cfg.verbose;
    while (!rest.empty()) {
        const std::size_t comma = rest.find(',');
        if (std::optional<report_category> c = parse_report_category(rest.substr(0, comma))) {
            set |= category_bit(*c);
        }
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
    }
    return set;
}

std::string markdown_cell(std::string_view s) {
    std::string out;
    for (char c : s) {
        if (c == '|') out += '\\';
        out += c;
    }
    return out;
}

}  // namespace

env_lookup process_environment() {
    return [](std::string_view name) -> std::optional<std::string> {
        // The one getenv in aloe (STYLE.md, "Configuration"); tests/unit/runtime/
        // no_getenv_test.cpp fails if another file calls it.
        const char* value = std::getenv(std::string(name).c_str());
        if (value == nullptr) return std::nullopt;
        return std::string(value);
    };
}

namespace {

// The launchers' own variables: a rank and the size of what it is a rank of. Open MPI
// (mpirun), MPICH's Hydra (PMI_*), PMIx launchers, and Slurm's srun (a step's task count:
// SLURM_NTASKS is also set in a batch script, which is one process, so it is not used).
// A malformed value is ignored: these are not aloe's settings to warn about.
struct launcher_variables {
    std::string_view rank;
    std::string_view size;
};
constexpr launcher_variables launchers[] = {
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
    {"PMI_RANK", "PMI_SIZE"},
    {"PMIX_RANK", "PMIX_SIZE"},
    {"SLURM_PROCID", "SLURM_STEP_NUM_TASKS"},
};

void read_job_place(const env_lookup& env, config& cfg) {
    for (const launcher_variables& l : launchers) {
        const std::optional<std::string> rank = env(l.rank);
        if (!rank) continue;
        bool too_large = false;
        const std::optional<std::int64_t> r = parse_digits(trim(*rank), too_large);
        if (!r || *r > std::numeric_limits<int>::max()) continue;
        cfg.job_rank = static_cast<int>(*r);
        cfg.job_rank_from = std::string(l.rank);
        if (const std::optional<std::string> size = env(l.size)) {
            const std::optional<std::int64_t> n = parse_digits(trim(*size), too_large);
            if (n && *n > *r && *n <= std::numeric_limits<int>::max()) cfg.job_size = static_cast<int>(*n);
        }
        return;
    }
}

constexpr std::string_view print_counter_prefix = "ALOE_PRINT_COUNTER";

// The rows `wanted` accepts (every row: nullptr) parsed from `env`, and the job place.
config load_rows(const env_lookup& env, bool (*wanted)(std::string_view name)) {
    struct rejected {
        const setting_spec* spec;
        std::string value;
        std::string why;
    };
    config cfg;
    std::vector<rejected> bad;
    for (const setting_spec& spec : settings_table) {
        if (wanted != nullptr && !wanted(spec.name)) continue;
        const std::optional<std::string> raw = env(spec.name);
        if (!raw || trim(*raw).empty()) continue;
        if (parse_result why = spec.parse(trim(*raw), cfg)) {
            bad.push_back({&spec, *raw, std::move(*why)});
        } else {
            cfg.sources[std::string(spec.name)] = spec.source_when_set;
        }
    }
    read_job_place(env, cfg);
    // Warn only now, so "using …" shows the value the finished configuration really uses.
    for (const rejected& r : bad) {
        report_once({report_level::warning, report_category::config, r.spec->warning_id,
                     std::string(r.spec->name) + "='" + printable(r.value) + "' " + r.why,
                     (r.spec->print_used != nullptr ? r.spec->print_used : r.spec->print)(cfg)});
    }
    return cfg;
}

}  // namespace

config load_config(const env_lookup& env) { return load_rows(env, nullptr); }

config load_counter_print_config(const env_lookup& env) {
    const std::optional<std::string> names = env(print_counter_prefix);
    if (!names || trim(*names).empty()) return {};
    return load_rows(env, [](std::string_view name) { return name.starts_with(print_counter_prefix); });
}

const config& current_config() {
    // Never destroyed, like the team and the topology: the ALOE_STATS writer runs at exit.
    static const config& cfg = *[] {
        auto* c_ptr = new config;
        config& c = *c_ptr;
        {
            loading_scope scope;
            c = load_config(process_environment());
        }
        set_report_verbosity(verbose_categories(c));
        if (c.display_env) {
            report_text("aloe: effective settings (ALOE_DISPLAY_ENV)\n" + format_settings(c));
        }
        return c_ptr;
    }();
    return cfg;
}

bool config_loading_on_this_thread() noexcept { return loading_on_this_thread; }

int resolved_num_threads(const config& cfg, int cores) noexcept {
    if (cfg.num_threads > 0) return cfg.num_threads;
    return std::max(cores, 1);
}

std::string describe_num_threads_source(const config& cfg, const topology& machine) {
    if (cfg.num_threads == 0) return machine.default_threads_source();
    return describe_num_threads_source(cfg, machine.from_hwloc());
}

std::string describe_num_threads_source(const config& cfg, bool from_hwloc) {
    if (cfg.num_threads == 0) return from_hwloc ? "hwloc cores" : "online CPUs";
    switch (cfg.num_threads_source) {
    case setting_source::aloe_environment: return "ALOE_NUM_THREADS";
    case setting_source::omp_environment: return "OMP_NUM_THREADS";
    case setting_source::api: return "API";
    case setting_source::default_value: break;
    }
    return "default";
}

std::vector<setting_row> describe_settings(const config& cfg) {
    std::vector<setting_row> rows;
    rows.reserve(settings_table.size());
    for (const setting_spec& spec : settings_table) {
        setting_row row;
        row.name = spec.name;
        row.type = spec.type;
        row.fallback = spec.fallback;
        row.range = spec.range;
        row.help = spec.help;
        row.value = spec.print(cfg);
        if (spec.name == "ALOE_NUM_THREADS") {
            row.source = cfg.num_threads_source;
        } else if (auto it = cfg.sources.find(spec.name); it != cfg.sources.end()) {
            row.source = it->second;
        }
        rows.push_back(std::move(row));
    }
    return rows;
}

std::string format_settings(const config& cfg) {
    const std::vector<setting_row> rows = describe_settings(cfg);
    std::size_t name_width = 0;
    std::size_t value_width = 0;
    for (const setting_row& r : rows) {
        name_width = std::max(name_width, r.name.size());
        value_width = std::max(value_width, r.value.size());
    }
    std::string out;
    for (const setting_row& r : rows) {
        out += "  ";
        out += r.name;
        out.append(name_width - r.name.size() + 2, ' ');
        out += r.value;
        out.append(value_width - r.value.size() + 2, ' ');
        out += to_string(r.source);
        out += '\n';
    }
    return out;
}

std::string format_settings_markdown() {
    std::string out = "| Variable | Type | Default | Accepted values | Description |\n"
                      "|---|---|---|---|---|\n";
    for (const setting_spec& spec : settings_table) {
        out += "| `";
        out += spec.name;
        out += "` | " + markdown_cell(spec.type);
        out += " | " + markdown_cell(spec.fallback);
        out += " | " + markdown_cell(spec.range);
        out += " | " + markdown_cell(spec.help);
        out += " |\n";
    }
    return out;
}

std::string_view to_string(wait_policy_kind k) {
    switch (k) {
    case wait_policy_kind::active: return "active";
    case wait_policy_kind::passive: return "passive";
    case wait_policy_kind::hybrid: return "hybrid";
    }
    return "?";
}

std::string_view to_string(proc_bind_kind k) {
    switch (k) {
    case proc_bind_kind::none: return "none";
    case proc_bind_kind::close: return "close";
    case proc_bind_kind::spread: return "spread";
    }
    return "?";
}

std::optional<lend_mode> lend_mode_named(std::string_view s) {
    for (const lend_mode k : {lend_mode::off, lend_mode::automatic, lend_mode::reactive, lend_mode::predictive})
        if (lower(s) == to_string(k)) return k;
    return std::nullopt;
}

std::string_view to_string(lend_mode k) {
    switch (k) {
    case lend_mode::off: return "off";
    case lend_mode::automatic: return "auto";
    case lend_mode::reactive: return "reactive";
    case lend_mode::predictive: return "predictive";
    }
    return "?";
}

std::string_view to_string(setting_source s) {
    switch (s) {
    case setting_source::default_value: return "default";
    case setting_source::omp_environment: return "OMP environment";
    case setting_source::aloe_environment: return "ALOE environment";
    case setting_source::api: return "API";
    }
    return "?";
}

}  // namespace aloe::runtime

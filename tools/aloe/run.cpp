// `aloe run [options] -- program args`: runs an unmodified OpenMP program (GCC, libgomp)
// with libaloe-gomp.so preloaded, passes its exit status through, and prints the
// interposer's per-site summary when it ends.
//
// Everything the program will see is checked first (the options, and the ALOE_*/OMP_*
// variables it inherits), so a typo stops before the program starts: exit 2, naming it.
// The options become the interposer's environment (ALOE_OMP_SCHEDULE, ALOE_NUM_THREADS and
// OMP_NUM_THREADS, ALOE_OMP_RULES, ALOE_TRACE, ALOE_OMP_REPORT_DIR); every process that loads
// the interposer writes its own report into a private folder (run_reports.hpp), which this
// command reads back when the program has ended and writes out as one summary, one
// statistics file and one trace.
//
// Signals: those another process sends to aloe run (kill, timeout, Slurm, mpirun) are passed
// on to the program; those the terminal sends already reach the program, which shares aloe
// run's process group. The program is killed if aloe run dies (PR_SET_PDEATHSIG).
#include "commands.hpp"
#include "run_reports.hpp"

#include "omp/loop_rules.hpp"
#include "omp/node_sharing.hpp"
#include "omp/process_report.hpp"
#include "runtime/config.hpp"
#include "runtime/local_ranks.hpp"
#include "runtime/output_file.hpp"
#include "runtime/output_path.hpp"
#include "runtime/printable_text.hpp"
#include "runtime/process_state.hpp"
#include "runtime/report.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

extern char** environ;

namespace aloe::cli {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view help_text =
    R"(usage: aloe run [options] [--] program [args...]

Runs an OpenMP program built with GCC (-fopenmp; C, C++ or Fortran) unchanged, with aloe
scheduling the worksharing loops that reach the runtime: schedule(dynamic), guided, runtime,
nonmonotonic, and combined parallel-for loops. Loops compiled as schedule(static) (GCC's
default) never call the runtime; write schedule(runtime) to hand one to aloe.

options (each also as --option=value):
  --schedule S       the loops' schedule: an aloe schedule (adaptive, staggered,fs=0.8, ...),
                     'program' (each loop's own schedule, run by aloe; the default) or
                     'forward' (libgomp runs every loop; aloe only measures)
  --threads N        team size of parallel regions that leave it to the runtime (1..4096)
  --rules FILE       per-loop-site schedules: lines '<site> <schedule>', site as printed in
                     the summary (module+0xOFFSET), file:line, or * (see docs/openmp.md)
  --stats FILE       write region and loop sites of every process as JSON at exit
  --trace FILE       write a Chrome trace-event JSON (open it in ui.perfetto.dev)
  --summary WHERE    '-' (stderr, the default), a file, or 'none'
  --tuning FILE      keep what each adaptive loop site learnt in FILE, and start from what an
                     earlier run of the same binary left there (one file for every process;
                     see docs/tuning.md; 'aloe tune' fills it)
  --library PATH     the interposer to preload (default: the one installed with aloe)
  --mpi              also preload libaloe-mpi: each rank's slack per MPI call path, spent by
                     adaptive and slack=on loops (docs/mpi.md),
                     e.g. mpirun -np 4 aloe run --mpi -- ./app
  --mpi-stats FILE   with --mpi: write each rank's MPI calls as JSON (ALOE_MPI_STATS)
  --lend MODE        with --mpi: ranks of the job on one node lend their cores through aloed
                     while they wait in MPI: predictive, reactive or off (ALOE_LEND; the
                     default, auto, is predictive where a daemon runs; docs/mpi.md)
  --daemon           share the node's cores with other programs through aloed: start this
                     user's daemon unless one serves, and expect it (ALOE_DAEMON=on; without
                     this option the program joins a running daemon anyway; docs/daemon.md)

Defaults come from ALOE_OMP_SCHEDULE (else ALOE_SCHEDULE), ALOE_OMP_RULES, ALOE_OMP_STATS,
ALOE_TRACE, ALOE_OMP_SUMMARY, ALOE_TUNING and ALOE_MPI_STATS. File names may hold %p (process id), %r (MPI rank), %h
(host); in a job of several ranks, the rank is added to a name that has neither.

Every process of the program that loads the interposer (a shell's children, mpirun's local
ranks) reports, and the outputs hold them all. The program's exit status is passed through;
death by a signal gives 128 + the signal; an output that cannot be written turns a 0 into 1.
)";

struct run_options {
    std::optional<std::string> schedule, threads, rules, stats, trace, summary, tuning, library, mpi_stats, lend;
    bool mpi = false;
    bool daemon = false;
    std::vector<std::string> program;
};

// What the program will run with, every value checked.
struct run_plan {
    omp::run_request request;
    bool choice_is_schedule = false;
    bool drop_aloe_schedule = false;  // ALOE_SCHEDULE holds `program`/`forward`: not for aloe's loops
    std::string rules_file_itself;  // the rules file behind any link
    std::string stats;    // absolute, expanded; empty: none
    std::string trace;
    std::string summary;  // "-", "none" or an absolute, expanded path
    std::string tuning;   // absolute; empty: as the environment has it
    std::string library;
    std::string mpi_library;  // empty: no --mpi
    std::string mpi_stats;    // absolute; empty: as the environment has it
};

// A path the user gave, safe to print (control bytes and broken UTF-8 escaped).
std::string quoted_path(const std::string& path) { return runtime::printable(path, runtime::printable_path_limit); }

fs::path default_library() {
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    const fs::path installed = self.parent_path().parent_path() / "lib" / "libaloe-gomp.so";
    if (fs::exists(installed, ec)) return installed;
    return fs::path(ALOE_BUILD_GOMP_LIBRARY);
}

// libaloe-mpi beside the interposer (installed), else the build tree's; empty when aloe was
// configured without an MPI.
fs::path default_mpi_library() {
    std::error_code ec;
    const fs::path installed = default_library().parent_path() / "libaloe-mpi.so";
    if (fs::exists(installed, ec)) return installed;
#ifdef ALOE_BUILD_MPI_LIBRARY
    return fs::path(ALOE_BUILD_MPI_LIBRARY);
#else
    return {};
#endif
}

std::string absolute(const std::string& path) {
    std::error_code ec;
    const fs::path p = fs::absolute(path, ec);
    return ec ? path : p.lexically_normal().string();
}

// Parses the options; returns exit_ok or the usage error already printed.
int parse(arguments args, run_options& o, bool& help) {
    struct option_slot {
        std::string_view name;
        std::optional<std::string> run_options::*field;
    };
    static constexpr option_slot slots[] = {
        {"--schedule", &run_options::schedule}, {"--threads", &run_options::threads},
        {"--rules", &run_options::rules},       {"--stats", &run_options::stats},
        {"--trace", &run_options::trace},       {"--summary", &run_options::summary},
        {"--tuning", &run_options::tuning},     {"--library", &run_options::library},
        {"--mpi-stats", &run_options::mpi_stats}, {"--lend", &run_options::lend},
    };
    std::size_t i = 0;
    for (; i < args.size(); ++i) {
        const std::string_view a = args[i];
        if (a == "--") {
            ++i;
            break;
        }
        if (a == "--help" || a == "-h") {
            help = true;
            return exit_ok;
        }
        if (!a.starts_with("--")) break;
        const std::size_t eq = a.find('=');
        const std::string_view name = a.substr(0, eq);
        if (name == "--mpi" || name == "--daemon") {  // the flags without a value
            bool& flag = name == "--mpi" ? o.mpi : o.daemon;
            if (eq != std::string_view::npos) return usage_error("run: " + std::string(name) + " takes no value", "run");
            if (flag) return usage_error("run: " + std::string(name) + " is given twice", "run");
            flag = true;
            continue;
        }
        const option_slot* slot = nullptr;
        for (const option_slot& s : slots)
            if (s.name == name) slot = &s;
        if (slot == nullptr) return usage_error("run: unknown option '" + runtime::printable(name) + "'", "run");
        std::string value;
        if (eq != std::string_view::npos) {
            value = std::string(a.substr(eq + 1));
        } else if (i + 1 < args.size() && !args[i + 1].starts_with("--")) {
            value = std::string(args[++i]);
        } else {
            // `--stats -- prog` or `--stats --trace t`: the value was forgotten, not named "--".
            return usage_error("run: " + std::string(name) + " needs a value" +
                                   (i + 1 < args.size() ? " (write " + std::string(name) + "=" +
                                                              runtime::printable(args[i + 1]) +
                                                              " for a value that starts with --)"
                                                        : std::string()),
                               "run");
        }
        if (value.empty()) return usage_error("run: " + std::string(name) + " needs a value, not an empty string", "run");
        if (o.*(slot->field)) return usage_error("run: " + std::string(name) + " is given twice", "run");
        o.*(slot->field) = value;
    }
    for (; i < args.size(); ++i) o.program.emplace_back(args[i]);
    if (o.mpi_stats && !o.mpi) return usage_error("run: --mpi-stats needs --mpi (it is libaloe-mpi's output)", "run");
    if (o.lend && !o.mpi) return usage_error("run: --lend needs --mpi (ranks lend their cores at MPI calls)", "run");
    if (o.lend) {  // in any case, as ALOE_LEND is read
        const std::optional<runtime::lend_mode> mode = runtime::lend_mode_named(*o.lend);
        if (!mode)
            return usage_error("run: --lend '" + runtime::printable(*o.lend) +
                                   "': expected predictive, reactive, off or auto",
                               "run");
        o.lend = std::string(runtime::to_string(*mode));
    }
    if (o.program.empty()) return usage_error("run: no program given (aloe run [options] -- program args)", "run");
    return exit_ok;
}

// The environment as name -> value, in the order it came (a later duplicate wins, as getenv
// would find the first: keep the first).
using environment = std::vector<std::pair<std::string, std::string>>;

environment current_environment() {
    environment env;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
        const std::string_view entry(*e);
        const std::size_t eq = entry.find('=');
        if (eq == std::string_view::npos) continue;
        const std::string name(entry.substr(0, eq));
        bool seen = false;
        for (const auto& [n, v] : env) seen = seen || n == name;
        if (!seen) env.emplace_back(name, std::string(entry.substr(eq + 1)));
    }
    return env;
}

std::optional<std::string> lookup(const environment& env, std::string_view name) {
    for (const auto& [n, v] : env)
        if (n == name) return v;
    return std::nullopt;
}

void set(environment& env, const std::string& name, const std::string& value) {
    for (auto& [n, v] : env)
        if (n == name) {
            v = value;
            return;
        }
    env.emplace_back(name, value);
}

void unset(environment& env, std::string_view name) {
    std::erase_if(env, [&](const auto& entry) { return entry.first == name; });
}

// An option, else the variable that defaults it as the program's runtime parses it (trimmed;
// empty counts as unset), with the name of whichever it was for messages.
std::optional<std::string> option_or(const std::optional<std::string>& option, std::string_view option_name,
                                     const std::string& variable_value, std::string_view variable,
                                     std::string& source) {
    if (option) {
        source = std::string(option_name);
        return option;
    }
    if (variable_value.empty()) return std::nullopt;
    source = std::string(variable);
    return variable_value;
}

// One file behind two names (a symlinked folder, "." and "..", a hard link): the folders
// compared by what they resolve to, the names as written (a symbolic link at an output is
// replaced, never followed, so two links to one file are two outputs), and existing files
// that are not links by inode.
bool same_file(const std::string& a, const std::string& b) {
    const auto where = [](const fs::path& p) {
        std::error_code ec;
        return fs::weakly_canonical(p.parent_path(), ec) / p.filename();
    };
    if (where(a) == where(b)) return true;
    struct stat sa {}, sb {};
    return ::lstat(a.c_str(), &sa) == 0 && ::lstat(b.c_str(), &sb) == 0 && !S_ISLNK(sa.st_mode) &&
           !S_ISLNK(sb.st_mode) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

// The folder an output goes into must exist and be writable now, not after a ten-hour run;
// a device or FIFO written in place (/dev/null, /dev/full, a pipe) must be writable itself.
// Checked the way runtime/output_file will treat it, so what can be known now is said now.
std::optional<std::string> output_problem(const std::string& path) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) return "is a folder";
    const fs::path parent = fs::path(path).parent_path();
    if (!fs::is_directory(parent, ec)) return "is in a folder that does not exist ('" + quoted_path(parent.string()) + "')";
    struct stat link {}, folder {};
    if (::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode) && ::stat(parent.c_str(), &folder) == 0 &&
        runtime::planted_link(link.st_uid, folder.st_mode, ::geteuid()))
        return "is a symbolic link another user owns in a shared folder; not followed (it may have been planted)";
    if (runtime::written_in_place(path)) {
        if (::access(path.c_str(), W_OK) != 0) return std::string("cannot be written: ") + std::strerror(errno);
        return std::nullopt;
    }
    if (::access(parent.c_str(), W_OK | X_OK) != 0)
        return "cannot be created in '" + quoted_path(parent.string()) + "': " + std::strerror(errno);
    if (const long longest = ::pathconf(parent.c_str(), _PC_NAME_MAX);
        longest > 0 && fs::path(path).filename().string().size() > static_cast<std::size_t>(longest))
        return "has a file name longer than the folder allows (" + std::to_string(longest) + " bytes)";
    return std::nullopt;
}

// A character device (/dev/null) may take several outputs: nothing there is overwritten.
bool is_character_device(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
}

// An ELF shared object, as the loader needs for LD_PRELOAD (which it reads as a list split at
// blanks and colons, so the path may hold neither).
std::optional<std::string> library_problem(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return "does not exist or is not a file";
    if (path.find_first_of(" :\t\n") != std::string::npos)
        return "has a blank or a colon in its path, which LD_PRELOAD cannot hold (install aloe under a path without "
               "them, or pass --library with a link to it that has none)";
    char magic[4] = {};
    std::ifstream in(path, std::ios::binary);
    in.read(magic, sizeof magic);
    if (in.gcount() != 4 || magic[0] != 0x7f || magic[1] != 'E' || magic[2] != 'L' || magic[3] != 'F')
        return "is not an ELF shared library";
    return std::nullopt;
}

// Checks every value the program will run with. Returns exit_ok, or prints why and returns
// exit_usage (or exit_failure for a missing interposer).
int plan_run(const run_options& o, const environment& env, run_plan& plan) {
    // The variables the program inherits, as the runtime in it will parse them.
    std::vector<std::string> rejected;
    const runtime::report_sink previous =
        runtime::set_report_sink([&](std::string_view line) { rejected.emplace_back(line); },
                                 runtime::fallback_text::left_out);  // refused below, not fallen back from
    // An option replaces its variable in the program's environment (child_environment): a bad
    // inherited value it replaces is no error.
    const auto replaced = [&](std::string_view name) -> std::optional<std::string> {
        if (name == "ALOE_LEND" && o.lend) return *o.lend;
        if (name == "ALOE_DAEMON" && o.daemon) return std::string("on");
        // Checked on their own below, with the option named.
        if ((name == "ALOE_MPI_STATS" && o.mpi_stats) || (name == "ALOE_NUM_THREADS" && o.threads)) return std::nullopt;
        return lookup(env, name);
    };
    const runtime::config cfg = runtime::load_config(replaced);
    runtime::set_report_sink(previous);
    if (!rejected.empty()) {
        for (const std::string& line : rejected) std::cerr << line << '\n';
        return usage_error("run: the environment the program would inherit has bad aloe settings (above); fix or "
                           "unset them",
                           "run");
    }

    // Lending goes through the node daemon: asked for by option with the daemon switched off,
    // nothing could move (before, a warning at the first wait of the run).
    // The same asked for through ALOE_LEND in the environment.
    if (o.mpi && (cfg.lend == runtime::lend_mode::predictive || cfg.lend == runtime::lend_mode::reactive) &&
        cfg.daemon == runtime::daemon_mode::off)
        return usage_error("run: " + (o.lend ? "--lend " + *o.lend : "ALOE_LEND=" + std::string(runtime::to_string(cfg.lend))) +
                               " lends cores through the node daemon, but ALOE_DAEMON=off switches it off: drop one of them",
                           "run");

    // Both schedule variables must be valid, whichever decides: ALOE_SCHEDULE also reaches
    // aloe's own loops when the program links libaloe.
    std::string error;
    if (!cfg.omp_schedule.empty() && !omp::parse_loop_choice(cfg.omp_schedule, error))
        return usage_error("run: ALOE_OMP_SCHEDULE " + error, "run");
    std::optional<omp::loop_choice> aloe_schedule;
    if (!cfg.schedule.empty() && !(aloe_schedule = omp::parse_loop_choice(cfg.schedule, error)))
        return usage_error("run: ALOE_SCHEDULE " + error, "run");
    std::string source;
    const std::string choice_text =
        option_or(o.schedule, "--schedule", cfg.omp_schedule.empty() ? cfg.schedule : cfg.omp_schedule,
                  cfg.omp_schedule.empty() ? "ALOE_SCHEDULE" : "ALOE_OMP_SCHEDULE", source)
            .value_or("program");
    const std::optional<omp::loop_choice> choice = omp::parse_loop_choice(choice_text, error);
    if (!choice) return usage_error("run: " + (source.empty() ? std::string("--schedule") : source) + " " + error, "run");
    plan.request.schedule_text = choice_text;
    plan.choice_is_schedule = choice->kind == omp::loop_choice::kind_t::schedule;
    plan.drop_aloe_schedule = aloe_schedule && aloe_schedule->kind != omp::loop_choice::kind_t::schedule;

    if (o.threads) {
        int n = 0;
        const std::string& t = *o.threads;
        const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), n);
        if (ec != std::errc() || end != t.data() + t.size() || n < 1 || n > runtime::max_num_threads)
            return usage_error("run: --threads '" + runtime::printable(t) + "' is not an integer in 1.." +
                                   std::to_string(runtime::max_num_threads),
                               "run");
        plan.request.threads = n;
    } else if (cfg.num_threads_source == runtime::setting_source::aloe_environment && cfg.num_threads > 0) {
        plan.request.threads = cfg.num_threads;  // ALOE_NUM_THREADS: the interposer sizes regions by it
    }

    if (const std::optional<std::string> rules = option_or(o.rules, "--rules", cfg.omp_rules_file, "ALOE_OMP_RULES", source)) {
        omp::loop_rules parsed;
        std::vector<std::string> errors;
        if (!omp::load_loop_rules(*rules, parsed, errors)) {
            for (const std::string& e : errors) std::cerr << "aloe: run: " << e << '\n';
            return usage_error("run: " + source + " '" + quoted_path(*rules) + "' has errors", "run");
        }
        plan.request.rules_file = absolute(*rules);
        // Read through any link: an output must not land on the file behind it either.
        std::error_code canonical_error;
        plan.rules_file_itself = fs::canonical(plan.request.rules_file, canonical_error).string();
    }

    // Output names expanded here, once: %p is aloe run's pid, %r the rank it was started as.
    const runtime::process_identity me = runtime::process_identity::of_this_process(cfg);
    struct output {
        std::string* path;
        std::string source;
    };
    std::vector<output> outputs;
    std::string summary_source;
    const std::string summary =
        option_or(o.summary, "--summary", cfg.omp_summary_file, "ALOE_OMP_SUMMARY", summary_source).value_or("-");
    plan.summary = summary == "-" || summary == "none" ? summary : absolute(runtime::expand_output_path(summary, me));
    if (plan.summary != "-" && plan.summary != "none") outputs.push_back({&plan.summary, summary_source});
    if (const auto s = option_or(o.stats, "--stats", cfg.omp_stats_file, "ALOE_OMP_STATS", source)) {
        plan.stats = absolute(runtime::expand_output_path(*s, me));
        outputs.push_back({&plan.stats, source});
    }
    if (const auto t = option_or(o.trace, "--trace", cfg.trace_file, "ALOE_TRACE", source)) {
        plan.trace = absolute(runtime::expand_output_path(*t, me));
        outputs.push_back({&plan.trace, source});
    }
    // libaloe-mpi's file is checked as these are (expanded for this rank; it expands the name
    // itself, %p as the program's pid): a missing folder or a clash with --stats would lose a
    // file after the run instead of refusing to start.
    std::string mpi_stats_here;
    if (o.mpi && o.mpi_stats) {
        mpi_stats_here = absolute(runtime::expand_output_path(*o.mpi_stats, me));
        outputs.push_back({&mpi_stats_here, "--mpi-stats"});
    }
    std::vector<std::pair<std::string, std::string>> claimed;  // path, who named it
    if (!plan.request.rules_file.empty()) claimed.emplace_back(plan.request.rules_file, "--rules");
    if (!plan.rules_file_itself.empty()) claimed.emplace_back(plan.rules_file_itself, "--rules");
    for (const output& out : outputs) {
        for (const auto& [path, who] : claimed)
            if (same_file(*out.path, path) && !is_character_device(*out.path))
                return usage_error("run: " + out.source + " and " + who + " name the same file '" +
                                       quoted_path(*out.path) + "'; one would overwrite the other",
                                   "run");
        claimed.emplace_back(*out.path, out.source);
        if (const std::optional<std::string> problem = output_problem(*out.path))
            return usage_error("run: " + out.source + " '" + quoted_path(*out.path) + "' " + *problem, "run");
    }

    if (o.tuning) {
        // One file for every process of the job, read at start and merged into at exit: its
        // folder must exist, and the name must not be a folder or a device.
        plan.tuning = absolute(*o.tuning);
        std::error_code ec;
        const fs::path p(plan.tuning);
        const fs::file_status st = fs::status(p, ec);
        if (fs::exists(st) && !fs::is_regular_file(st))
            return usage_error("run: --tuning '" + quoted_path(plan.tuning) + "' is not a regular file", "run");
        if (!fs::is_directory(p.parent_path(), ec))
            return usage_error("run: --tuning '" + quoted_path(plan.tuning) + "': the folder " +
                                   quoted_path(p.parent_path().string()) + " does not exist",
                               "run");
        for (const auto& [path, who] : claimed)
            if (same_file(plan.tuning, path))
                return usage_error("run: --tuning and " + who + " name the same file '" + quoted_path(plan.tuning) + "'",
                                   "run");
    }

    plan.library = o.library ? absolute(*o.library) : default_library().string();
    if (const std::optional<std::string> problem = library_problem(plan.library)) {
        std::cerr << "aloe: run: the interposer '" << quoted_path(plan.library) << "' " << *problem
                  << (o.library ? "" : " (build the aloe_gomp target, or pass --library)") << '\n';
        return exit_failure;
    }
    if (o.mpi) {
        plan.mpi_library = default_mpi_library().string();
        if (plan.mpi_library.empty()) {
            std::cerr << "aloe: run: --mpi: libaloe-mpi was not built (aloe was configured with ALOE_WITH_MPI=OFF "
                         "or without an MPI for C; scripts/install-deps.sh installs OpenMPI, then reconfigure)\n";
            return exit_failure;
        }
        if (const std::optional<std::string> problem = library_problem(plan.mpi_library)) {
            std::cerr << "aloe: run: --mpi: libaloe-mpi '" << quoted_path(plan.mpi_library) << "' " << *problem << '\n';
            return exit_failure;
        }
        if (o.mpi_stats) plan.mpi_stats = absolute(*o.mpi_stats);
    }
    return exit_ok;
}

// Ranks of one node sharing its CPUs unbound make libgomp spin against each other's threads
// (omp/node_sharing.hpp): their waiting is made passive, unless the user chose it.
void passive_when_ranks_share_cpus(const run_plan& plan, environment& env) {
    if (lookup(env, "OMP_WAIT_POLICY") || lookup(env, "GOMP_SPINCOUNT")) return;
    omp::node_share n;
    n.local_ranks = runtime::local_ranks_from([&](std::string_view name) { return lookup(env, name); });
    if (n.local_ranks < 2) return;
    cpu_set_t mask;
    CPU_ZERO(&mask);
    n.allowed_cpus = sched_getaffinity(0, sizeof mask, &mask) == 0 ? CPU_COUNT(&mask) : 0;
    n.online_cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
    n.threads = plan.request.threads;
    if (n.threads <= 0) {  // libgomp's default: its first OMP_NUM_THREADS level, else the mask
        const std::optional<std::string> levels = lookup(env, "OMP_NUM_THREADS");
        n.threads = levels ? std::atoi(levels->c_str()) : n.allowed_cpus;
    }
    if (!omp::ranks_share_cpus_unbound(n)) return;
    set(env, "OMP_WAIT_POLICY", "passive");
    // Said once per node: by its first rank (or by each, where no launcher says which is first).
    for (const char* first : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"})
        if (const std::optional<std::string> r = lookup(env, first); r && *r != "0") return;
    std::cerr << "aloe: run: " << n.local_ranks << " ranks of this node with " << n.threads
              << " threads each share its " << n.allowed_cpus
              << " CPUs unbound: libgomp's waiting made passive (OMP_WAIT_POLICY=passive; set OMP_WAIT_POLICY or "
                 "GOMP_SPINCOUNT to choose, or bind the ranks)\n";
}

// The program's environment: ours, with the interposer's variables set or replaced.
std::vector<std::string> child_environment(const run_options& o, const run_plan& plan, environment env,
                                           const std::string& report_dir) {
    const std::optional<std::string> preload = lookup(env, "LD_PRELOAD");
    const std::string mpi = plan.mpi_library.empty() ? "" : ":" + plan.mpi_library;
    set(env, "LD_PRELOAD", plan.library + mpi + (preload && !preload->empty() ? ":" + *preload : ""));
    if (!plan.mpi_stats.empty()) set(env, "ALOE_MPI_STATS", plan.mpi_stats);
    if (o.lend) set(env, "ALOE_LEND", *o.lend);
    if (o.daemon) set(env, "ALOE_DAEMON", "on");
    set(env, "ALOE_OMP_SCHEDULE", plan.request.schedule_text);
    // aloe's own loops (a program that also links libaloe) read ALOE_SCHEDULE: give them the
    // schedule when it is one, never `program` or `forward`, which mean nothing to them.
    if (o.schedule && plan.choice_is_schedule) set(env, "ALOE_SCHEDULE", plan.request.schedule_text);
    else if (plan.drop_aloe_schedule) unset(env, "ALOE_SCHEDULE");
    if (plan.request.threads > 0) {
        set(env, "ALOE_NUM_THREADS", std::to_string(plan.request.threads));
        // --threads is the outermost level's count; a nested list ("4,2") keeps its inner levels.
        const std::optional<std::string> levels = lookup(env, "OMP_NUM_THREADS");
        const std::size_t comma = levels ? levels->find(',') : std::string::npos;
        set(env, "OMP_NUM_THREADS",
            std::to_string(plan.request.threads) + (comma == std::string::npos ? "" : levels->substr(comma)));
    }
    if (!plan.request.rules_file.empty()) set(env, "ALOE_OMP_RULES", plan.request.rules_file);
    else unset(env, "ALOE_OMP_RULES");
    passive_when_ranks_share_cpus(plan, env);
    // The processes report into the folder; this command writes the files.
    unset(env, "ALOE_OMP_STATS");
    unset(env, "ALOE_OMP_SUMMARY");
    if (!plan.trace.empty()) set(env, "ALOE_TRACE", plan.trace);
    else unset(env, "ALOE_TRACE");
    if (!plan.tuning.empty()) set(env, "ALOE_TUNING", plan.tuning);
    if (!report_dir.empty()) set(env, "ALOE_OMP_REPORT_DIR", report_dir);
    else unset(env, "ALOE_OMP_REPORT_DIR");
    std::vector<std::string> out;
    out.reserve(env.size());
    for (const auto& [name, value] : env) out.push_back(name + "=" + value);
    return out;
}

// --- the program and its signals --------------------------------------------------------
//
// Without a terminal (a batch job, mpirun, Slurm, a script under nohup) the program runs in a
// process group of its own, so a signal sent to aloe run's whole group (`kill -USR1 -<pgid>`,
// `timeout`, a batch system killing the job's group) reaches aloe run alone and is passed on
// once, to the program's group. With a terminal the program stays in aloe run's process
// group, as it would without aloe run: a pipeline's other members (`aloe run -- app | less`)
// keep the terminal, and Ctrl-C, Ctrl-\ and Ctrl-Z reach the program from the terminal itself,
// so aloe run passes on only what was sent to it alone (not SI_KERNEL). When the program stops
// (Ctrl-Z, a read from the terminal in the background) aloe run stops too, so the shell sees
// the job stopped; continued, it continues the program. SIGSTOP sent to aloe run alone cannot
// be passed on (it cannot be caught); SIGTSTP can.

// Passed on to the program (its group without a terminal). They (and SIGCHLD) are blocked in aloe run
// from before the fork until the outputs are written, and taken synchronously with
// sigwaitinfo(): no handler runs asynchronously, none is lost between fork() and the wait,
// and none stops aloe run half-way through writing a file.
constexpr int forwarded_signals[] = {SIGHUP,  SIGINT,  SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM,
                                     SIGWINCH, SIGCONT, SIGTSTP, SIGXCPU, SIGPWR};

std::string signal_name(int signal) {
    const char* d = sigdescr_np(signal);
    const char* a = sigabbrev_np(signal);
    return std::string(a != nullptr ? std::string("SIG") + a : "signal") + " (" + (d != nullptr ? d : "?") + ")";
}

// The forwarded signals and SIGCHLD blocked for as long as this lives; pending ones are
// dropped (and named) before the mask is restored.
class held_signals {
public:
    held_signals() {
        sigemptyset(&set_);
        for (int sig : forwarded_signals) sigaddset(&set_, sig);
        sigaddset(&set_, SIGCHLD);
        ::sigprocmask(SIG_BLOCK, &set_, &before_);
        // SIGCHLD must be generated for sigwaitinfo to see it: an inherited SIG_IGN would have
        // the kernel reap the program unseen.
        struct sigaction dfl {};
        dfl.sa_handler = SIG_DFL;
        ::sigaction(SIGCHLD, &dfl, &old_chld_);
    }
    ~held_signals() {
        const timespec now{};
        for (int sig; (sig = ::sigtimedwait(&set_, nullptr, &now)) > 0;)
            if (sig != SIGCHLD && sig != SIGCONT && sig != SIGWINCH)
                std::cerr << "aloe: run: " << signal_name(sig)
                          << " arrived after the program ended, while the outputs were written; they are complete\n";
        ::sigaction(SIGCHLD, &old_chld_, nullptr);
        ::sigprocmask(SIG_SETMASK, &before_, nullptr);
    }
    held_signals(const held_signals&) = delete;
    held_signals& operator=(const held_signals&) = delete;

    const sigset_t& set() const noexcept { return set_; }
    /// What a new process must start with: the mask and SIGCHLD disposition before aloe run's.
    void restore_in_child() const noexcept {
        ::sigaction(SIGCHLD, &old_chld_, nullptr);
        ::sigprocmask(SIG_SETMASK, &before_, nullptr);
    }

private:
    sigset_t set_{}, before_{};
    struct sigaction old_chld_ {};
};

struct program_end {
    int status = exit_failure;  // as a shell reports it
    pid_t pid = 0;
    bool started = false;
};

// aloe run's controlling terminal: one of its standard descriptors that is the terminal its
// session controls (tcgetpgrp answers for that one only); -1 without. A terminal that is no
// one's controlling terminal is a batch job's output, not a shell's: Open MPI gives each rank
// a pseudo-terminal for its standard output, and a rank stopped and continued there must not
// leave aloe run stopped with nobody to continue it.
int controlling_terminal() {
    for (int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO})
        if (::isatty(fd) && ::tcgetpgrp(fd) >= 0) return fd;
    return -1;
}

// Whether the process is stopped now (state T in /proc): a stop reported late, after the
// process was continued (a batch system suspending and resuming every process), is history.
bool stopped_now(pid_t pid) { return runtime::process_state(pid) == 'T'; }

// Starts the program and waits for it, passing signals on; exit status as a shell reports it
// (127: could not be started).
program_end run_program(const run_options& o, const std::vector<std::string>& env, const held_signals& held) {
    program_end end;
    std::vector<char*> argv;
    for (const std::string& a : o.program) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    std::vector<char*> envp;
    for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);

    // A close-on-exec pipe tells the parent why exec failed (nothing arrives when it worked).
    int report[2];
    if (::pipe2(report, O_CLOEXEC) != 0) {
        std::cerr << "aloe: run: pipe: " << std::strerror(errno) << '\n';
        return end;
    }
    const int terminal = controlling_terminal();
    const bool own_group = terminal < 0;
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid == 0) {
        if (own_group) ::setpgid(0, 0);
        held.restore_in_child();
        ::close(report[0]);
        // Dies with aloe run (a SIGKILL to it must not leave the program running alone).
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent) ::_exit(128 + SIGKILL);
        ::execvpe(argv[0], argv.data(), envp.data());
        const int error = errno;
        [[maybe_unused]] const ssize_t w = ::write(report[1], &error, sizeof error);
        ::_exit(127);
    }
    ::close(report[1]);
    if (pid < 0) {
        std::cerr << "aloe: run: fork: " << std::strerror(errno) << '\n';
        ::close(report[0]);
        return end;
    }
    if (own_group) ::setpgid(pid, pid);  // also here: whichever of the two runs first, the group exists
    const pid_t target = own_group ? -pid : pid;  // where signals are passed on
    end.pid = pid;
    int exec_error = 0;
    ssize_t got = 0;
    do got = ::read(report[0], &exec_error, sizeof exec_error);
    while (got < 0 && errno == EINTR);
    ::close(report[0]);
    int status = 0;
    for (bool running = true; running;) {
        siginfo_t info{};
        const int sig = ::sigwaitinfo(&held.set(), &info);
        if (sig < 0) continue;  // EINTR: aloe run was stopped and continued
        if (sig != SIGCHLD) {
            // From the terminal to its foreground group: the program, in aloe run's group, has it too.
            if (!own_group && info.si_code == SI_KERNEL) continue;
            ::kill(target, sig);
            continue;
        }
        // SIGCHLD: the program ended or stopped (several may have merged into one).
        for (;;) {
            const pid_t r = ::waitpid(pid, &status, WNOHANG | WUNTRACED);
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) break;  // nothing more to collect now
            if (!WIFSTOPPED(status)) {
                running = false;
                break;
            }
            // The program stopped (Ctrl-Z, a read from the terminal in the background): with a
            // terminal, stop aloe run too, so the shell sees the job stopped; continued, it
            // continues the program. Without one (a batch job) there is no job to show.
            if (terminal < 0 || !stopped_now(pid)) continue;
            ::kill(::getpid(), SIGSTOP);
            ::kill(target, SIGCONT);
        }
    }
    if (got == sizeof exec_error) {
        std::cerr << "aloe: run: cannot run '" << quoted_path(o.program[0]) << "': " << std::strerror(exec_error) << '\n';
        end.status = 127;
        return end;
    }
    end.started = true;
    if (WIFSIGNALED(status)) {
        std::cerr << "aloe: run: '" << quoted_path(o.program[0]) << "' was killed by " << signal_name(WTERMSIG(status))
                  << '\n';
        end.status = 128 + WTERMSIG(status);
    } else {
        end.status = WIFEXITED(status) ? WEXITSTATUS(status) : exit_failure;
    }
    return end;
}

// --- after the program ----------------------------------------------------------------

// Prints the summary and writes the files; false when one of them could not be written.
// With no report at all the files are still written (saying so), so a file left by an
// earlier run is never taken for this run's.
bool write_outputs(const run_plan& plan, const report_folder& folder, const program_end& end) {
    std::vector<std::string> problems;
    const std::vector<omp::process_report> reports = folder.read_reports(problems);
    for (const std::string& p : problems) std::cerr << "aloe: run: " << p << '\n';
    if (end.started && reports.empty())
        std::cerr << "aloe: run: no process wrote a report: " << omp::no_report_causes
                  << " (a W503 warning above says why)\n";

    bool ok = true;
    std::string error;
    const std::string lending = folder.lending_summaries();
    const auto summary = [&] { return omp::format_summary(plan.request, reports) + lending; };
    if (plan.summary == "-") {
        if (!reports.empty() || !lending.empty()) std::cerr << '\n' << summary() << std::flush;
        ok = ok && static_cast<bool>(std::cerr);
    } else if (plan.summary != "none" && !runtime::write_output_file(plan.summary, summary(), error)) {
        std::cerr << "aloe: run: cannot write the summary: " << error << '\n';
        ok = false;
    }
    if (!plan.stats.empty() &&
        !runtime::write_output_file(plan.stats, omp::format_stats_json(plan.request, reports), error)) {
        std::cerr << "aloe: run: cannot write the statistics: " << error << '\n';
        ok = false;
    }
    if (!plan.trace.empty() && !folder.write_trace(plan.trace, error)) {
        std::cerr << "aloe: run: cannot write the trace: " << error << '\n';
        ok = false;
    }
    return ok;
}

// Descriptors 0, 1 and 2 open (on /dev/null when closed): otherwise the report folder's lock
// or a pipe would get number 2, and the summary would go into it.
void keep_standard_descriptors_open() {
    for (int fd = 0; fd <= 2; ++fd)
        if (::fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
            const int null = ::open("/dev/null", O_RDWR);
            if (null >= 0 && null != fd) {
                ::dup2(null, fd);
                ::close(null);
            }
        }
}

// SIGPIPE ignored while the outputs are written: a summary to a closed pipe (`| head -c1`) is
// an error that is reported (EPIPE), not a silent death.
class sigpipe_ignored {
public:
    sigpipe_ignored() {
        struct sigaction ignore {};
        ignore.sa_handler = SIG_IGN;
        ::sigaction(SIGPIPE, &ignore, &old_);
    }
    ~sigpipe_ignored() { ::sigaction(SIGPIPE, &old_, nullptr); }
    sigpipe_ignored(const sigpipe_ignored&) = delete;
    sigpipe_ignored& operator=(const sigpipe_ignored&) = delete;

private:
    struct sigaction old_ {};
};

}  // namespace

int run_command(arguments args) {
    keep_standard_descriptors_open();
    run_options o;
    bool help = false;
    if (const int rc = parse(args, o, help); rc != exit_ok || help) {
        if (help) std::cout << help_text;
        return rc;
    }
    const environment env = current_environment();
    run_plan plan;
    if (const int rc = plan_run(o, env, plan); rc != exit_ok) return rc;
    // A daemon that cannot start leaves the program alone, not unrun (it says why, and the
    // program's client says once that it runs with its own count).
    if (o.daemon && start_daemon_for_run() != exit_ok) std::cerr << "aloe: run: --daemon: running without the node daemon\n";

    std::error_code ec;
    const fs::path temp = fs::temp_directory_path(ec);
    // Nothing asked for (--summary none, no --stats, no --trace): no folder, and the processes
    // write nothing at exit (only folders earlier runs abandoned are cleaned up).
    if (plan.summary == "none" && plan.stats.empty() && plan.trace.empty()) {
        sweep_abandoned_report_folders(ec ? std::string("/tmp") : fs::absolute(temp, ec).string());
        const held_signals held;
        return run_program(o, child_environment(o, plan, env, ""), held).status;
    }
    // Signals are held from before the program starts until the folder is gone (declared
    // first, released last).
    const held_signals held;
    // The report folder: in TMPDIR, else /tmp. Without one nothing could be reported, so the
    // program does not start (it would run, and its summary and files would be lost).
    std::optional<report_folder> folder;
    if (ec) {  // TMPDIR names no folder: said, as a folder that cannot be written is below
        std::cerr << "aloe: run: TMPDIR '" << quoted_path(lookup(env, "TMPDIR").value_or("")) << "': " << ec.message()
                  << "; using /tmp\n";
    }
    folder.emplace(ec ? std::string("/tmp") : temp.string());
    if (!folder->ok() && !ec && temp != "/tmp") {
        const std::string first = folder->error();
        folder.emplace("/tmp");
        if (folder->ok()) std::cerr << "aloe: run: " << first << "; using /tmp\n";
    }
    if (!folder->ok()) {
        std::cerr << "aloe: run: " << folder->error() << "; the program was not started (set TMPDIR to a folder "
                  << "you can write)\n";
        return exit_failure;
    }
    const program_end end = run_program(o, child_environment(o, plan, env, folder->path()), held);
    if (!end.started) return end.status;
    const sigpipe_ignored no_sigpipe;
    const bool written = write_outputs(plan, *folder, end);
    return end.status == 0 && !written ? exit_failure : end.status;
}

}  // namespace aloe::cli

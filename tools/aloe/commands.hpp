// The subcommands of the aloe tool, one function each, listed in main.cpp's table.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace aloe::cli {

/// The words after the subcommand's name.
using arguments = std::span<const std::string_view>;

/// Exit codes shared by every subcommand.
inline constexpr int exit_ok = 0;
inline constexpr int exit_failure = 1;  ///< the command ran and failed
inline constexpr int exit_usage = 2;    ///< bad command line: nothing was done

/// Prints `aloe: <message> (see 'aloe <help_topic> --help')` to stderr; returns exit_usage.
int usage_error(std::string_view message, std::string_view help_topic = {});

/// `aloe info [--json | --settings-markdown]`: version, topology, the team that would be
/// started, capabilities and effective settings.
int info_command(arguments args);

/// `aloe noise [--quick] [--seconds S] [--quantum-us Q] [--method fwq|ftq|both] [--json]`:
/// the machine's own noise, FWQ and FTQ, every allowed CPU.
int noise_command(arguments args);

/// `aloe run [--schedule S] [--threads N] [--rules F] [--stats F] [--trace F] -- program args`:
/// an unmodified OpenMP program with libaloe-gomp.so preloaded; its exit status passed through.
int run_command(arguments args);

/// `aloe tune [--runs N] [--tuning FILE] [run options] -- program args`: runs the program N
/// times on the adaptive schedule, each run starting from what the ones before it kept.
int tune_command(arguments args);

/// `aloe daemon start|stop|status|policy|steer`: the node daemon aloed (docs/daemon.md).
int daemon_command(arguments args);
/// `aloe run --daemon`: a daemon for this user unless one answers already (quiet but for
/// failures, which go to stderr); exit_ok when one serves.
int start_daemon_for_run();
/// `aloe top [--json] [--once] [--socket PATH]`: aloed's clients, refreshed once a second.
int top_command(arguments args);

/// `aloe bench ...`, `aloe report DIR`, `aloe compare A B`: the benchmark harness (Python,
/// bench/harness).
int bench_command(arguments args);
/// `aloe sim [options]` and `aloe sim calibrate [options]`: the simulator (tools/sim).
int sim_command(arguments args);
/// Runs `python -m aloe_harness <subcommand> <words…>` as a child (the harness found as
/// `aloe bench` finds it) and waits; its exit status, or -1 when it could not be started.
int run_harness(std::string_view subcommand, const std::vector<std::string>& words);
int report_command(arguments args);
int compare_command(arguments args);

}  // namespace aloe::cli

// ALOE_PRINT_COUNTER: counters printed the way HPX's --hpx:print-counter prints them.
//
// Settings (runtime/config, the ALOE_PRINT_COUNTER* rows; docs/counters.md): the names or
// patterns to print, an interval (0: at exit only), whether each print shows the change since
// the previous one (ALOE_PRINT_COUNTER_RESET, HPX's --hpx:reset-counters) or the values since
// the start, text or CSV, and a destination file (default stdout).
//
// Formats. Text, one line per instance per print, HPX's:
//     /threads{locality#0/total}/idle-rate,3,0.300125,[s],41230,[ppm]
// (name, print number from 1, seconds since the printer started, "[s]", value, unit; a
// moment at which no named instance exists yet, before its layer registered it, is no print
// and takes no number). CSV: a
// header `sample,seconds,<name>,...`, then one row per print, `3,0.300125,41230,...`; a new
// header comes first when the instances change (a worker slot appeared). A name holding a
// comma or a double quote is written in double quotes (quotes doubled), as HPX does.
//
// Each pattern is a counter_window whose baseline starts at 0: a print shows peek() (values
// since the start) or, with reset, delta() (since the previous print); either way a derived
// counter is its formula over its operands' changes (counter_window.hpp).
//
// The process's printer is made when libaloe loads, if ALOE_PRINT_COUNTER is set (its rows
// are read then, load_counter_print_config: the rest of the configuration is still read at
// first use). With an interval, a background thread sleeps on a condition variable until the
// next print (no CPU in between; signals blocked, so the program's handlers never run on it).
// At exit (an atexit handler registered at load, after the registry it reads was made) the
// thread is stopped and joined, the final print is made, a name that matched nothing is
// reported once (W016), and a file destination is written whole through output_file (W017
// when it cannot be): the prints before exit wait in an unnamed temporary file. A destination
// that output_file writes in place (a terminal, a FIFO, /dev/stderr) gets each print at once.
//
// Fork. The printer's lock is taken around fork() before the registry's (its pthread_atfork
// handlers are registered after the registry's, and prepare handlers run in reverse order),
// the order a print takes them. A child starts afresh: print 1, seconds since the fork, its
// own counts (the registry resets them), its own destination (%p is its pid), none of the
// parent's pending text; its interval thread is not restarted, so it prints at exit only. A
// child that exec()s prints nothing (atexit handlers do not run), nor one that calls _exit().
#pragma once

#include "runtime/config.hpp"

#include <aloe/stats.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace aloe::runtime {

/// One print: every named instance's value at one moment.
struct counter_print_sample {
    std::uint64_t number = 0;  ///< 1 for the first print (HPX's sequence number)
    double elapsed_s = 0;      ///< seconds since the printer started (in a fork child: since the fork)
    std::vector<aloe::counter_sample> values;
};

/// HPX's text lines: `name,number,elapsed,[s],value,[unit]` per value, the elapsed time with
/// six decimals. Pure.
std::string format_counter_text(const counter_print_sample& sample);

/// The CSV header for these columns: `sample,seconds,` and each one's name. Pure.
std::string format_counter_csv_header(const std::vector<aloe::counter_sample>& columns);

/// One CSV row: `number,elapsed,` and each value. Pure.
std::string format_counter_csv_row(const counter_print_sample& sample);

/// A printer of `settings.print_counter` (the process's is made at load; tests make their
/// own). Thread-safe: prints are serialised.
class counter_printer {
public:
    /// `settings` also gives the job rank for the destination's %r (output_path.hpp).
    explicit counter_printer(config settings);
    /// Stops the interval thread if it runs; prints nothing more.
    ~counter_printer();
    counter_printer(const counter_printer&) = delete;
    counter_printer& operator=(const counter_printer&) = delete;

    /// Starts the thread that prints every interval; nothing when the interval is 0 or the
    /// thread already runs. A thread that cannot be started is reported (W018): then the
    /// printer prints at exit only.
    void start();

    /// One print now, as the interval thread makes them; nothing after finish().
    void print_now();

    /// Stops the interval thread, makes the final print, reports the names that matched
    /// nothing (W016) and writes a file destination (W017 when it cannot). Once: later
    /// calls do nothing.
    void finish();

    struct state;

private:
    std::unique_ptr<state> state_;
};

/// Stops the process's printer (armed at load when ALOE_PRINT_COUNTER is set) for good: it
/// prints nothing more, at exit neither. For a tool that hands the variable on to the
/// program it runs rather than using it itself (`aloe run`). Thread-safe; nothing when no
/// printer is armed.
void disarm_counter_printer();

}  // namespace aloe::runtime

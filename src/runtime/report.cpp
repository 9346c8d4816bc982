// Diagnostics: formatting, the once-only filter, the ALOE_VERBOSE filter and the sink.
//
// All state sits behind one mutex: reporting is never on a hot path (STYLE.md, "Hot
// paths"), and one lock keeps lines from interleaving and makes report_once exact.
//
// Info lines need ALOE_VERBOSE, which lives in the configuration, and loading the
// configuration may itself report (a bad value) or discover the topology (which may report
// an info line). So report never loads the configuration from inside a load: an info line
// reported by the thread that is loading it is held back until config.cpp pushes the
// verbosity through set_report_verbosity(), then printed or dropped.
#include "runtime/report.hpp"

#include "runtime/config.hpp"
#include "runtime/team.hpp"

#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

namespace aloe::runtime {
namespace {

// A line and its newline in one write(2): mpirun and Slurm read the ranks' stderr from pipes
// and forward what each read returns, so a line written in two parts (stdio's unbuffered
// stderr writes the text and the newline apart) could be joined with another rank's. One
// write of up to PIPE_BUF bytes reaches a pipe whole. Whatever the program left in stderr's
// stdio buffer goes first.
void write_to_stderr(std::string_view line) {
    std::fflush(stderr);
    char newline = '\n';
    iovec parts[2] = {{const_cast<char*>(line.data()), line.size()}, {&newline, 1}};
    iovec* part = parts;
    int count = 2;
    while (count > 0) {
        const ssize_t n = ::writev(STDERR_FILENO, part, count);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;  // nowhere to say it
        // A partial write (a full pipe, a signal): go on from where it stopped.
        auto done = static_cast<std::size_t>(n);
        for (; count > 0 && done >= part->iov_len; --count, ++part) done -= part->iov_len;
        if (count > 0) {
            part->iov_base = static_cast<char*>(part->iov_base) + done;
            part->iov_len -= done;
        }
    }
}

struct held_line {
    report_category category;
    std::string text;
};

struct report_state {
    std::mutex lock;
    report_sink sink = write_to_stderr;
    fallback_text fallbacks = fallback_text::shown;
    std::set<std::pair<std::string, std::string>> reported;  // (id, what) already emitted
    std::vector<held_line> held;  // info lines waiting for the verbosity to be known
    // Written under `lock`; read without it on the info fast path, hence atomics.
    std::atomic<bool> verbosity_known{false};
    std::atomic<category_set> shown{no_categories};
};

// The state as the fork hooks see it (never through state()'s guarded static: a fork
// during its first use would leave the guard taken in the child).
constinit std::atomic<report_state*> reports_for_fork{nullptr};
void lock_reports_for_fork() noexcept { reports_for_fork.load(std::memory_order_acquire)->lock.lock(); }
void unlock_reports_after_fork() noexcept { reports_for_fork.load(std::memory_order_acquire)->lock.unlock(); }

// Never destroyed: a thread or an atexit handler may still report while statics die.
report_state& state() {
    static report_state* const s = [] {
        auto* made = new report_state;
        reports_for_fork.store(made, std::memory_order_release);
        return made;
    }();
    // Registered after `s` exists, outside its initialiser: registering may itself report
    // (W012), which comes back here and must find `s` ready and this flag already set.
    static std::atomic<bool> hooked{false};
    if (!hooked.load(std::memory_order_acquire) && !hooked.exchange(true, std::memory_order_acq_rel))
        register_fork_hooks(fork_rank::reports, {&lock_reports_for_fork, &unlock_reports_after_fork, &unlock_reports_after_fork});
    return *s;
}

bool shown_in(category_set set, report_category c) { return (set & category_bit(c)) != 0; }

enum class info_gate { show, drop, hold };

// Decides, before taking the lock, what happens to an info line of category `c`.
info_gate gate_info(report_category c) {
    report_state& s = state();
    if (!s.verbosity_known.load(std::memory_order_acquire)) {
        if (config_loading_on_this_thread()) return info_gate::hold;
        (void)current_config();  // pushes ALOE_VERBOSE through set_report_verbosity()
        if (!s.verbosity_known.load(std::memory_order_acquire)) return info_gate::drop;
    }
    return shown_in(s.shown.load(std::memory_order_acquire), c) ? info_gate::show
                                                                : info_gate::drop;
}

std::string format_with(const report_message& msg, fallback_text fallbacks) {
    std::string line = "aloe: ";
    line += to_string(msg.level);
    line += ' ';
    line += msg.id;
    line += " [";
    line += to_string(msg.category);
    line += "]: ";
    line += msg.what;
    if (!msg.fallback.empty() && fallbacks == fallback_text::shown) {
        line += "; using ";
        line += msg.fallback;
    }
    return line;
}

// Emits (or holds) one message; `lock` of state() is held. Returns false when dropped.
bool emit_locked(report_state& s, const report_message& msg, info_gate gate) {
    if (gate == info_gate::hold && s.verbosity_known.load(std::memory_order_relaxed)) {
        // The verbosity arrived between gate_info() and the lock.
        gate = shown_in(s.shown.load(std::memory_order_relaxed), msg.category)
                   ? info_gate::show : info_gate::drop;
    }
    if (gate == info_gate::drop) return false;
    if (gate == info_gate::hold) {
        s.held.push_back({msg.category, format_with(msg, s.fallbacks)});
        return true;
    }
    s.sink(format_with(msg, s.fallbacks));
    return true;
}

info_gate gate_for(const report_message& msg) {
    return msg.level == report_level::info ? gate_info(msg.category) : info_gate::show;
}

}  // namespace

std::string format_report(const report_message& msg) { return format_with(msg, fallback_text::shown); }

bool report_once(const report_message& msg) {
    const info_gate gate = gate_for(msg);
    if (gate == info_gate::drop) return false;
    report_state& s = state();
    std::lock_guard guard(s.lock);
    if (s.reported.count({std::string(msg.id), msg.what}) != 0) return false;
    const bool emitted = emit_locked(s, msg, gate);
    if (emitted) s.reported.emplace(std::string(msg.id), msg.what);
    return emitted;
}

void report(const report_message& msg) {
    const info_gate gate = gate_for(msg);
    if (gate == info_gate::drop) return;
    report_state& s = state();
    std::lock_guard guard(s.lock);
    (void)emit_locked(s, msg, gate);
}

void report_text(std::string_view text) {
    report_state& s = state();
    std::lock_guard guard(s.lock);
    while (!text.empty()) {
        const std::size_t end = text.find('\n');
        s.sink(text.substr(0, end));
        if (end == std::string_view::npos) break;
        text.remove_prefix(end + 1);
    }
}

report_sink set_report_sink(report_sink sink, fallback_text fallbacks) {
    report_state& s = state();
    std::lock_guard guard(s.lock);
    s.fallbacks = fallbacks;
    if (!sink) sink = write_to_stderr;
    std::swap(s.sink, sink);
    return sink;
}

void reset_reported_for_tests() {
    report_state& s = state();
    std::lock_guard guard(s.lock);
    s.reported.clear();
    s.held.clear();
}

void set_report_verbosity(category_set shown) {
    report_state& s = state();
    std::lock_guard guard(s.lock);
    s.shown.store(shown, std::memory_order_release);
    s.verbosity_known.store(true, std::memory_order_release);
    for (const held_line& line : s.held) {
        if (shown_in(shown, line.category)) s.sink(line.text);
    }
    s.held.clear();
}

bool info_enabled(report_category c) { return gate_info(c) == info_gate::show; }

std::optional<report_category> parse_report_category(std::string_view name) {
    for (report_category c : all_report_categories) {
        if (to_string(c) == name) return c;
    }
    return std::nullopt;
}

std::string_view to_string(report_level l) {
    switch (l) {
    case report_level::info: return "info";
    case report_level::warning: return "warning";
    case report_level::fatal: return "fatal";
    }
    return "?";
}

std::string_view to_string(report_category c) {
    switch (c) {
    case report_category::runtime: return "runtime";
    case report_category::topology: return "topology";
    case report_category::config: return "config";
    case report_category::loop: return "loop";
    case report_category::caps: return "caps";
    case report_category::omp: return "omp";
    case report_category::mpi: return "mpi";
    case report_category::coord: return "coord";
    }
    return "?";
}

}  // namespace aloe::runtime

// `aloe top [--socket PATH] [--interval S] [--once] [--json]`: aloed's clients, live.
// A terminal view redrawn every interval (1 s): the node's cores, what is shared out after
// background load, the policy, and per client its program, allocation, own count,
// efficiency, the measure it comes from, and whether it is malleable; for ranks that lend
// cores (issue 19), their last step: threads used, its length, waited and predicted slack.
// q or Ctrl-C quits.
// --json prints one JSON object per refresh (one line each; --once: one), for scripts.
// A daemon that goes away is waited for, and the view says so.
#include "commands.hpp"
#include "daemon_status.hpp"

#include "runtime/printable_text.hpp"

#include <charconv>
#include <chrono>
#include <csignal>
#include <iostream>
#include <poll.h>
#include <sstream>
#include <termios.h>
#include <unistd.h>

namespace aloe::cli {
namespace {

volatile std::sig_atomic_t interrupted = 0;
void on_interrupt(int) { interrupted = 1; }

// Raw keys (no echo, no line buffering) while the view runs, restored on the way out.
class raw_keys {
public:
    raw_keys() {
        if (::isatty(0) && ::tcgetattr(0, &saved_) == 0) {
            termios raw = saved_;
            raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
            raw.c_cc[VMIN] = 0;
            raw.c_cc[VTIME] = 0;
            active_ = ::tcsetattr(0, TCSANOW, &raw) == 0;
        }
    }
    ~raw_keys() {
        if (active_) ::tcsetattr(0, TCSANOW, &saved_);
    }
    raw_keys(const raw_keys&) = delete;
    raw_keys& operator=(const raw_keys&) = delete;

private:
    termios saved_{};
    bool active_ = false;
};

// Waits up to `ms` for a key; true when it was q.
bool quit_key(int ms) {
    if (!::isatty(0)) {  // no keys to read (a pipe at EOF would wake poll at once)
        ::poll(nullptr, 0, ms);
        return false;
    }
    pollfd p{0, POLLIN, 0};
    if (::poll(&p, 1, ms) <= 0) return false;
    char c = 0;
    return ::read(0, &c, 1) == 1 && (c == 'q' || c == 'Q');
}

}  // namespace

int top_command(arguments args) {
    std::string socket;
    bool once = false, json = false;
    double interval = 1.0;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string_view a = args[i];
        if (a == "--help" || a == "-h") {
            std::cout << "usage: aloe top [--socket PATH] [--interval SECONDS] [--once] [--json]\n"
                         "The node daemon's clients: allocation, own thread count, efficiency and its\n"
                         "measure, malleability; refreshed every interval (1 s). q quits.\n";
            return exit_ok;
        }
        if (a == "--once") once = true;
        else if (a == "--json") json = true;
        else if ((a == "--socket" || a == "--interval") && i + 1 >= args.size())
            return usage_error(std::string(a) + " needs a value", "top");
        else if (a == "--socket") socket = std::string(args[++i]);
        else if (a == "--interval") {
            const std::string_view v = args[++i];
            double s = 0;
            const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), s);
            if (ec != std::errc{} || end != v.data() + v.size() || !(s >= 0.1 && s <= 3600))
                return usage_error("--interval takes seconds in 0.1..3600, not '" + runtime::printable(v) + "'", "top");
            interval = s;
        } else {
            return usage_error("unknown option '" + runtime::printable(a) + "'", "top");
        }
    }
    std::signal(SIGINT, on_interrupt);
    std::signal(SIGTERM, on_interrupt);
    const bool screen = !json && !once && ::isatty(1);
    raw_keys keys;
    int rc = exit_ok;
    while (interrupted == 0) {
        std::string problem;
        const auto snapshot = query_daemon(socket, problem);
        std::ostringstream view;
        if (snapshot) {
            if (json) print_snapshot_json(*snapshot, view);
            else print_snapshot_text(*snapshot, view);
        } else {
            if (once) {
                std::cerr << "aloe: " << problem << '\n';
                return exit_failure;
            }
            if (json) view << "{\"error\": \"" << "no daemon answers" << "\"}\n";
            else view << "aloe top: " << problem << "; looking again every " << interval << " s\n";
            rc = exit_failure;
        }
        if (screen) std::cout << "\x1b[H\x1b[2J" << "aloe top  (q quits)\n\n";
        std::cout << view.str() << std::flush;
        if (once) return snapshot ? exit_ok : exit_failure;
        if (quit_key(static_cast<int>(interval * 1000))) break;
        if (snapshot) rc = exit_ok;
    }
    return rc;
}

}  // namespace aloe::cli

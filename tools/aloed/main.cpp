// aloed [--socket PATH] [--system] [--policy efficiency|equipartition] [--cores N]
//       [--chunk N] [--no-background-load] [--log FILE]
// The node daemon, in the foreground until SIGTERM, SIGINT or `aloe daemon stop`
// (`aloe daemon start` detaches it). Exit 0 on a clean stop, 1 when it cannot serve, 2 on
// a bad command line.
#include "coord/daemon_address.hpp"
#include "coord/daemon_server.hpp"
#include "runtime/config.hpp"
#include "runtime/short_slice.hpp"

#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <string_view>
#include <unistd.h>

namespace {

aloe::coord::daemon_server* serving = nullptr;

void on_stop_signal(int) {
    if (serving != nullptr) serving->stop();
}

int usage(const std::string& why) {
    std::fprintf(stderr,
                 "aloed: %s\n"
                 "usage: aloed [--socket PATH] [--system] [--policy efficiency|equipartition] [--cores N]\n"
                 "             [--chunk N] [--no-background-load] [--log FILE]\n",
                 why.c_str());
    return 2;
}

bool parse_count(std::string_view s, unsigned& out) {
    unsigned v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || end != s.data() + s.size() || v == 0 || v > aloe::coord::max_threads) return false;
    out = v;
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    aloe::coord::daemon_options options;
    std::string socket, log_path;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        auto value = [&](std::string_view name) -> const char* {
            if (i + 1 >= argc) return nullptr;
            (void)name;
            return argv[++i];
        };
        if (a == "--socket") {
            const char* v = value(a);
            if (v == nullptr) return usage("--socket needs a path");
            socket = v;
        } else if (a == "--system") {
            options.system_wide = true;
        } else if (a == "--policy") {
            const char* v = value(a);
            const auto p = v ? aloe::coord::policy_from_name(v) : std::nullopt;
            if (!p) return usage(std::string("--policy takes efficiency or equipartition, not '") + (v ? v : "") + "'");
            options.policy = *p;
        } else if (a == "--cores") {
            const char* v = value(a);
            if (v == nullptr || !parse_count(v, options.cores)) return usage("--cores takes a count in 1..4096");
        } else if (a == "--chunk") {
            const char* v = value(a);
            if (v == nullptr || !parse_count(v, options.chunk)) return usage("--chunk takes a count in 1..4096");
        } else if (a == "--no-background-load") {
            options.background_load = false;
        } else if (a == "--log") {
            const char* v = value(a);
            if (v == nullptr) return usage("--log needs a file");
            log_path = v;
        } else if (a == "--help" || a == "-h") {
            usage("the node daemon that shares cores between programs (docs/daemon.md)");
            return 0;
        } else {
            return usage("unknown option '" + std::string(a) + "'");
        }
    }
    if (options.system_wide && ::geteuid() != 0)
        std::fprintf(stderr, "aloed: warning: --system without root: only this user's processes can join\n");
    options.socket_path = aloe::coord::daemon_socket_path(aloe::runtime::process_environment(), ::geteuid(),
                                                          options.system_wide, socket);
    std::FILE* log = stderr;
    if (!log_path.empty()) {
        // Appended to, never followed through a symlink.
        const int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 || (log = ::fdopen(fd, "a")) == nullptr) {
            std::fprintf(stderr, "aloed: cannot open the log %s: %s\n", log_path.c_str(), std::strerror(errno));
            return 1;
        }
        std::setvbuf(log, nullptr, _IOLBF, 0);
    }
    // Each message is microseconds of work that moves cores between ranks; with the
    // default slice a woken aloed waited milliseconds for a rank's slice to end
    // (runtime/short_slice.hpp). Before open(): threads made later inherit it.
    const bool short_slice = aloe::runtime::request_short_slice();
    std::string problem;
    auto server = aloe::coord::daemon_server::open(options, problem);
    if (!server) {
        std::fprintf(stderr, "aloed: %s\n", problem.c_str());
        if (log != stderr) std::fprintf(log, "aloed: %s\n", problem.c_str());
        return 1;
    }
    server->log = [log](std::string_view line) {
        std::fprintf(log, "%.*s\n", static_cast<int>(line.size()), line.data());
    };
    if (!short_slice)
        server->log("aloed: the scheduler kept its default time slice (refused, or not SCHED_OTHER): lends and "
                    "take-backs may wait for a running rank's slice");
    serving = server.get();
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    for (const int s : {SIGTERM, SIGINT, SIGHUP}) ::sigaction(s, &sa, nullptr);
    std::signal(SIGPIPE, SIG_IGN);
    const int rc = server->run();
    serving = nullptr;
    return rc;
}

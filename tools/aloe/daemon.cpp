// `aloe daemon start|stop|status|policy|steer`: the node daemon aloed, for its user
// (docs/daemon.md). start detaches aloed (its own session, stdin from /dev/null, output to
// `<socket>.log`) and returns once it answers, or prints why it could not start.
#include "commands.hpp"
#include "daemon_status.hpp"

#include "coord/daemon_address.hpp"
#include "coord/daemon_connection.hpp"
#include "coord/daemon_server.hpp"
#include "runtime/config.hpp"
#include "runtime/printable_text.hpp"

#include <cerrno>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace aloe::cli {
namespace {

namespace fs = std::filesystem;

void print_help(std::ostream& out) {
    out << "usage: aloe daemon start [--socket PATH] [--system] [--policy efficiency|equipartition]\n"
           "                         [--cores N] [--chunk N] [--no-background-load]\n"
           "       aloe daemon stop [--socket PATH]\n"
           "       aloe daemon status [--socket PATH] [--json]\n"
           "       aloe daemon policy efficiency|equipartition [--socket PATH]\n"
           "       aloe daemon steer PID THREADS [--socket PATH]     (THREADS 0 lifts the cap)\n\n"
           "aloed shares this node's cores between the programs that run on aloe (aloe run, aloe's\n"
           "own loops), in proportion to how well each uses them. Without --socket, start uses\n"
           "$XDG_RUNTIME_DIR/aloe/aloed.sock (else /tmp/aloe-<uid>/aloed.sock; --system:\n"
           "/run/aloe/aloed.sock); the other commands address the first daemon that answers there,\n"
           "then at /run/aloe/aloed.sock. ALOE_DAEMON_SOCKET names one socket for everyone.\n";
}

fs::path aloed_binary() {
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    const fs::path beside = self.parent_path() / "aloed";
    if (fs::exists(beside, ec)) return beside;
    return fs::path(ALOE_BUILD_ALOED);
}

bool parse_count(std::string_view s, unsigned& out, unsigned least) {
    unsigned v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || end != s.data() + s.size() || v < least || v > coord::max_threads) return false;
    out = v;
    return true;
}

// One control message; prints the daemon's refusal. True when acknowledged.
// A daemon of another protocol version (an aloe upgraded under a running aloed) cannot read
// a stop; its owner (or root) stops it with SIGTERM instead, as aloed's own handler expects.
bool stop_other_version(const coord::received& r, const std::optional<coord::peer_identity>& peer, const std::string& at) {
    std::cerr << "aloe: aloed at " << runtime::printable(at) << " speaks protocol version " << r.record.version
              << ", this aloe " << coord::protocol_version;
    if (!peer || (peer->uid != ::geteuid() && ::geteuid() != 0) || ::kill(peer->pid, SIGTERM) != 0) {
        std::cerr << ": stop it by its process (kill " << (peer ? std::to_string(peer->pid) : std::string("<pid>"))
                  << ")\n";
        return false;
    }
    std::cerr << ": sent it SIGTERM (pid " << peer->pid << ")\n";
    return true;
}

bool control(const std::string& socket, const coord::control_message& m, std::string* where = nullptr) {
    std::string problem, at;
    const int fd = connect_daemon(socket, problem, &at);
    if (fd < 0) {
        std::cerr << "aloe: " << problem << '\n';
        return false;
    }
    if (where) *where = at;
    bool ok = false;
    if (coord::send_message(fd, m)) {
        const coord::received r = coord::receive_message(fd, 5000);
        if (r.status == coord::receive_status::ok && std::holds_alternative<coord::status_end_message>(*r.record.value)) ok = true;
        else if (r.status == coord::receive_status::ok && std::holds_alternative<coord::error_message>(*r.record.value))
            std::cerr << "aloe: aloed at " << runtime::printable(at) << " refused: "
                      << coord::text_of(std::get<coord::error_message>(*r.record.value).text) << '\n';
        else if (r.status == coord::receive_status::invalid && r.record.error == coord::decode_error::version &&
                 m.action == coord::control_action::stop)
            ok = stop_other_version(r, coord::peer_of(fd), at);
        else if (r.status == coord::receive_status::invalid && r.record.error == coord::decode_error::version)
            std::cerr << "aloe: aloed at " << runtime::printable(at) << " speaks protocol version " << r.record.version
                      << ", this aloe " << coord::protocol_version << ": restart it (aloe daemon stop, then start)\n";
        else
            std::cerr << "aloe: aloed at " << runtime::printable(at) << " did not answer\n";
    }
    ::close(fd);
    return ok;
}

int start(arguments args, std::ostream& out) {
    std::vector<std::string> daemon_args;
    std::string socket;
    bool system_wide = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string_view a = args[i];
        const bool takes_value = a == "--socket" || a == "--policy" || a == "--cores" || a == "--chunk";
        if (takes_value && i + 1 >= args.size()) return usage_error(std::string(a) + " needs a value", "daemon");
        if (a == "--socket") socket = std::string(args[++i]);
        else if (a == "--system") system_wide = true;
        else if (a == "--policy") {
            if (!coord::policy_from_name(args[i + 1]))
                return usage_error("--policy takes efficiency or equipartition, not '" + runtime::printable(args[i + 1]) + "'", "daemon");
            daemon_args.insert(daemon_args.end(), {"--policy", std::string(args[++i])});
        } else if (a == "--cores" || a == "--chunk") {
            unsigned v = 0;
            if (!parse_count(args[i + 1], v, 1))
                return usage_error(std::string(a) + " takes a count in 1..4096, not '" + runtime::printable(args[i + 1]) + "'", "daemon");
            daemon_args.insert(daemon_args.end(), {std::string(a), std::string(args[++i])});
        } else if (a == "--no-background-load") daemon_args.emplace_back(a);
        else return usage_error("unknown option '" + runtime::printable(a) + "'", "daemon");
    }
    const std::string path = coord::daemon_socket_path(runtime::process_environment(), ::geteuid(), system_wide, socket);
    if (const auto problem = coord::socket_path_problem(path)) {
        std::cerr << "aloe: " << *problem << '\n';
        return exit_failure;
    }
    // Already running: say so, successfully (a job script may start it unconditionally).
    if (const coord::dial_result d = coord::dial_daemon(path); d.fd >= 0) {
        const auto peer = coord::peer_of(d.fd);
        ::close(d.fd);
        out << "aloed already serves " << runtime::printable(path) << " (pid " << (peer ? peer->pid : 0) << ")\n";
        return exit_ok;
    }
    if (const auto problem = coord::prepare_socket_folder(path, ::geteuid(), system_wide)) {
        std::cerr << "aloe: " << *problem << '\n';
        return exit_failure;
    }
    daemon_args.insert(daemon_args.begin(), {"--socket", path, "--log", coord::daemon_log_path(path)});
    if (system_wide) daemon_args.emplace_back("--system");
    const fs::path binary = aloed_binary();

    // Detach: fork, new session, fork again (the daemon is no session leader and no child
    // of ours); the middle process reports the daemon's pid through a pipe.
    int pid_pipe[2];
    if (::pipe2(pid_pipe, O_CLOEXEC) != 0) {
        std::cerr << "aloe: cannot start aloed: " << std::strerror(errno) << '\n';
        return exit_failure;
    }
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(binary.c_str()));
    for (auto& s : daemon_args) argv.push_back(s.data());
    argv.push_back(nullptr);
    const pid_t middle = ::fork();
    if (middle < 0) {
        std::cerr << "aloe: cannot start aloed: " << std::strerror(errno) << '\n';
        return exit_failure;
    }
    if (middle == 0) {
        ::setsid();
        const pid_t daemon = ::fork();
        if (daemon == 0) {
            const int null = ::open("/dev/null", O_RDWR);
            ::dup2(null, 0);
            ::dup2(null, 1);
            ::dup2(null, 2);  // aloed writes to its --log
            ::execv(argv[0], argv.data());
            ::_exit(127);
        }
        (void)!::write(pid_pipe[1], &daemon, sizeof daemon);
        ::_exit(daemon > 0 ? 0 : 1);
    }
    ::close(pid_pipe[1]);
    pid_t daemon = 0;
    const bool got = ::read(pid_pipe[0], &daemon, sizeof daemon) == static_cast<ssize_t>(sizeof daemon);
    ::close(pid_pipe[0]);
    int st = 0;
    ::waitpid(middle, &st, 0);
    if (!got || daemon <= 0) {
        std::cerr << "aloe: cannot start " << binary.string() << '\n';
        return exit_failure;
    }
    // Ready when it answers; failed when it is gone first (its log says why).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
        if (const coord::dial_result d = coord::dial_daemon(path); d.fd >= 0) {
            // The pid of the daemon that answers: with two starts at once, the other one's.
            const auto peer = coord::peer_of(d.fd);
            ::close(d.fd);
            out << "aloed started (pid " << (peer ? peer->pid : daemon) << "), serving " << runtime::printable(path) << "; log "
                      << runtime::printable(coord::daemon_log_path(path)) << '\n';
            return exit_ok;
        }
        if (::kill(daemon, 0) != 0 && errno == ESRCH) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    std::cerr << "aloe: aloed did not start";
    std::ifstream log(coord::daemon_log_path(path));
    std::string line, last;
    while (std::getline(log, line)) last = line;
    if (!last.empty()) std::cerr << ": " << runtime::printable(last);
    std::cerr << '\n';
    return exit_failure;
}

// --socket PATH among the words; the rest returned in order.
bool split_socket(arguments args, std::string& socket, std::vector<std::string_view>& rest) {
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "--socket") {
            if (i + 1 >= args.size()) return false;
            socket = std::string(args[++i]);
        } else {
            rest.push_back(args[i]);
        }
    }
    return true;
}

}  // namespace

int start_daemon_for_run() {
    std::ostringstream said;
    return start({}, said);
}

int daemon_command(arguments args) {
    if (args.empty()) {
        print_help(std::cerr);
        return exit_usage;
    }
    const std::string_view what = args[0];
    if (what == "--help" || what == "-h" || what == "help") {
        print_help(std::cout);
        return exit_ok;
    }
    if (what == "start") return start(args.subspan(1), std::cout);
    std::string socket;
    std::vector<std::string_view> rest;
    if (!split_socket(args.subspan(1), socket, rest)) return usage_error("--socket needs a path", "daemon");
    if (what == "status") {
        bool json = false;
        for (const auto w : rest) {
            if (w == "--json") json = true;
            else return usage_error("unknown option '" + runtime::printable(w) + "'", "daemon");
        }
        std::string problem;
        const auto snapshot = query_daemon(socket, problem);
        if (!snapshot) {
            std::cerr << "aloe: " << problem << '\n';
            return exit_failure;
        }
        if (json) print_snapshot_json(*snapshot, std::cout);
        else print_snapshot_text(*snapshot, std::cout);
        return exit_ok;
    }
    if (what == "stop") {
        if (!rest.empty()) return usage_error("unknown option '" + runtime::printable(rest[0]) + "'", "daemon");
        std::string where;
        if (!control(socket, {coord::control_action::stop, coord::policy_id::efficiency, 0, 0}, &where)) return exit_failure;
        // Gone when its socket is (it removes it on the way out).
        for (int i = 0; i < 250 && fs::exists(where); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
        std::cout << "aloed at " << runtime::printable(where) << " stopped\n";
        return exit_ok;
    }
    if (what == "policy") {
        if (rest.size() != 1) return usage_error("policy takes one name: efficiency or equipartition", "daemon");
        const auto p = coord::policy_from_name(rest[0]);
        if (!p) return usage_error("unknown policy '" + runtime::printable(rest[0]) + "' (efficiency or equipartition)", "daemon");
        if (!control(socket, {coord::control_action::set_policy, *p, 0, 0})) return exit_failure;
        std::cout << "policy is now " << coord::policy_name(*p) << '\n';
        return exit_ok;
    }
    if (what == "steer") {
        if (rest.size() != 2) return usage_error("steer takes a PID and a thread count", "daemon");
        unsigned pid = 0, threads = 0;
        const auto [end, ec] = std::from_chars(rest[0].data(), rest[0].data() + rest[0].size(), pid);
        if (ec != std::errc{} || end != rest[0].data() + rest[0].size() || pid == 0 || pid > (1u << 22))
            return usage_error("steer's PID must be a process id, not '" + runtime::printable(rest[0]) + "'", "daemon");
        if (!parse_count(rest[1], threads, 0)) return usage_error("steer's thread count must be 0..4096, not '" + runtime::printable(rest[1]) + "'", "daemon");
        if (!control(socket, {coord::control_action::steer, coord::policy_id::efficiency, static_cast<std::int32_t>(pid), threads})) return exit_failure;
        std::cout << "pid " << pid << (threads ? " capped at " + std::to_string(threads) + " threads" : std::string(": cap lifted")) << '\n';
        return exit_ok;
    }
    return usage_error("unknown daemon command '" + runtime::printable(what) + "' (start, stop, status, policy, steer)", "daemon");
}

}  // namespace aloe::cli

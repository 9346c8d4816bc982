#include "daemon_status.hpp"

#include "coord/daemon_address.hpp"
#include "coord/daemon_connection.hpp"
#include "runtime/config.hpp"
#include "runtime/json_text.hpp"
#include "runtime/printable_text.hpp"

#include <cstdio>
#include <unistd.h>

namespace aloe::cli {

int connect_daemon(const std::string& socket, std::string& problem, std::string* answered_at) {
    std::vector<coord::daemon_address> where;
    if (!socket.empty()) where.push_back({socket, "--socket"});
    else where = coord::client_addresses(runtime::process_environment(), ::geteuid());
    std::string tried;
    for (const auto& a : where) {
        const coord::dial_result d = coord::dial_daemon(a.path);
        if (d.fd >= 0) {
            if (answered_at) *answered_at = a.path;
            return d.fd;
        }
        if (!tried.empty()) tried += "; ";
        tried += d.error == ENOENT ? a.path + ": no daemon" : d.error == ECONNREFUSED ? a.path + ": stale socket, no daemon" : d.problem;
    }
    problem = "no aloed answers (" + tried + ")";
    return -1;
}

std::optional<daemon_snapshot> query_daemon(const std::string& socket, std::string& problem) {
    daemon_snapshot s;
    const int fd = connect_daemon(socket, problem, &s.socket);
    if (fd < 0) return std::nullopt;
    if (const auto peer = coord::peer_of(fd)) s.daemon_pid = peer->pid;
    if (!coord::send_message(fd, coord::status_query_message{})) {
        problem = "cannot ask aloed at " + s.socket;
        ::close(fd);
        return std::nullopt;
    }
    for (;;) {
        const coord::received r = coord::receive_message(fd, 2000);
        if (r.status == coord::receive_status::invalid && r.record.error == coord::decode_error::version) {
            problem = "aloed at " + s.socket + " speaks protocol version " + std::to_string(r.record.version) +
                      ", this aloe " + std::to_string(coord::protocol_version) +
                      ": restart the daemon with this aloe (aloe daemon stop, then aloe daemon start)";
            ::close(fd);
            return std::nullopt;
        }
        if (r.status != coord::receive_status::ok) {
            problem = "aloed at " + s.socket + (r.status == coord::receive_status::timeout ? " did not answer within 2 s" : " ended the answer early");
            ::close(fd);
            return std::nullopt;
        }
        if (const auto* e = std::get_if<coord::status_entry_message>(&*r.record.value)) {
            s.clients.push_back(*e);
        } else if (const auto* end = std::get_if<coord::status_end_message>(&*r.record.value)) {
            s.node = *end;
            ::close(fd);
            return s;
        }
    }
}

namespace {
std::string flags_text(std::uint32_t f) {
    std::string out = (f & coord::client_interposed) ? "openmp" : (f & coord::client_native) ? "aloe" : "?";
    if (f & coord::client_not_malleable) out += ",fixed";
    return out;
}
}  // namespace

void print_snapshot_text(const daemon_snapshot& s, std::ostream& out) {
    char line[256];
    std::snprintf(line, sizeof line, "aloed pid %d at %s: %u cores, %u shared out (background %.2f CPUs), policy %s, %u clients\n",
                  s.daemon_pid, runtime::printable(s.socket).c_str(), s.node.cores, s.node.available, s.node.background,
                  std::string(coord::policy_name(s.node.policy)).c_str(), s.node.clients);
    out << line;
    if (s.clients.empty()) return;
    out << "     PID  NAME             THREADS  ALONE  LENT  BORROWED  EFFICIENCY  MEASURE        KIND          JOB\n";
    for (const auto& c : s.clients) {
        const std::string eff = c.measure == coord::efficiency_measure::none ? "-" : std::to_string(c.efficiency).substr(0, 4);
        std::snprintf(line, sizeof line, "%8d  %-15s  %7u  %5u  %4u  %8u  %10s  %-13s  %-12s  %s\n", c.pid,
                      std::string(coord::text_of(c.name)).c_str(), c.threads, c.own_threads, c.lent, c.borrowed, eff.c_str(),
                      std::string(coord::measure_name(c.measure)).c_str(), flags_text(c.flags).c_str(),
                      std::string(coord::text_of(c.job)).c_str());
        out << line;
    }
    // Ranks that report their lending steps (libaloe-mpi, issue 19): the last one each.
    bool header = false;
    for (const auto& c : s.clients) {
        if (c.step.steps == 0) continue;
        if (!header) out << "     PID  LAST STEP OF   STEPS  OWN   USED  STEP ms  WAITED ms  PREDICTED ms\n";
        header = true;
        char predicted[32] = "-";
        if (c.step.predicted_s >= 0) std::snprintf(predicted, sizeof predicted, "%.3f", c.step.predicted_s * 1e3);
        std::snprintf(line, sizeof line, "%8d  %-12s  %6u  %3u  %5.2f  %7.3f  %9.3f  %12s\n", c.pid,
                      std::string(coord::text_of(c.name)).substr(0, 12).c_str(), c.step.steps, c.step.own_threads,
                      c.step.threads_used, c.step.seconds * 1e3, c.step.waited_s * 1e3, predicted);
        out << line;
    }
}

void print_snapshot_json(const daemon_snapshot& s, std::ostream& out) {
    out << "{\"socket\": " << runtime::json_quote(s.socket) << ", \"pid\": " << s.daemon_pid
        << ", \"cores\": " << s.node.cores << ", \"available\": " << s.node.available
        << ", \"background\": " << s.node.background << ", \"policy\": " << runtime::json_quote(coord::policy_name(s.node.policy))
        << ", \"clients_total\": " << s.node.clients << ", \"clients\": [";
    for (std::size_t i = 0; i < s.clients.size(); ++i) {
        const auto& c = s.clients[i];
        out << (i ? ", " : "") << "{\"pid\": " << c.pid << ", \"uid\": " << c.uid << ", \"name\": " << runtime::json_quote(coord::text_of(c.name))
            << ", \"threads\": " << c.threads << ", \"own_threads\": " << c.own_threads
            << ", \"lent\": " << c.lent << ", \"borrowed\": " << c.borrowed
            << ", \"efficiency\": " << (c.measure == coord::efficiency_measure::none ? std::string("null") : std::to_string(c.efficiency))
            << ", \"measure\": " << runtime::json_quote(coord::measure_name(c.measure))
            << ", \"malleable\": " << ((c.flags & coord::client_not_malleable) ? "false" : "true")
            << ", \"kind\": " << runtime::json_quote(flags_text(c.flags)) << ", \"job\": " << runtime::json_quote(coord::text_of(c.job));
        // The last lending step it reported (null: none).
        if (c.step.steps == 0) {
            out << ", \"step\": null}";
        } else {
            out << ", \"step\": {\"steps\": " << c.step.steps << ", \"own_threads\": " << c.step.own_threads
                << ", \"threads_used\": " << runtime::json_number(c.step.threads_used)
                << ", \"seconds\": " << runtime::json_number(c.step.seconds) << ", \"waited_s\": " << runtime::json_number(c.step.waited_s)
                << ", \"predicted_s\": " << (c.step.predicted_s < 0 ? std::string("null") : runtime::json_number(c.step.predicted_s))
                << "}}";
        }
    }
    out << "]}\n";
}

}  // namespace aloe::cli

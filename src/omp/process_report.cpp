#include "omp/process_report.hpp"

#include "runtime/json_text.hpp"
#include "runtime/plain_text.hpp"
#include "runtime/printable_text.hpp"

#include <aloe/version.hpp>

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace aloe::omp {
namespace {

using runtime::json_number;
using runtime::json_quote;

using runtime::fixed;

std::string seconds_text(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", s);
    return buf;
}

// Every text in the summary comes from the program or its files (site and file names, what it
// asked, its command line): printed through printable(), so no byte of it can move the
// terminal's cursor, start a line, or widen a column without bound.
constexpr std::size_t cell_limit = 80;
constexpr std::size_t free_text_limit = 240;  // the last column ("run by", reasons)

std::string cell(const std::string& s) { return runtime::printable(s, cell_limit); }
std::string or_dash(const std::string& s) { return s.empty() ? "-" : cell(s); }

// Columns as wide as their widest cell, two blanks apart; the last column is free text.
std::string table(const std::vector<std::vector<std::string>>& rows) {
    std::vector<std::size_t> width;
    for (const auto& row : rows)
        for (std::size_t c = 0; c + 1 < row.size(); ++c) {
            if (width.size() <= c) width.resize(c + 1, 0);
            width[c] = std::max(width[c], row[c].size());
        }
    std::string out;
    for (const auto& row : rows) {
        out += "  ";
        for (std::size_t c = 0; c < row.size(); ++c) {
            out += row[c];
            if (c + 1 < row.size()) out.append(width[c] - row[c].size() + 2, ' ');
        }
        out += "\n";
    }
    return out;
}

// The command as a shell would show it, shortened for one line of the summary.
std::string command_text(const process_report& p) {
    constexpr std::size_t longest = 60;
    std::string out;
    for (const std::string& word : p.command) {
        if (!out.empty()) out += ' ';
        out += word;
    }
    if (out.empty()) out = p.executable.empty() ? "?" : p.executable;
    return runtime::printable(out, longest);
}

std::string run_by(const loop_report& l) {
    std::string by;
    if (l.taken > 0) {
        by = !l.tuning_json.empty() ? "aloe adaptive -> " + l.tuning_chosen + " (" + l.tuning_state + ")"
                                    : "aloe " + l.schedule;
        if (!l.note.empty()) by += " [" + l.note + "]";
    }
    if (l.forwarded > 0)
        by += std::string(by.empty() ? "" : "; ") + "libgomp, forwarded: " + (l.forward_reason.empty() ? "-" : l.forward_reason);
    return by.empty() ? "-" : runtime::printable(by, free_text_limit);
}

void header(std::ostringstream& out, const run_request& run) {
    out << "aloe run: schedule " << cell(run.schedule_text) << ", threads "
        << (run.threads > 0 ? std::to_string(run.threads) : std::string("libgomp's default"));
    if (!run.rules_file.empty()) out << ", rules " << runtime::printable(run.rules_file, runtime::printable_path_limit);
    out << "\n";
}

}  // namespace

std::string format_summary(const run_request& run, const std::vector<process_report>& processes) {
    std::vector<const process_report*> active, quiet;
    for (const process_report& p : processes) (p.ran_openmp() ? active : quiet).push_back(&p);
    const bool with_pid = active.size() > 1;

    std::ostringstream out;
    header(out, run);
    if (processes.empty()) {
        out << "  no process wrote a report: " << no_report_causes << "\n";
    } else if (active.empty()) {
        // A region is counted when it ends: exit() inside the first one leaves none counted.
        out << "  no OpenMP region or loop ran under the interposer: the program does not use GCC's OpenMP "
               "runtime (libgomp), is statically linked, or ended before its first parallel region did\n";
    }
    if (with_pid) {
        out << "  " << active.size() << " processes ran OpenMP code:\n";
        for (const process_report* p : active) out << "    pid " << p->pid << "  " << command_text(*p) << "\n";
    }
    if (!quiet.empty() && !active.empty()) {
        out << "  " << quiet.size() << (quiet.size() == 1 ? " other process" : " other processes")
            << " loaded the interposer and ran no OpenMP code:";
        for (std::size_t i = 0; i < quiet.size() && i < 8; ++i) out << (i ? ", " : " ") << command_text(*quiet[i]);
        if (quiet.size() > 8) out << ", ...";
        out << "\n";
    }
    for (const process_report* p : active)
        if (!p->program_sets_threads.empty())
            out << "  " << (with_pid ? "pid " + std::to_string(p->pid) + ": " : std::string())
                << "the program sets its own thread count (" << cell(p->program_sets_threads) << ")\n";
    if (active.empty()) return out.str();

    auto with_pid_column = [&](std::vector<std::string> row, const std::string& pid) {
        if (with_pid) row.insert(row.begin(), pid);
        return row;
    };
    std::vector<std::vector<std::string>> rows = {with_pid_column(
        {"site", "source", "calls", "threads", "time s", "imbalance", "thread count"}, "pid")};
    for (const process_report* p : active)
        for (const region_report& r : p->regions)
            rows.push_back(with_pid_column(
                {cell(r.site), or_dash(r.source), std::to_string(r.invocations), std::to_string(r.threads_last),
                 seconds_text(r.time_s), r.invocations > 0 ? fixed(r.imbalance_mean, 3) : "-",
                 r.thread_count_set_by.empty() ? std::string("aloe") : "program's (" + cell(r.thread_count_set_by) + ")"},
                std::to_string(p->pid)));
    out << "\nparallel regions\n" << table(rows);
    rows = {with_pid_column({"site", "source", "asked", "calls", "iterations", "time s", "imbalance", "run by"}, "pid")};
    for (const process_report* p : active)
        for (const loop_report& l : p->loops)
            rows.push_back(with_pid_column(
                {cell(l.site), or_dash(l.source), cell(l.asked), std::to_string(l.calls()),
                 std::to_string(l.iterations + l.forwarded_iterations), seconds_text(l.time_s + l.forwarded_time_s),
                 l.taken > 0 && l.imbalance_mean > 0 ? fixed(l.imbalance_mean, 3) : "-", run_by(l)},
                std::to_string(p->pid)));
    out << "\nloops\n" << table(rows);
    return out.str();
}

std::string format_stats_json(const run_request& run, const std::vector<process_report>& processes) {
    std::ostringstream out;
    std::string sets;
    for (const process_report& p : processes)
        if (sets.empty()) sets = p.program_sets_threads;
    out << "{\n  \"tool\": \"aloe run\",\n  \"aloe_version\": " << json_quote(version())
        << ",\n  \"schedule\": " << json_quote(run.schedule_text) << ",\n  \"threads\": " << run.threads
        << ",\n  \"rules\": " << json_quote(run.rules_file)
        << ",\n  \"program_sets_threads\": " << (sets.empty() ? "null" : json_quote(sets)) << ",\n  \"processes\": [";
    bool comma = false;
    for (const process_report& p : processes) {
        out << (comma ? "," : "") << "\n    {\"pid\": " << p.pid << ", \"ppid\": " << p.ppid << ", \"command\": [";
        for (std::size_t i = 0; i < p.command.size(); ++i) out << (i ? ", " : "") << json_quote(p.command[i]);
        out << "], \"executable\": " << json_quote(p.executable) << ", \"program_sets_threads\": "
            << (p.program_sets_threads.empty() ? "null" : json_quote(p.program_sets_threads))
            << ", \"regions\": " << p.regions.size() << ", \"loops\": " << p.loops.size() << "}";
        comma = true;
    }
    out << "\n  ],\n  \"regions\": [";
    comma = false;
    for (const process_report& p : processes)
        for (const region_report& r : p.regions) {
            out << (comma ? "," : "") << "\n    {\"pid\": " << p.pid << ", \"site\": " << json_quote(r.site)
                << ", \"source\": " << json_quote(r.source) << ", \"invocations\": " << r.invocations
                << ", \"threads_last\": " << r.threads_last << ", \"threads_max\": " << r.threads_max
                << ", \"time_s\": " << json_number(r.time_s) << ", \"imbalance_mean\": " << json_number(r.imbalance_mean)
                << ", \"malleable\": " << (r.thread_count_set_by.empty() ? "true" : "false")
                << ", \"thread_count_set_by\": "
                << (r.thread_count_set_by.empty() ? "null" : json_quote(r.thread_count_set_by)) << "}";
            comma = true;
        }
    out << "\n  ],\n  \"loops\": [";
    comma = false;
    for (const process_report& p : processes)
        for (const loop_report& l : p.loops) {
            out << (comma ? "," : "") << "\n    {\"pid\": " << p.pid << ", \"site\": " << json_quote(l.site)
                << ", \"source\": " << json_quote(l.source) << ", \"asked\": " << json_quote(l.asked)
                << ", \"calls\": " << l.calls() << ", \"forwarded\": " << l.forwarded
                << ", \"forward_reason\": " << (l.forward_reason.empty() ? "null" : json_quote(l.forward_reason))
                << ", \"note\": " << (l.note.empty() ? "null" : json_quote(l.note))
                << ", \"forwarded_iterations\": " << l.forwarded_iterations
                << ", \"forwarded_time_s\": " << json_number(l.forwarded_time_s) << ", \"taken\": " << l.taken;
            if (l.taken > 0 || !l.schedule.empty())
                out << ", \"schedule\": " << json_quote(l.schedule) << ", \"iterations\": " << l.iterations
                    << ", \"time_s\": " << json_number(l.time_s) << ", \"imbalance_mean\": " << json_number(l.imbalance_mean);
            if (!l.tuning_json.empty()) out << ", \"tuning\": " << l.tuning_json;
            if (!l.slack_json.empty()) out << ", \"slack\": " << l.slack_json;
            out << "}";
            comma = true;
        }
    out << "\n  ]\n}\n";
    return out.str();
}

}  // namespace aloe::omp

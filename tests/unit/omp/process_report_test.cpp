// The per-process report model (omp/process_report.hpp) through both of its formatters, and
// back through the reader `aloe run` uses on what its processes wrote
// (tools/aloe/run_reports.cpp, parse_process_reports): every field survives the round trip,
// whatever bytes a site name or a command holds; a malformed document is refused with a reason;
// the summary's shape follows the number of processes that ran OpenMP code.
//
// Before issue 12 there was no such model: each process printed its own summary and JSON
// (one process per document, no "processes", no "pid"), and nothing read them back.
#include "omp/process_report.hpp"
#include "runtime/printable_text.hpp"
#include "unit/strict_json.hpp"

#include "../tools/aloe/run_reports.hpp"  // the CLI's folder is not on the include path; src/ is

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace {

using aloe::omp::loop_report;
using aloe::omp::process_report;
using aloe::omp::region_report;
using aloe::omp::run_request;

const std::string replacement = "\xEF\xBF\xBD";  // U+FFFD

// Hostile texts: what a site name (from a file name), a source line or a command may hold.
std::string with_nul() { return std::string("before\0after", 12); }
std::string control_bytes() { return "bell\a esc\x1b[2J del\x7f tab\t cr\r nl\n ff\f bs\b x01\x01"; }
std::string quotes_and_backslashes() { return R"(say "hi" \ C:\path\ \" \\" \u0041)"; }
std::string separators() { return "line\xE2\x80\xA8sep\xE2\x80\xA9para"; }  // U+2028, U+2029
std::string long_name() { return std::string(10 * 1024, 'n') + "+0x1234"; }
std::string invalid_utf8() { return "a\xFF" "b\xE2\x82" "c"; }  // a stray byte; a cut 3-byte form
std::string invalid_utf8_as_read() { return "a" + replacement + "b" + replacement + "c"; }

region_report region(std::string site, std::uint64_t calls) {
    region_report r;
    r.site = std::move(site);
    r.source = "prog.c:12 (main)";
    r.invocations = calls;
    r.threads_last = 3;
    r.threads_max = 4;
    r.time_s = 0.1;
    r.imbalance_mean = 1.25;
    return r;
}

loop_report taken_loop(std::string site, std::uint64_t calls) {
    loop_report l;
    l.site = std::move(site);
    l.source = "prog.c:20 (main._omp_fn.0)";
    l.asked = "nonmonotonic_dynamic,8";
    l.taken = calls;
    l.schedule = "dynamic,chunk=8";
    l.iterations = calls * 1000;
    l.time_s = 1.0 / 3.0;
    l.imbalance_mean = 1.0000000000000002;
    return l;
}

loop_report forwarded_loop(std::string site) {
    loop_report l;
    l.site = std::move(site);
    l.asked = "ordered";
    l.forwarded = 5;
    l.forwarded_iterations = 320;
    l.forwarded_time_s = 4.1e-05;
    l.forward_reason = "ordered (libgomp sequences the ordered regions)";
    return l;
}

// Three processes: one with ordinary sites, one whose every text field is hostile, one quiet.
std::vector<process_report> sample() {
    process_report a;
    a.pid = 4194303;
    a.ppid = 1;
    a.command = {"./app", "--size", "1000"};
    a.executable = "/home/user/app";
    a.regions = {region("app+0x1198", 5), region("app+0x11ec", 1)};
    a.regions[1].thread_count_set_by = "num_threads clause";
    a.loops = {taken_loop("app+0x13f6", 5), forwarded_loop("app+0x146f")};
    loop_report both = taken_loop("app+0x1500", 2);  // taken twice, then forwarded by a rule
    both.forwarded = 1;
    both.forwarded_iterations = 7;
    both.forwarded_time_s = 1e-300;
    both.forward_reason = "rules file says forward";
    both.note = "the program's chunk";
    a.loops.push_back(both);
    loop_report adaptive = taken_loop("app+0x1600", std::numeric_limits<std::uint64_t>::max() / 1000);
    adaptive.iterations = std::numeric_limits<std::uint64_t>::max();
    adaptive.schedule = "adaptive";
    adaptive.tuning_chosen = "staggered,fs=0.8";
    adaptive.tuning_state = "converged";
    adaptive.tuning_json =
        R"({"chosen": "staggered,fs=0.8", "state": "converged", "probes": [1.5, 2, 3e-7], "note": "a \"quoted\" \\ value"})";
    a.loops.push_back(adaptive);

    process_report b;
    b.pid = 77;
    b.ppid = 4194303;
    b.command = {with_nul(), control_bytes(), quotes_and_backslashes(), separators(), long_name(), ""};
    b.executable = quotes_and_backslashes();
    b.program_sets_threads = "omp_set_num_threads(3) \"x\"";
    region_report r = region(control_bytes(), 3);
    r.source = quotes_and_backslashes();
    r.thread_count_set_by = separators();
    b.regions = {r, region(long_name(), 2), region(with_nul(), 1)};
    loop_report l = taken_loop(quotes_and_backslashes(), 4);
    l.source = with_nul();
    l.asked = control_bytes();
    l.schedule = separators();
    l.note = long_name();
    b.loops = {l, forwarded_loop(control_bytes())};
    b.loops[1].forward_reason = quotes_and_backslashes();

    process_report c;  // a shell that started the others
    c.pid = 76;
    c.ppid = 2;
    c.command = {"sh", "-c", "./app; ./app"};
    c.executable = "/bin/sh";
    return {a, b, c};
}

void expect_same_region(const region_report& want, const region_report& got) {
    EXPECT_EQ(want.site, got.site);
    EXPECT_EQ(want.source, got.source);
    EXPECT_EQ(want.invocations, got.invocations);
    EXPECT_EQ(want.threads_last, got.threads_last);
    EXPECT_EQ(want.threads_max, got.threads_max);
    EXPECT_EQ(want.time_s, got.time_s);
    EXPECT_EQ(want.imbalance_mean, got.imbalance_mean);
    EXPECT_EQ(want.thread_count_set_by, got.thread_count_set_by);
}

void expect_same_loop(const loop_report& want, const loop_report& got) {
    EXPECT_EQ(want.site, got.site);
    EXPECT_EQ(want.source, got.source);
    EXPECT_EQ(want.asked, got.asked);
    EXPECT_EQ(want.forwarded, got.forwarded);
    EXPECT_EQ(want.forwarded_iterations, got.forwarded_iterations);
    EXPECT_EQ(want.forwarded_time_s, got.forwarded_time_s);
    EXPECT_EQ(want.forward_reason, got.forward_reason);
    EXPECT_EQ(want.note, got.note);
    EXPECT_EQ(want.taken, got.taken);
    EXPECT_EQ(want.schedule, got.schedule);
    EXPECT_EQ(want.iterations, got.iterations);
    EXPECT_EQ(want.time_s, got.time_s);
    EXPECT_EQ(want.imbalance_mean, got.imbalance_mean);
    EXPECT_EQ(want.tuning_chosen, got.tuning_chosen);
    EXPECT_EQ(want.tuning_state, got.tuning_state);
    EXPECT_EQ(want.tuning_json.empty(), got.tuning_json.empty());
    if (!want.tuning_json.empty() && !got.tuning_json.empty()) {  // the same object, spelled its own way
        EXPECT_EQ(nlohmann::json::parse(want.tuning_json), nlohmann::json::parse(got.tuning_json));
    }
    EXPECT_EQ(want.calls(), got.calls());
}

void expect_same_process(const process_report& want, const process_report& got) {
    SCOPED_TRACE("pid " + std::to_string(want.pid));
    EXPECT_EQ(want.pid, got.pid);
    EXPECT_EQ(want.ppid, got.ppid);
    EXPECT_EQ(want.command, got.command);
    EXPECT_EQ(want.executable, got.executable);
    EXPECT_EQ(want.program_sets_threads, got.program_sets_threads);
    ASSERT_EQ(want.regions.size(), got.regions.size());
    for (std::size_t i = 0; i < want.regions.size(); ++i) expect_same_region(want.regions[i], got.regions[i]);
    ASSERT_EQ(want.loops.size(), got.loops.size());
    for (std::size_t i = 0; i < want.loops.size(); ++i) expect_same_loop(want.loops[i], got.loops[i]);
}

std::vector<process_report> read_back(const std::string& text) {
    std::vector<process_report> out;
    std::string error;
    EXPECT_TRUE(aloe::cli::parse_process_reports(text, out, error)) << error;
    EXPECT_TRUE(error.empty()) << error;
    return out;
}

const run_request request{"staggered,fs=0.5,chunk=4", 3, "/rules/with \"quote\""};

TEST(OmpProcessReport, StatsJsonRoundTripKeepsEveryField) {
    const std::vector<process_report> written = sample();
    const std::vector<process_report> got = read_back(aloe::omp::format_stats_json(request, written));
    ASSERT_EQ(got.size(), written.size());
    for (std::size_t i = 0; i < written.size(); ++i) expect_same_process(written[i], got[i]);
}

TEST(OmpProcessReport, StatsJsonIsStrictJsonWithTheDocumentedMembers) {
    const std::vector<process_report> written = sample();
    const std::string text = aloe::omp::format_stats_json(request, written);
    std::string error;
    const auto strict = aloe::testing::strict_json_reader::parse(text, error);
    ASSERT_TRUE(strict.has_value()) << error;
    const nlohmann::json doc = nlohmann::json::parse(text);
    EXPECT_EQ(doc.at("tool"), "aloe run");
    EXPECT_EQ(doc.at("schedule"), request.schedule_text);
    EXPECT_EQ(doc.at("threads"), request.threads);
    EXPECT_EQ(doc.at("rules"), request.rules_file);
    // The first process that set its own thread count (only the second did).
    EXPECT_EQ(doc.at("program_sets_threads"), written[1].program_sets_threads);
    ASSERT_EQ(doc.at("processes").size(), 3u);
    EXPECT_EQ(doc.at("processes")[0].at("regions"), 2);
    EXPECT_EQ(doc.at("processes")[0].at("loops"), 4);
    EXPECT_EQ(doc.at("processes")[2].at("loops"), 0);
    EXPECT_TRUE(doc.at("processes")[2].at("program_sets_threads").is_null());
    // Every row names its process; rows follow the processes' order.
    std::vector<long> region_pids, loop_pids;
    for (const auto& r : doc.at("regions")) region_pids.push_back(r.at("pid").get<long>());
    for (const auto& l : doc.at("loops")) loop_pids.push_back(l.at("pid").get<long>());
    EXPECT_EQ(region_pids, (std::vector<long>{4194303, 4194303, 77, 77, 77}));
    EXPECT_EQ(loop_pids, (std::vector<long>{4194303, 4194303, 4194303, 4194303, 77, 77}));
    EXPECT_EQ(doc.at("loops")[0].at("calls"), 5);
    EXPECT_EQ(doc.at("loops")[2].at("calls"), 3) << "taken 2 + forwarded 1";
    EXPECT_FALSE(doc.at("loops")[1].contains("schedule")) << "a loop never taken has no aloe schedule";
    EXPECT_TRUE(doc.at("loops")[3].at("tuning").is_object());
}

TEST(OmpProcessReport, StatsJsonOfNoProcessIsAnEmptyDocument) {
    const std::string text = aloe::omp::format_stats_json(run_request{"program", 0, ""}, {});
    const nlohmann::json doc = nlohmann::json::parse(text);
    EXPECT_TRUE(doc.at("processes").empty());
    EXPECT_TRUE(doc.at("regions").empty());
    EXPECT_TRUE(doc.at("loops").empty());
    EXPECT_TRUE(doc.at("program_sets_threads").is_null());
    EXPECT_TRUE(read_back(text).empty());
}

TEST(OmpProcessReport, InvalidUtf8BecomesOneReplacementPerBrokenSequence) {
    process_report p;
    p.pid = 5;
    p.command = {invalid_utf8()};
    p.executable = invalid_utf8();
    p.regions = {region(invalid_utf8(), 1)};
    p.loops = {taken_loop(invalid_utf8(), 1)};
    p.loops[0].forward_reason = invalid_utf8();
    const std::string text = aloe::omp::format_stats_json(request, {p});
    std::string error;
    ASSERT_TRUE(aloe::testing::strict_json_reader::parse(text, error).has_value()) << error;
    const std::vector<process_report> got = read_back(text);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].command, std::vector<std::string>{invalid_utf8_as_read()});
    EXPECT_EQ(got[0].executable, invalid_utf8_as_read());
    ASSERT_EQ(got[0].regions.size(), 1u);
    EXPECT_EQ(got[0].regions[0].site, invalid_utf8_as_read());
    ASSERT_EQ(got[0].loops.size(), 1u);
    EXPECT_EQ(got[0].loops[0].site, invalid_utf8_as_read());
    EXPECT_EQ(got[0].loops[0].forward_reason, invalid_utf8_as_read());
}

TEST(OmpProcessReport, NonFiniteTimesKeepTheDocumentReadable) {
    process_report p;
    p.pid = 9;
    p.regions = {region("r", 1)};
    p.regions[0].time_s = std::numeric_limits<double>::quiet_NaN();
    p.regions[0].imbalance_mean = std::numeric_limits<double>::infinity();
    p.loops = {taken_loop("l", 1)};
    p.loops[0].time_s = -std::numeric_limits<double>::infinity();
    const std::vector<process_report> got = read_back(aloe::omp::format_stats_json(request, {p}));
    ASSERT_EQ(got.size(), 1u);
    ASSERT_EQ(got[0].regions.size(), 1u);
    ASSERT_EQ(got[0].loops.size(), 1u);
    // JSON has no NaN or infinity: written as null, read as "unknown" (0).
    EXPECT_EQ(got[0].regions[0].time_s, 0.0);
    EXPECT_EQ(got[0].regions[0].imbalance_mean, 0.0);
    EXPECT_EQ(got[0].loops[0].time_s, 0.0);
    EXPECT_EQ(got[0].loops[0].iterations, 1000u);
}

TEST(OmpProcessReport, ReadingAppendsAndKeepsRowsWithTheirProcess) {
    // aloe run reads one document per process into one list: rows must find their process
    // among the ones this document added, not the earlier ones.
    const std::vector<process_report> all = sample();
    std::vector<process_report> out;
    std::string error;
    ASSERT_TRUE(aloe::cli::parse_process_reports(aloe::omp::format_stats_json(request, {all[2]}), out, error)) << error;
    ASSERT_TRUE(aloe::cli::parse_process_reports(aloe::omp::format_stats_json(request, {all[0]}), out, error)) << error;
    ASSERT_TRUE(aloe::cli::parse_process_reports(aloe::omp::format_stats_json(request, {all[1]}), out, error)) << error;
    ASSERT_EQ(out.size(), 3u);
    expect_same_process(all[2], out[0]);
    expect_same_process(all[0], out[1]);
    expect_same_process(all[1], out[2]);
}

TEST(OmpProcessReport, MalformedDocumentsAreRefusedWithAReason) {
    const std::string good = aloe::omp::format_stats_json(request, sample());
    const std::vector<std::string> bad = {
        "",
        "{",
        "null",
        "[]",
        "{}",
        good.substr(0, good.size() / 2),                                     // cut short (a full disk)
        R"({"processes": [], "regions": []})",                                // no "loops"
        R"({"processes": [{"ppid": 1}], "regions": [], "loops": []})",        // a process without pid
        R"({"processes": [{"pid": "12"}], "regions": [], "loops": []})",      // pid not a number
        R"({"processes": [{"pid": 1}], "regions": [{"pid": 2, "site": "s"}], "loops": []})",  // unknown pid
        R"({"processes": [{"pid": 1}], "regions": [], "loops": [{"pid": 1}]})",               // no site
        R"({"processes": [{"pid": 1}], "regions": [{"pid": 1, "site": 5}], "loops": []})",    // site not text
        R"({"processes": [{"pid": 1, "command": "sh"}], "regions": [], "loops": []})",        // command not a list
        R"({"processes": [{"pid": 1}], "regions": [], "loops": [{"pid": 1, "site": "s", "taken": "x"}]})",
        "{\"processes\": [{\"pid\": 1, \"executable\": \"\xFF\"}], \"regions\": [], \"loops\": []}",  // not UTF-8
        good + "trailing",
    };
    for (const std::string& text : bad) {
        std::vector<process_report> out;
        std::string error;
        EXPECT_FALSE(aloe::cli::parse_process_reports(text, out, error)) << "accepted: " << text.substr(0, 200);
        EXPECT_FALSE(error.empty()) << "no reason given for: " << text.substr(0, 200);
    }
}

TEST(OmpProcessReport, ListsMustBeArrays) {
    // An object where a list belongs is not a report, even though iterating it would yield rows.
    const std::vector<std::string> bad = {
        R"({"processes": {"a": {"pid": 1}}, "regions": [], "loops": []})",
        R"({"processes": [{"pid": 1}], "regions": {"a": {"pid": 1, "site": "s"}}, "loops": []})",
        R"({"processes": [{"pid": 1}], "regions": [], "loops": {"a": {"pid": 1, "site": "s"}}})",
    };
    for (const std::string& text : bad) {
        std::vector<process_report> out;
        std::string error;
        EXPECT_FALSE(aloe::cli::parse_process_reports(text, out, error)) << "accepted: " << text;
    }
}

// --- the summary -----------------------------------------------------------------------------

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::size_t start = 0;
    for (std::size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1)
        lines.push_back(text.substr(start, nl - start));
    if (start < text.size()) lines.push_back(text.substr(start));
    return lines;
}

// The table header line that starts with `first` (after the two-blank indent), or "".
std::string header_line(const std::string& summary, const std::string& first) {
    for (const std::string& line : lines_of(summary))
        if (line.rfind("  " + first + " ", 0) == 0) return line;
    return "";
}

process_report simple(long pid, std::string command, bool openmp) {
    process_report p;
    p.pid = pid;
    p.command = {std::move(command)};
    if (openmp) {
        p.regions = {region("app+0x10", 2)};
        p.loops = {taken_loop("app+0x20", 2)};
    }
    return p;
}

TEST(OmpProcessReport, SummaryOfOneActiveProcessHasNoPidColumn) {
    const std::string s =
        aloe::omp::format_summary(run_request{"program", 0, ""}, {simple(10, "sh", false), simple(11, "./app", true)});
    EXPECT_NE(s.find("aloe run: schedule program, threads libgomp's default\n"), std::string::npos) << s;
    EXPECT_NE(header_line(s, "site"), "") << s;
    EXPECT_EQ(header_line(s, "pid"), "") << s;
    EXPECT_EQ(s.find("processes ran OpenMP code"), std::string::npos) << s;
    EXPECT_NE(s.find("1 other process loaded the interposer and ran no OpenMP code: sh\n"), std::string::npos) << s;
    EXPECT_NE(s.find("\nparallel regions\n"), std::string::npos) << s;
    EXPECT_NE(s.find("\nloops\n"), std::string::npos) << s;
    EXPECT_NE(s.find("app+0x20"), std::string::npos) << s;
    EXPECT_EQ(s.find("no OpenMP region or loop ran"), std::string::npos) << s;
}

TEST(OmpProcessReport, SummaryOfSeveralActiveProcessesHasAPidColumn) {
    process_report b = simple(22, "./app b", true);
    b.program_sets_threads = "omp_set_num_threads(2)";
    const std::string s = aloe::omp::format_summary(run_request{"adaptive", 4, "r.rules"},
                                                    {simple(21, "./app a", true), b, simple(20, "make", false)});
    EXPECT_NE(s.find("aloe run: schedule adaptive, threads 4, rules r.rules\n"), std::string::npos) << s;
    EXPECT_NE(s.find("2 processes ran OpenMP code:\n    pid 21  ./app a\n    pid 22  ./app b\n"), std::string::npos)
        << s;
    EXPECT_NE(header_line(s, "pid"), "") << s;
    EXPECT_EQ(header_line(s, "site"), "") << s;
    EXPECT_NE(s.find("pid 22: the program sets its own thread count (omp_set_num_threads(2))"), std::string::npos) << s;
    EXPECT_NE(s.find("1 other process loaded the interposer and ran no OpenMP code: make"), std::string::npos) << s;
    // Every row of both tables starts with its process's pid.
    int rows_21 = 0, rows_22 = 0;
    for (const std::string& line : lines_of(s)) {
        rows_21 += line.rfind("  21  ", 0) == 0;
        rows_22 += line.rfind("  22  ", 0) == 0;
    }
    EXPECT_EQ(rows_21, 2) << s;
    EXPECT_EQ(rows_22, 2) << s;
}

TEST(OmpProcessReport, SummaryWithoutOpenMPSaysSo) {
    // No report at all is another case: the program died first (a signal, _exit) or never
    // loaded the interposer; the summary says that, not "no OpenMP".
    const std::string none = aloe::omp::format_summary(run_request{"program", 0, ""}, {});
    EXPECT_NE(none.find("no process wrote a report"), std::string::npos) << none;
    EXPECT_NE(none.find("several of its threads calling exit() at once"), std::string::npos)
        << "GCC's sections-2.c loses every report that way: " << none;
    EXPECT_EQ(none.find("no OpenMP region"), std::string::npos) << none;
    EXPECT_EQ(none.find("parallel regions"), std::string::npos) << none;
    for (const std::vector<process_report>& processes :
         {std::vector<process_report>{simple(5, "/bin/true", false)},
          std::vector<process_report>{simple(5, "sh", false), simple(6, "/bin/true", false)}}) {
        const std::string s = aloe::omp::format_summary(run_request{"program", 0, ""}, processes);
        EXPECT_NE(s.find("no OpenMP region or loop ran under the interposer"), std::string::npos) << s;
        EXPECT_NE(s.find("ended before its first parallel region did"), std::string::npos)
            << "exit() inside the first region leaves none counted (GCC's pr66133.c): " << s;
        EXPECT_EQ(s.find("parallel regions"), std::string::npos) << s;
        EXPECT_EQ(s.find("\nloops\n"), std::string::npos) << s;
        EXPECT_EQ(s.find("other process"), std::string::npos) << "no 'other' without an active one: " << s;
    }
}

TEST(OmpProcessReport, SummaryListsAtMostEightQuietProcesses) {
    std::vector<process_report> processes = {simple(100, "./app", true)};
    for (int i = 0; i < 12; ++i) processes.push_back(simple(200 + i, "quiet" + std::to_string(i), false));
    const std::string s = aloe::omp::format_summary(run_request{"program", 0, ""}, processes);
    EXPECT_NE(s.find("12 other processes loaded the interposer and ran no OpenMP code:"), std::string::npos) << s;
    EXPECT_NE(s.find("quiet7, ..."), std::string::npos) << s;
    EXPECT_EQ(s.find("quiet8"), std::string::npos) << s;
}

TEST(OmpProcessReport, SummaryShortensLongCommands) {
    const std::string s = aloe::omp::format_summary(
        run_request{"program", 0, ""}, {simple(1, "./app", true), simple(2, std::string(500, 'x'), true)});
    // Cut as every quoted text is (runtime/printable_text.hpp): 60 bytes, then an ellipsis.
    EXPECT_NE(s.find("pid 2  " + aloe::runtime::printable(std::string(500, 'x'), 60) + "\n"), std::string::npos) << s;
    EXPECT_EQ(s.find(std::string(61, 'x')), std::string::npos) << s;
}

// Every byte a terminal would act on: C0 controls but the line ends the formatter writes, DEL,
// and ESC in particular (a site name comes from a file name, which may hold anything).
bool drives_a_terminal(const std::string& text) {
    for (const char c : text) {
        const auto b = static_cast<unsigned char>(c);
        if ((b < 0x20 && b != '\n') || b == 0x7F) return true;
    }
    return false;
}

// A summary in a failure message: control bytes visible, runs of padding and 10 kB names cut.
std::string shown(const std::string& text) {
    std::string out;
    char last = 0;
    int run = 0;
    for (const char c : text) {
        run = c == last ? run + 1 : 0;
        last = c;
        if (run == 8) out += "[...]";
        if (run >= 8) continue;
        const auto b = static_cast<unsigned char>(c);
        if ((b < 0x20 && c != '\n') || b == 0x7F) {
            char hex[8];
            std::snprintf(hex, sizeof hex, "\\x%02x", b);
            out += hex;
        } else {
            out += c;
        }
    }
    return out;
}

TEST(OmpProcessReport, SummaryCommandsCannotDriveTheTerminal) {
    const std::string s = aloe::omp::format_summary(
        run_request{"program", 0, ""},
        {simple(1, "./app\x1b]0;pwned\a", true), simple(2, "two\nlines", true), simple(3, "sh\x1b[2J", false)});
    EXPECT_FALSE(drives_a_terminal(s)) << shown(s);
}

TEST(OmpProcessReport, SummaryOfHostileSitesCannotDriveTheTerminalOrBreakTheTable) {
    // The sample's second process has a control-byte region site, a NUL in a loop's source, and
    // an escape sequence in what the program asked for.
    const std::vector<process_report> processes = sample();
    const std::string s = aloe::omp::format_summary(request, processes);
    EXPECT_FALSE(drives_a_terminal(s)) << shown(s);
    // One line per row: a newline inside a name must not start a line of its own.
    std::size_t lines = lines_of(s).size();
    std::size_t expected = 1 /* run */ + 1 /* "2 processes" */ + 2 /* their pids */ + 1 /* quiet */ +
                           1 /* sets threads */ + 1 /* blank */ + 1 /* "parallel regions" */ + 1 /* header */ + 5 +
                           1 /* blank */ + 1 /* "loops" */ + 1 /* header */ + 6;
    EXPECT_EQ(lines, expected) << shown(s);
}

}  // namespace

// At exit: this process's report (process_report.hpp). Under `aloe run` it goes into the
// run's private folder (ALOE_OMP_REPORT_DIR) for aloe run to merge with the other processes';
// otherwise the summary table (ALOE_OMP_SUMMARY), the statistics JSON (ALOE_OMP_STATS) and
// the trace (ALOE_TRACE) are written here, each atomically (runtime/output_file.hpp). Taken
// loops report aloe's own site statistics (the same numbers ALOE_STATS gives for native
// loops); forwarded loops report what the interposer timed around libgomp.
#include "omp/interposer_settings.hpp"
#include "omp/loop_takeover.hpp"
#include "omp/omp_site.hpp"
#include "omp/process_report.hpp"
#include "omp/trace_log.hpp"
#include "loop/loop_stats.hpp"
#include "runtime/output_file.hpp"
#include "runtime/report.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

namespace aloe::omp {
namespace {

void resolve_sources(std::vector<omp_site*>& sites) {
    std::vector<code_address> wanted;
    std::vector<omp_site*> whose;
    for (omp_site* s : sites)
        if (s->source.empty()) {
            code_address call = s->code;
            call.offset -= 1;  // the call instruction, not the return address after it
            wanted.push_back(call);
            whose.push_back(s);
        }
    if (wanted.empty()) return;
    const std::vector<std::string> names = source_lines(wanted);
    for (std::size_t i = 0; i < whose.size(); ++i) whose[i]->source = names[i];
}

// /proc/self/cmdline: NUL-separated words.
std::vector<std::string> command_words() {
    std::vector<std::string> words;
    std::ifstream in("/proc/self/cmdline", std::ios::binary);
    std::string word;
    while (std::getline(in, word, '\0')) words.push_back(word);
    return words;
}

// The start time in /proc/self/stat (clock ticks since boot, field 22): a name that sorts
// the processes of one run in the order they started. The command name (field 2) is in
// parentheses and may itself contain blanks and parentheses, so fields count from the last ')'.
unsigned long long start_ticks() {
    std::ifstream in("/proc/self/stat");
    std::string text;
    std::getline(in, text);
    const std::size_t close = text.rfind(')');
    if (close == std::string::npos) return 0;
    std::istringstream fields(text.substr(close + 1));
    std::string field;
    for (int i = 3; i <= 22 && fields >> field; ++i)
        if (i == 22) return std::strtoull(field.c_str(), nullptr, 10);
    return 0;
}

process_report gather(std::vector<omp_site*>& regions, std::vector<omp_site*>& loop_sites) {
    process_report p;
    p.pid = static_cast<long>(getpid());
    p.ppid = static_cast<long>(getppid());
    p.command = command_words();
    p.executable = main_program_path();
    if (const char* why = program_sets_threads.load()) p.program_sets_threads = why;
    // A site this process never ran (a forked child's inheritance from its parent, whose counts
    // were dropped at the fork) is not this process's to report.
    for (const omp_site* s : regions) {
        const std::uint64_t runs = runtime::read_total(s->invocations);
        if (runs == 0) continue;
        region_report r;
        r.site = s->name;
        r.source = s->source;
        r.invocations = runs;
        r.threads_last = s->threads_last.load();
        r.threads_max = s->threads_max.load();
        r.time_s = static_cast<double>(runtime::read_total(s->region_time)) * 1e-9;
        r.imbalance_mean = static_cast<double>(runtime::read_total(s->imbalance)) * 1e-6 / static_cast<double>(runs);
        if (const char* fixed_by = s->non_malleable.load()) r.thread_count_set_by = fixed_by;
        p.regions.push_back(std::move(r));
    }
    for (omp_site* s : loop_sites) {
        const std::uint64_t taken = runtime::read_total(s->taken), forwarded = runtime::read_total(s->forwarded);
        if (taken == 0 && forwarded == 0) continue;
        loop_report l;
        l.site = s->name;
        l.source = s->source;
        l.asked = asked_schedule_text(*s);
        l.forwarded = forwarded;
        l.forwarded_iterations = runtime::read_total(s->forwarded_iterations);
        l.forwarded_time_s = static_cast<double>(runtime::read_total(s->forwarded_time)) * 1e-9;
        if (const char* why = s->forward_reason.load()) l.forward_reason = why;
        if (const char* note = s->note.load()) l.note = note;
        if (taken > 0) {
            if (const std::optional<site_stats> a = loop::site_registry::instance().snapshot(loop_site(s->name))) {
                l.taken = a->calls();  // zero-trip and serial calls too: every time the loop was reached
                l.schedule = a->schedule;
                l.iterations = a->iterations;
                l.time_s = a->total_s;
                l.imbalance_mean = a->imbalance_mean;
                if (a->tuning) {
                    l.tuning_chosen = a->tuning->chosen;
                    l.tuning_state = to_string(a->tuning->state);
                    l.tuning_json = loop::format_tuning_json(*a->tuning);
                }
                for (const policy_status& ps : a->policies)
                    if (ps.slack) l.slack_json = loop::format_slack_json(*ps.slack);
            }
        }
        p.loops.push_back(std::move(l));
    }
    return p;
}

run_request request() {
    const interposer_settings& cfg = settings();
    return {cfg.schedule_text, cfg.threads, cfg.rules_file};
}

void warn_unwritten(const std::string& what, const std::string& error) {
    runtime::report_once({runtime::report_level::warning, runtime::report_category::omp, "W503",
                          "cannot write the " + what + ": " + error, ""});
}

void write_text(const std::string& path, const std::string& text, const char* what) {
    if (path == "-") {
        std::cerr << text << std::flush;
        return;
    }
    std::string error;
    if (!runtime::write_output_file(path, text, error)) warn_unwritten(what, error);
}

void write_trace_file(const std::string& path, const std::string& process_name, mode_t mode) {
    std::string error;
    const bool ok = runtime::write_output_file(
        path,
        [&](const runtime::output_sink& sink) {
            if (!sink(trace_document_begin())) return;
            write_trace_events(sink, process_name);
            sink(trace_document_end(1));
        },
        error, mode);
    if (!ok) warn_unwritten("trace", error);
}

// Under aloe run: this process's statistics (and trace events, without the document around
// them) into the run's private folder, named so that they sort by process start.
void write_into_report_dir(const interposer_settings& cfg, const process_report& me) {
    // No folder: its aloe run has ended and removed it (this process outlived the program, as
    // Python's resource tracker does). Nobody would read the report; a warning would only
    // appear on the terminal after aloe run returned.
    struct stat folder {};
    if (::stat(cfg.report_dir.c_str(), &folder) != 0 && errno == ENOENT) return;
    char name[96];
    std::snprintf(name, sizeof name, "/%020llu-%ld", start_ticks(), me.pid);
    std::string error;
    if (!runtime::write_output_file(cfg.report_dir + name + ".json", format_stats_json(request(), {me}), error,
                                    runtime::private_file_mode))
        warn_unwritten("report for aloe run", error);
    if (!cfg.trace_file.empty()) {
        const std::string process_name = me.command.empty() ? me.executable : me.command.front();
        if (!runtime::write_output_file(
                cfg.report_dir + name + ".trace",
                [&](const runtime::output_sink& sink) { write_trace_events(sink, process_name); }, error,
                runtime::private_file_mode))
            warn_unwritten("trace events for aloe run", error);
    }
}

void write_exit_report() {
    const interposer_settings& cfg = settings();
    const bool to_run = !cfg.report_dir.empty();
    if (!to_run && cfg.summary_file.empty() && cfg.stats_file.empty() && cfg.trace_file.empty()) return;
    flush_taken_runs();  // before anything reads the sites' statistics or counters
    std::vector<omp_site*> regions = all_sites(site_kind::region);
    std::vector<omp_site*> loop_sites = all_sites(site_kind::loop);
    if (to_run || !cfg.summary_file.empty() || !cfg.stats_file.empty()) {
        std::vector<omp_site*> everything = regions;
        everything.insert(everything.end(), loop_sites.begin(), loop_sites.end());
        resolve_sources(everything);
    }
    const process_report me = gather(regions, loop_sites);
    if (to_run) {
        write_into_report_dir(cfg, me);
        return;
    }
    if (!cfg.summary_file.empty()) write_text(cfg.summary_file, format_summary(request(), {me}), "summary");
    if (!cfg.stats_file.empty()) write_text(cfg.stats_file, format_stats_json(request(), {me}), "statistics");
    if (!cfg.trace_file.empty())
        write_trace_file(cfg.trace_file, me.command.empty() ? me.executable : me.command.front(),
                         runtime::shared_file_mode);
}

// Armed when the library loads. An atexit handler runs before the destructors of statics
// constructed earlier than its registration and after those constructed later: so first
// construct everything the report reads (settings, aloe's site registry, the report
// module), then register.
__attribute__((constructor)) void arm_exit_report() {
    (void)settings();
    (void)loop::site_registry::instance();
    (void)runtime::info_enabled(runtime::report_category::omp);
    std::atexit(write_exit_report);
}

}  // namespace
}  // namespace aloe::omp

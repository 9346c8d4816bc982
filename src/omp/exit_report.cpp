// At exit: the summary table (ALOE_OMP_SUMMARY; `aloe run` prints it), the statistics JSON
// (ALOE_OMP_STATS) and the trace (ALOE_TRACE). Taken loops report aloe's own site
// statistics (the same numbers ALOE_STATS gives for native loops); forwarded loops report
// what the interposer timed around libgomp.
#include "omp/interposer_settings.hpp"
#include "omp/omp_site.hpp"
#include "omp/trace_log.hpp"
#include "loop/loop_stats.hpp"
#include "runtime/json_text.hpp"
#include "runtime/report.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

namespace aloe::omp {
namespace {

using runtime::json_number;
using runtime::json_quote;

struct loop_row {
    omp_site* site;
    std::optional<site_stats> aloe;  // taken invocations
    std::string program;             // the schedule the program asked for
};

const char* kind_name(long kind) {
    switch (kind) {
        case gfs_static: return "static";
        case gfs_dynamic: return "dynamic";
        case gfs_guided: return "guided";
        case gfs_auto: return "auto";
        default: return "runtime";
    }
}

std::string program_schedule_text(const omp_site& s) {
    const loop_form f = s.form.load(std::memory_order_relaxed);
    const long chunk = s.program_chunk.load(std::memory_order_relaxed);
    switch (f) {
        case loop_form::ordered:
        case loop_form::doacross: return to_string(f);
        case loop_form::generic: return std::string("generic (") + kind_name(s.program_kind.load()) + ")";
        default: break;
    }
    std::string text = to_string(f);
    if (is_runtime_form(f)) return text + " (" + kind_name(s.program_kind.load()) + ")";
    if (chunk > 0) text += "," + std::to_string(chunk);
    return text;
}

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

std::string fixed(double x, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, x);
    return buf;
}

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

std::string seconds_text(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", s);
    return buf;
}

std::string thread_text() {
    const int t = settings().threads;
    return t > 0 ? std::to_string(t) : std::string("libgomp's default");
}

std::string summary(const std::vector<omp_site*>& regions, const std::vector<loop_row>& loops) {
    std::ostringstream out;
    out << "aloe run: schedule " << settings().schedule_text << ", threads " << thread_text();
    if (!settings().rules_file.empty()) out << ", rules " << settings().rules_file;
    out << "\n";
    if (const char* why = program_sets_threads.load()) out << "  the program sets its own thread count (" << why << ")\n";
    std::vector<std::vector<std::string>> rows = {
        {"site", "source", "calls", "threads", "time s", "imbalance", "thread count"}};
    for (const omp_site* s : regions) {
        const std::uint64_t calls = s->invocations.load();
        const char* fixed_by = s->non_malleable.load();
        rows.push_back({s->name, s->source.empty() ? "-" : s->source, std::to_string(calls),
                        std::to_string(s->threads_last.load()), seconds_text(runtime::ticks_to_seconds(s->region_ticks.load())),
                        calls > 0 ? fixed(s->imbalance_sum / static_cast<double>(calls), 3) : "-",
                        fixed_by != nullptr ? std::string("program's (") + fixed_by + ")" : std::string("aloe")});
    }
    out << "\nparallel regions\n" << table(rows);
    rows = {{"site", "source", "asked", "calls", "iterations", "time s", "imbalance", "run by"}};
    for (const loop_row& row : loops) {
        const omp_site& s = *row.site;
        const std::uint64_t taken = row.aloe ? row.aloe->invocations : 0;
        const std::uint64_t forwarded = s.forwarded.load();
        const std::uint64_t iterations = (row.aloe ? row.aloe->iterations : 0) + s.forwarded_iterations.load();
        const double seconds = (row.aloe ? row.aloe->total_s : 0) + runtime::ticks_to_seconds(s.forwarded_ticks.load());
        std::string by;
        if (taken > 0) {
            by = row.aloe->tuning ? "aloe adaptive -> " + row.aloe->tuning->chosen + " (" + row.aloe->tuning->state + ")"
                                  : "aloe " + row.aloe->schedule;
            if (const char* note = s.note.load()) by += std::string(" [") + note + "]";
        }
        if (forwarded > 0) {
            const char* why = s.forward_reason.load();
            by += std::string(by.empty() ? "" : "; ") + "libgomp, forwarded: " + (why != nullptr ? why : "?");
        }
        rows.push_back({s.name, s.source.empty() ? "-" : s.source, row.program, std::to_string(taken + forwarded),
                        std::to_string(iterations), seconds_text(seconds),
                        taken > 0 && row.aloe->imbalance_mean > 0 ? fixed(row.aloe->imbalance_mean, 3) : "-",
                        by.empty() ? "-" : by});
    }
    out << "\nloops\n" << table(rows);
    return out.str();
}

std::string stats_json(const std::vector<omp_site*>& regions, const std::vector<loop_row>& loops) {
    std::ostringstream out;
    const char* sets = program_sets_threads.load();
    out << "{\n  \"tool\": \"aloe run\",\n  \"schedule\": " << json_quote(settings().schedule_text)
        << ",\n  \"threads\": " << settings().threads << ",\n  \"rules\": " << json_quote(settings().rules_file)
        << ",\n  \"program_sets_threads\": " << (sets != nullptr ? json_quote(sets) : "null")
        << ",\n  \"regions\": [";
    bool comma = false;
    for (const omp_site* s : regions) {
        const std::uint64_t calls = s->invocations.load();
        const char* fixed_by = s->non_malleable.load();
        out << (comma ? "," : "") << "\n    {\"site\": " << json_quote(s->name) << ", \"source\": " << json_quote(s->source)
            << ", \"invocations\": " << calls << ", \"threads_last\": " << s->threads_last.load()
            << ", \"threads_max\": " << s->threads_max.load()
            << ", \"time_s\": " << json_number(runtime::ticks_to_seconds(s->region_ticks.load()))
            << ", \"imbalance_mean\": " << json_number(calls > 0 ? s->imbalance_sum / static_cast<double>(calls) : 0)
            << ", \"malleable\": " << (fixed_by == nullptr ? "true" : "false")
            << ", \"thread_count_set_by\": " << (fixed_by != nullptr ? json_quote(fixed_by) : "null") << "}";
        comma = true;
    }
    out << "\n  ],\n  \"loops\": [";
    comma = false;
    for (const loop_row& row : loops) {
        const omp_site& s = *row.site;
        const char* why = s.forward_reason.load();
        out << (comma ? "," : "") << "\n    {\"site\": " << json_quote(s.name) << ", \"source\": " << json_quote(s.source)
            << ", \"asked\": " << json_quote(row.program) << ", \"forwarded\": " << s.forwarded.load()
            << ", \"forward_reason\": " << (why != nullptr ? json_quote(why) : "null")
            << ", \"note\": " << (s.note.load() != nullptr ? json_quote(s.note.load()) : "null")
            << ", \"forwarded_iterations\": " << s.forwarded_iterations.load()
            << ", \"forwarded_time_s\": " << json_number(runtime::ticks_to_seconds(s.forwarded_ticks.load()));
        if (row.aloe) {
            const site_stats& a = *row.aloe;
            out << ", \"taken\": " << a.invocations << ", \"schedule\": " << json_quote(a.schedule)
                << ", \"iterations\": " << a.iterations << ", \"time_s\": " << json_number(a.total_s)
                << ", \"imbalance_mean\": " << json_number(a.imbalance_mean);
            if (a.tuning) out << ", \"tuning\": " << loop::format_tuning_json(*a.tuning);
        } else {
            out << ", \"taken\": 0";
        }
        out << "}";
        comma = true;
    }
    out << "\n  ]\n}\n";
    return out.str();
}

void warn_unwritten(const std::string& what) {
    runtime::report_once({runtime::report_level::warning, runtime::report_category::omp, "W503", what, "not written"});
}

void write_text(const std::string& path, const std::string& text, const char* what) {
    if (path == "-") {
        std::cerr << text << std::flush;
        return;
    }
    std::ofstream out(path);
    out << text;
    out.close();
    if (!out) warn_unwritten(std::string("cannot write the ") + what + " file '" + path + "'");
}

void write_exit_report() {
    const interposer_settings& cfg = settings();
    if (cfg.summary_file.empty() && cfg.stats_file.empty() && cfg.trace_file.empty()) return;
    std::vector<omp_site*> regions = all_sites(site_kind::region);
    std::vector<omp_site*> loop_sites = all_sites(site_kind::loop);
    if (!cfg.summary_file.empty() || !cfg.stats_file.empty()) {
        std::vector<omp_site*> everything = regions;
        everything.insert(everything.end(), loop_sites.begin(), loop_sites.end());
        resolve_sources(everything);
    }
    std::vector<loop_row> loops;
    for (omp_site* s : loop_sites) {
        loop_row row{s, std::nullopt, program_schedule_text(*s)};
        if (s->taken.load() > 0) {
            row.aloe = loop::site_registry::instance().snapshot(loop_site(s->name));
        }
        loops.push_back(std::move(row));
    }
    if (!cfg.summary_file.empty()) write_text(cfg.summary_file, summary(regions, loops), "summary");
    if (!cfg.stats_file.empty()) write_text(cfg.stats_file, stats_json(regions, loops), "statistics");
    if (!cfg.trace_file.empty()) {
        std::string error;
        if (!write_trace(cfg.trace_file, error)) warn_unwritten(error);
    }
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

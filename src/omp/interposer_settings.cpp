#include "omp/interposer_settings.hpp"

#include "runtime/config.hpp"
#include "runtime/report.hpp"

namespace aloe::omp {

namespace {

using runtime::report_category;
using runtime::report_level;

interposer_settings load() {
    const runtime::config& cfg = runtime::current_config();
    interposer_settings s;
    s.schedule_text = cfg.schedule.empty() ? "program" : cfg.schedule;
    std::string error;
    if (std::optional<loop_choice> c = parse_loop_choice(s.schedule_text, error)) {
        s.default_choice = *c;
    } else {
        runtime::report_once({report_level::warning, report_category::omp, "W501",
                              "ALOE_SCHEDULE " + error, "program (each loop's own schedule, run by aloe)"});
        s.schedule_text = "program";
    }
    if (cfg.num_threads_source == runtime::setting_source::aloe_environment) s.threads = cfg.num_threads;
    s.rules_file = cfg.omp_rules_file;
    if (!s.rules_file.empty()) {
        std::vector<std::string> errors;
        if (!load_loop_rules(s.rules_file, s.rules, errors)) {
            for (const std::string& e : errors)
                runtime::report_once({report_level::warning, report_category::omp, "W502", e, "no rules"});
            s.rules = {};
        }
    }
    s.stats_file = cfg.omp_stats_file;
    s.summary_file = cfg.omp_summary_file;
    s.trace_file = cfg.trace_file;
    return s;
}

}  // namespace

const interposer_settings& settings() {
    static const interposer_settings s = load();
    return s;
}

}  // namespace aloe::omp

#include "omp/interposer_settings.hpp"

#include "runtime/config.hpp"
#include "runtime/output_path.hpp"
#include "runtime/report.hpp"

namespace aloe::omp {

namespace {

using runtime::report_category;
using runtime::report_level;

interposer_settings read_settings() {
    const runtime::config& cfg = runtime::current_config();
    interposer_settings s;
    const bool own_variable = !cfg.omp_schedule.empty();
    s.schedule_text = own_variable ? cfg.omp_schedule : cfg.schedule.empty() ? "program" : cfg.schedule;
    std::string error;
    if (std::optional<loop_choice> c = parse_loop_choice(s.schedule_text, error)) {
        s.default_choice = *c;
    } else {
        runtime::report_once({report_level::warning, report_category::omp, "W501",
                              std::string(own_variable ? "ALOE_OMP_SCHEDULE " : "ALOE_SCHEDULE ") + error,
                              "program (each loop's own schedule, run by aloe)"});
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
    const runtime::process_identity me = runtime::process_identity::of_this_process(cfg);
    s.stats_file = runtime::expand_output_path(cfg.omp_stats_file, me);
    s.summary_file = runtime::expand_output_path(cfg.omp_summary_file, me);
    s.trace_file = runtime::expand_output_path(cfg.trace_file, me);
    s.report_dir = cfg.omp_report_dir;
    return s;
}

}  // namespace

const interposer_settings& settings() {
    static const interposer_settings s = read_settings();
    return s;
}

}  // namespace aloe::omp

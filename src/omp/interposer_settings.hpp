// What `aloe run` asked of the interposer, read once from the configuration (runtime/config:
// ALOE_OMP_SCHEDULE, else ALOE_SCHEDULE; ALOE_NUM_THREADS, ALOE_OMP_RULES, ALOE_OMP_STATS,
// ALOE_OMP_SUMMARY, ALOE_TRACE, ALOE_OMP_REPORT_DIR). A bad value is reported once and the
// safe choice is used: `program` for a bad schedule, no rules for a bad rules file.
//
// Output paths are expanded for this process (%p, %r, %h; the rank inserted in a job of
// several ranks: runtime/output_path.hpp). Under `aloe run` (ALOE_OMP_REPORT_DIR set) the
// process writes its report into that folder instead, and `aloe run` writes the files.
#pragma once

#include "omp/loop_rules.hpp"

#include <string>

namespace aloe::omp {

struct interposer_settings {
    loop_choice default_choice;   ///< every loop no rule names
    std::string schedule_text;    ///< as given ("program" when unset)
    int threads = 0;              ///< team size of malleable outermost regions; 0: libgomp's
    loop_rules rules;
    std::string rules_file;
    std::string stats_file;
    std::string summary_file;     ///< "-": stderr
    std::string trace_file;
    std::string report_dir;       ///< set by aloe run: write this process's report here
};

const interposer_settings& settings();

}  // namespace aloe::omp

// Runtime.Config: every variable of the settings table parsed from a fake environment;
// good values, bad values (one warning each, naming variable, value and value used),
// precedence, sources, and the docs table generated from the same table.
#include "runtime/config.hpp"

#include "runtime/topology.hpp"
#include "unit/runtime/report_capture.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

namespace aloe::runtime {
namespace {

using testing::report_capture;

env_lookup fake_env(std::map<std::string, std::string> vars) {
    return [vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
        const auto it = vars.find(std::string(name));
        if (it == vars.end()) return std::nullopt;
        return it->second;
    };
}

config load(std::map<std::string, std::string> vars) { return load_config(fake_env(std::move(vars))); }

// What a warning says is used when the team size falls back to one worker per core.
std::string per_core_fallback() {
    const topology& m = topology::machine();
    return std::to_string(m.default_threads()) + " (" + m.default_threads_source() + ")";
}

const setting_row& row(const std::vector<setting_row>& rows, std::string_view name) {
    for (const setting_row& r : rows) {
        if (r.name == name) return r;
    }
    throw std::runtime_error("no row " + std::string(name));
}

// Loads `name=value` and expects exactly one warning: `<id> [config]: NAME='value' …;
// using <used>`. Returns the configuration for further checks.
config expect_one_warning(const std::string& name, const std::string& value,
                          std::string_view id, const std::string& used,
                          std::map<std::string, std::string> others = {}) {
    report_capture capture;
    others[name] = value;
    const config cfg = load(others);
    const std::vector<std::string> lines = capture.lines();
    EXPECT_EQ(lines.size(), 1u) << name << "='" << value << "'";
    if (!lines.empty()) {
        const std::string& line = lines.front();
        EXPECT_EQ(line.rfind("aloe: warning " + std::string(id) + " [config]: ", 0), 0u) << line;
        EXPECT_NE(line.find(name + "='" + value + "'"), std::string::npos) << line;
        EXPECT_EQ(line.substr(line.size() - used.size() - 8), "; using " + used) << line;
    }
    return cfg;
}

const std::vector<std::string> all_variables = {
    "ALOE_NUM_THREADS", "OMP_NUM_THREADS", "ALOE_PROC_BIND",   "ALOE_WAIT_POLICY", "ALOE_SPIN_US",
    "ALOE_SCHEDULE",    "ALOE_STATS",      "ALOE_VERBOSE",     "ALOE_DISPLAY_ENV", "ALOE_OMP_RULES",
    "ALOE_OMP_STATS",   "ALOE_OMP_SUMMARY", "ALOE_TRACE",  "ALOE_OMP_SCHEDULE", "ALOE_OMP_REPORT_DIR",
    "ALOE_SITE_LIMIT", "ALOE_TUNING", "ALOE_MPI_STATS", "ALOE_MPI_CALIBRATION", "ALOE_PRINT_COUNTER",
    "ALOE_PRINT_COUNTER_INTERVAL", "ALOE_PRINT_COUNTER_RESET", "ALOE_PRINT_COUNTER_FORMAT",
    "ALOE_PRINT_COUNTER_DESTINATION", "ALOE_DAEMON", "ALOE_DAEMON_SOCKET", "ALOE_LEND"};

TEST(RuntimeConfig, InterposerFilesAreReadAsGiven) {
    const std::map<std::string, std::string> vars = {{"ALOE_OMP_RULES", "site.rules"},
                                                     {"ALOE_OMP_STATS", "out/omp.json"},
                                                     {"ALOE_OMP_SUMMARY", "-"},
                                                     {"ALOE_TRACE", "trace.json"}};
    const config cfg = load_config([&](std::string_view name) -> std::optional<std::string> {
        const auto it = vars.find(std::string(name));
        return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
    });
    EXPECT_EQ(cfg.omp_rules_file, "site.rules");
    EXPECT_EQ(cfg.omp_stats_file, "out/omp.json");
    EXPECT_EQ(cfg.omp_summary_file, "-");
    EXPECT_EQ(cfg.trace_file, "trace.json");
    EXPECT_EQ(cfg.sources.at("ALOE_TRACE"), setting_source::aloe_environment);
}

TEST(RuntimeConfig, InterposerChoiceAndReportFolderAreReadAsGiven) {
    const config cfg = load({{"ALOE_OMP_SCHEDULE", "forward"}, {"ALOE_OMP_REPORT_DIR", "/tmp/aloe-run-1-x"}});
    EXPECT_EQ(cfg.omp_schedule, "forward");
    EXPECT_EQ(cfg.omp_report_dir, "/tmp/aloe-run-1-x");
    EXPECT_TRUE(cfg.schedule.empty());  // aloe's own loops do not see the interposer's choice
}

TEST(RuntimeConfig, SiteLimitIsBoundedBothWays) {
    EXPECT_EQ(load({}).site_limit, 4096);
    EXPECT_EQ(load({{"ALOE_SITE_LIMIT", "64"}}).site_limit, 64);
    EXPECT_EQ(load({{"ALOE_SITE_LIMIT", "1000000"}}).site_limit, 1000000);
    for (const char* bad : {"63", "0", "1000001", "-5", "4k", "1e4"}) {
        report_capture capture;
        EXPECT_EQ(load({{"ALOE_SITE_LIMIT", bad}}).site_limit, 4096) << bad;
        ASSERT_EQ(capture.lines().size(), 1u) << bad;
        EXPECT_NE(capture.lines()[0].find("W116"), std::string::npos) << capture.lines()[0];
        EXPECT_NE(capture.lines()[0].find("64..1000000"), std::string::npos) << capture.lines()[0];
    }
}

TEST(RuntimeConfig, EmptyEnvironmentGivesDefaultsWithoutWarnings) {
    report_capture capture;
    const config cfg = load({});
    const config defaults;
    EXPECT_EQ(cfg.num_threads, 0);
    EXPECT_EQ(cfg.num_threads_source, setting_source::default_value);
    EXPECT_EQ(cfg.omp_num_threads, 0);
    EXPECT_EQ(cfg.proc_bind, defaults.proc_bind);
    EXPECT_EQ(cfg.wait_policy, wait_policy_kind::hybrid);
    EXPECT_EQ(cfg.spin_us, 1000);
    EXPECT_EQ(cfg.spin_us, defaults.spin_us);
    EXPECT_TRUE(cfg.schedule.empty());
    EXPECT_TRUE(cfg.stats_file.empty());
    EXPECT_TRUE(cfg.verbose.empty());
    EXPECT_FALSE(cfg.display_env);
    EXPECT_TRUE(cfg.sources.empty());
    EXPECT_TRUE(capture.lines().empty());
}

TEST(RuntimeConfig, TableDefaultsMatchTheStructDefaults) {
    const std::vector<setting_row> rows = describe_settings(config{});
    EXPECT_EQ(row(rows, "ALOE_SPIN_US").fallback, std::to_string(config{}.spin_us));
    EXPECT_EQ(row(rows, "ALOE_WAIT_POLICY").fallback, to_string(config{}.wait_policy));
    EXPECT_EQ(row(rows, "ALOE_PROC_BIND").fallback, to_string(config{}.proc_bind));
    EXPECT_EQ(row(rows, "ALOE_DISPLAY_ENV").fallback, "false");
}

TEST(RuntimeConfig, EmptyValueCountsAsUnset) {
    report_capture capture;
    const config cfg = load({{"ALOE_NUM_THREADS", ""}, {"ALOE_WAIT_POLICY", "  "}});
    EXPECT_EQ(cfg.num_threads_source, setting_source::default_value);
    EXPECT_EQ(cfg.wait_policy, wait_policy_kind::hybrid);
    EXPECT_TRUE(capture.lines().empty());
}

TEST(RuntimeConfig, NumThreadsAcceptsCounts) {
    report_capture capture;
    EXPECT_EQ(load({{"ALOE_NUM_THREADS", "4"}}).num_threads, 4);
    EXPECT_EQ(load({{"ALOE_NUM_THREADS", " 8\t"}}).num_threads, 8);
    EXPECT_EQ(load({{"ALOE_NUM_THREADS", "4096"}}).num_threads, 4096);
    const config zero = load({{"ALOE_NUM_THREADS", "0"}});
    EXPECT_EQ(zero.num_threads, 0);
    EXPECT_EQ(zero.num_threads_source, setting_source::aloe_environment);
    EXPECT_EQ(load({{"ALOE_NUM_THREADS", "4"}}).num_threads_source, setting_source::aloe_environment);
    EXPECT_TRUE(capture.lines().empty());
}

TEST(RuntimeConfig, NumThreadsRejectsGarbageNegativesAndOverflow) {
    for (const char* bad : {"abc", "-1", "4x", "1.5", "+4", "0x10", "4 4",
                            "99999999999999999999999", "4097"}) {
        const config cfg = expect_one_warning("ALOE_NUM_THREADS", bad, "W101", per_core_fallback());
        EXPECT_EQ(cfg.num_threads, 0) << bad;
        EXPECT_EQ(cfg.num_threads_source, setting_source::default_value) << bad;
    }
}

TEST(RuntimeConfig, NumThreadsWarningMatchesTheDocumentedWording) {
    report_capture capture;
    (void)load({{"ALOE_NUM_THREADS", "abc"}});
    ASSERT_EQ(capture.lines().size(), 1u);
    EXPECT_EQ(capture.lines().front(),
              "aloe: warning W101 [config]: ALOE_NUM_THREADS='abc' is not a positive integer; using " +
                  per_core_fallback());
}

TEST(RuntimeConfig, BadNumThreadsFallsBackToOmpNumThreads) {
    const config cfg = expect_one_warning("ALOE_NUM_THREADS", "many", "W101", "3 (OMP_NUM_THREADS)",
                                          {{"OMP_NUM_THREADS", "3"}});
    EXPECT_EQ(cfg.num_threads, 3);
    EXPECT_EQ(cfg.num_threads_source, setting_source::omp_environment);
}

TEST(RuntimeConfig, OmpNumThreadsUsesTheFirstOfAList) {
    report_capture capture;
    const config list = load({{"OMP_NUM_THREADS", "4,2"}});
    EXPECT_EQ(list.num_threads, 4);
    EXPECT_EQ(list.omp_num_threads, 4);
    EXPECT_EQ(list.num_threads_source, setting_source::omp_environment);
    EXPECT_EQ(load({{"OMP_NUM_THREADS", "6"}}).num_threads, 6);
    EXPECT_EQ(load({{"OMP_NUM_THREADS", " 5 , 3 ,1"}}).num_threads, 5);
    EXPECT_TRUE(capture.lines().empty());
}

TEST(RuntimeConfig, OmpNumThreadsRejectsBadLists) {
    for (const char* bad : {"0", "x", "4,", ",4", "4,x", "-2", "4;2", "5000"}) {
        const config cfg = expect_one_warning("OMP_NUM_THREADS", bad, "W102", per_core_fallback());
        EXPECT_EQ(cfg.num_threads, 0) << bad;
        EXPECT_EQ(cfg.omp_num_threads, 0) << bad;
    }
    // With a good ALOE_NUM_THREADS the warning names the count really used.
    expect_one_warning("OMP_NUM_THREADS", "x", "W102", "7", {{"ALOE_NUM_THREADS", "7"}});
}

TEST(RuntimeConfig, AloeNumThreadsTakesPrecedenceOverOmp) {
    report_capture capture;
    const config both = load({{"ALOE_NUM_THREADS", "5"}, {"OMP_NUM_THREADS", "3"}});
    EXPECT_EQ(both.num_threads, 5);
    EXPECT_EQ(both.num_threads_source, setting_source::aloe_environment);
    EXPECT_EQ(both.omp_num_threads, 3);
    EXPECT_NE(row(describe_settings(both), "OMP_NUM_THREADS").value.find("overridden"), std::string::npos);

    // An explicit 0 ("one per core") is an ALOE setting too, and still beats OMP.
    const config zero = load({{"ALOE_NUM_THREADS", "0"}, {"OMP_NUM_THREADS", "3"}});
    EXPECT_EQ(zero.num_threads, 0);
    EXPECT_EQ(zero.num_threads_source, setting_source::aloe_environment);
    EXPECT_TRUE(capture.lines().empty());
}

TEST(RuntimeConfig, ProcBindKeywords) {
    report_capture capture;
    EXPECT_EQ(load({{"ALOE_PROC_BIND", "none"}}).proc_bind, proc_bind_kind::none);
    EXPECT_EQ(load({{"ALOE_PROC_BIND", "close"}}).proc_bind, proc_bind_kind::close);
    EXPECT_EQ(load({{"ALOE_PROC_BIND", "SPREAD"}}).proc_bind, proc_bind_kind::spread);
    EXPECT_EQ(load({{"ALOE_PROC_BIND", " Close "}}).proc_bind, proc_bind_kind::close);
    EXPECT_EQ(load({{"ALOE_PROC_BIND", "true"}}).proc_bind, proc_bind_kind::close);
    EXPECT_EQ(load({{"ALOE_PROC_BIND", "False"}}).proc_bind, proc_bind_kind::none);
    EXPECT_TRUE(capture.lines().empty());
    for (const char* bad : {"closest", "1", "master", "close,spread"}) {
        const config cfg = expect_one_warning("ALOE_PROC_BIND", bad, "W103", "none");
        EXPECT_EQ(cfg.proc_bind, proc_bind_kind::none);
    }
}

TEST(RuntimeConfig, WaitPolicyKeywordsAreCaseInsensitive) {
    report_capture capture;
    EXPECT_EQ(load({{"ALOE_WAIT_POLICY", "active"}}).wait_policy, wait_policy_kind::active);
    EXPECT_EQ(load({{"ALOE_WAIT_POLICY", "PASSIVE"}}).wait_policy, wait_policy_kind::passive);
    EXPECT_EQ(load({{"ALOE_WAIT_POLICY", "Hybrid"}}).wait_policy, wait_policy_kind::hybrid);
    EXPECT_TRUE(capture.lines().empty());
    for (const char* bad : {"sometimes", "activ", "active2"}) {
        const config cfg = expect_one_warning("ALOE_WAIT_POLICY", bad, "W104", "hybrid");
        EXPECT_EQ(cfg.wait_policy, wait_policy_kind::hybrid);
    }
}

TEST(RuntimeConfig, DaemonModeKeywordsAndSocket) {
    report_capture capture;
    EXPECT_EQ(load({}).daemon, daemon_mode::automatic);
    EXPECT_EQ(load({{"ALOE_DAEMON", "off"}}).daemon, daemon_mode::off);
    EXPECT_EQ(load({{"ALOE_DAEMON", "ON"}}).daemon, daemon_mode::on);
    EXPECT_EQ(load({{"ALOE_DAEMON", "Auto"}}).daemon, daemon_mode::automatic);
    EXPECT_EQ(load({{"ALOE_DAEMON_SOCKET", "/x/aloed.sock"}}).daemon_socket, "/x/aloed.sock");
    EXPECT_TRUE(capture.lines().empty());
    for (const char* bad : {"yes", "0", "automatic"}) {
        const config cfg = expect_one_warning("ALOE_DAEMON", bad, "W125", "auto");
        EXPECT_EQ(cfg.daemon, daemon_mode::automatic);
    }
}

TEST(RuntimeConfig, LendModeKeywords) {
    report_capture capture;
    EXPECT_EQ(load({}).lend, lend_mode::automatic);
    EXPECT_EQ(load({{"ALOE_LEND", "off"}}).lend, lend_mode::off);
    EXPECT_EQ(load({{"ALOE_LEND", "Reactive"}}).lend, lend_mode::reactive);
    EXPECT_EQ(load({{"ALOE_LEND", "PREDICTIVE"}}).lend, lend_mode::predictive);
    EXPECT_EQ(load({{"ALOE_LEND", "auto"}}).lend, lend_mode::automatic);
    EXPECT_TRUE(capture.lines().empty());
    for (const char* bad : {"on", "lewi", "1"}) {
        const config cfg = expect_one_warning("ALOE_LEND", bad, "W127", "auto");
        EXPECT_EQ(cfg.lend, lend_mode::automatic);
    }
}

TEST(RuntimeConfig, SpinMicrosecondsInRange) {
    report_capture capture;
    EXPECT_EQ(load({{"ALOE_SPIN_US", "0"}}).spin_us, 0);
    EXPECT_EQ(load({{"ALOE_SPIN_US", "250"}}).spin_us, 250);
    EXPECT_EQ(load({{"ALOE_SPIN_US", "1000000"}}).spin_us, 1000000);
    EXPECT_TRUE(capture.lines().empty());
    for (const char* bad : {"-1", "1000001", "1e3", "abc", "10us", "99999999999999999999"}) {
        const config cfg = expect_one_warning("ALOE_SPIN_US", bad, "W105", "1000");
        EXPECT_EQ(cfg.spin_us, 1000);
    }
}

TEST(RuntimeConfig, ScheduleAndStatsAreStoredAsGiven) {
    report_capture capture;
    const config cfg = load({{"ALOE_SCHEDULE", "hybrid,fs=0.8"}, {"ALOE_STATS", "out/stats.json"}});
    EXPECT_EQ(cfg.schedule, "hybrid,fs=0.8");
    EXPECT_EQ(cfg.stats_file, "out/stats.json");
    EXPECT_EQ(load({{"ALOE_SCHEDULE", "not-a-schedule"}}).schedule, "not-a-schedule");  // loop/ checks it
    EXPECT_TRUE(capture.lines().empty());
}

TEST(RuntimeConfig, VerboseValidatesCategoryNames) {
    report_capture capture;
    EXPECT_EQ(load({{"ALOE_VERBOSE", "all"}}).verbose, "all");
    EXPECT_EQ(load({{"ALOE_VERBOSE", "ALL"}}).verbose, "all");
    EXPECT_EQ(load({{"ALOE_VERBOSE", "none"}}).verbose, "");
    EXPECT_EQ(load({{"ALOE_VERBOSE", "Runtime, loop"}}).verbose, "runtime,loop");
    EXPECT_EQ(load({{"ALOE_VERBOSE", "runtime,topology,config,loop,caps"}}).verbose,
              "runtime,topology,config,loop,caps");
    EXPECT_TRUE(capture.lines().empty());
    const config cfg = expect_one_warning("ALOE_VERBOSE", "runtime,bogus", "W108", "none");
    EXPECT_TRUE(cfg.verbose.empty());
    expect_one_warning("ALOE_VERBOSE", "runtime,,loop", "W108", "none");
    report_capture named;
    (void)load({{"ALOE_VERBOSE", "loop,sched"}});
    ASSERT_EQ(named.lines().size(), 1u);
    EXPECT_NE(named.lines().front().find("unknown category 'sched'"), std::string::npos);
}

TEST(RuntimeConfig, DisplayEnvBooleans) {
    report_capture capture;
    EXPECT_TRUE(load({{"ALOE_DISPLAY_ENV", "1"}}).display_env);
    EXPECT_TRUE(load({{"ALOE_DISPLAY_ENV", "TRUE"}}).display_env);
    EXPECT_FALSE(load({{"ALOE_DISPLAY_ENV", "0"}}).display_env);
    EXPECT_FALSE(load({{"ALOE_DISPLAY_ENV", "false"}}).display_env);
    EXPECT_TRUE(capture.lines().empty());
    for (const char* bad : {"yes", "2", "verbose"}) {
        const config cfg = expect_one_warning("ALOE_DISPLAY_ENV", bad, "W109", "false");
        EXPECT_FALSE(cfg.display_env);
    }
}

TEST(RuntimeConfig, BooleanSettingsShareOneSpelling) {
    report_capture capture;
    EXPECT_TRUE(load({{"ALOE_DISPLAY_ENV", "On"}}).display_env);
    EXPECT_TRUE(load({}).mpi_calibration);
    EXPECT_FALSE(load({{"ALOE_MPI_CALIBRATION", "off"}}).mpi_calibration);
    EXPECT_FALSE(load({{"ALOE_MPI_CALIBRATION", "0"}}).mpi_calibration);
    EXPECT_TRUE(load({{"ALOE_MPI_CALIBRATION", "TRUE"}}).mpi_calibration);
    EXPECT_TRUE(capture.lines().empty());
    const config cfg = expect_one_warning("ALOE_MPI_CALIBRATION", "maybe", "W119", "on");
    EXPECT_TRUE(cfg.mpi_calibration);
}

TEST(RuntimeConfig, PrintCounterNamesSplitAtCommasOutsideBraces) {
    report_capture capture;
    const counter_print_config p =
        load({{"ALOE_PRINT_COUNTER", " /threads{locality#0/total}/idle-rate, /loop{a,b}/time ,loop.chunks"}}).print_counter;
    EXPECT_EQ(p.patterns, (std::vector<std::string>{"/threads{locality#0/total}/idle-rate", "/loop{a,b}/time", "loop.chunks"}));
    EXPECT_EQ(p.interval_ms, 0);
    EXPECT_FALSE(p.reset);
    EXPECT_EQ(p.format, counter_print_format::text);
    EXPECT_TRUE(p.destination.empty());
    EXPECT_TRUE(load({}).print_counter.patterns.empty());
    EXPECT_TRUE(capture.lines().empty());
    for (const char* bad : {"a,,b", "a,", ",a", "a, ,b"}) {
        const config cfg = expect_one_warning("ALOE_PRINT_COUNTER", bad, "W120", "(none)");
        EXPECT_TRUE(cfg.print_counter.patterns.empty()) << bad;
    }
    (void)load({{"ALOE_PRINT_COUNTER", "a,,b"}});
    EXPECT_EQ(capture.containing("ALOE_PRINT_COUNTER='a,,b' is not a comma-separated list of counter names: name 2 is empty").size(), 1u);
}

TEST(RuntimeConfig, PrintCounterIntervalFormatResetAndDestination) {
    report_capture capture;
    const counter_print_config p = load({{"ALOE_PRINT_COUNTER", "x"},
                                         {"ALOE_PRINT_COUNTER_INTERVAL", "250"},
                                         {"ALOE_PRINT_COUNTER_RESET", "on"},
                                         {"ALOE_PRINT_COUNTER_FORMAT", "CSV"},
                                         {"ALOE_PRINT_COUNTER_DESTINATION", "counters-%p.csv"}})
                                       .print_counter;
    EXPECT_EQ(p.interval_ms, 250);
    EXPECT_TRUE(p.reset);
    EXPECT_EQ(p.format, counter_print_format::csv);
    EXPECT_EQ(p.destination, "counters-%p.csv");
    EXPECT_TRUE(capture.lines().empty());
    for (const char* bad : {"-5", "abc", "1.5", "86400001", "99999999999999999999"})
        EXPECT_EQ(expect_one_warning("ALOE_PRINT_COUNTER_INTERVAL", bad, "W121", "0 (at exit only)").print_counter.interval_ms, 0)
            << bad;
    EXPECT_FALSE(expect_one_warning("ALOE_PRINT_COUNTER_RESET", "yes", "W122", "false").print_counter.reset);
    EXPECT_EQ(expect_one_warning("ALOE_PRINT_COUNTER_FORMAT", "json", "W123", "text").print_counter.format,
              counter_print_format::text);
    (void)load({{"ALOE_PRINT_COUNTER_INTERVAL", "-5"}, {"ALOE_PRINT_COUNTER_FORMAT", "json"}});
    EXPECT_EQ(capture.containing("ALOE_PRINT_COUNTER_INTERVAL='-5' is not a whole number of milliseconds in 0..86400000").size(), 1u);
    EXPECT_EQ(capture.containing("ALOE_PRINT_COUNTER_FORMAT='json' is not one of text, csv").size(), 1u);
}

TEST(RuntimeConfig, PrintCounterRowsLoadAloneOnlyWhenNamesAreGiven) {
    report_capture capture;
    // Without ALOE_PRINT_COUNTER nothing is read, not even a bad interval.
    const config none = load_counter_print_config(fake_env({{"ALOE_PRINT_COUNTER_INTERVAL", "x"}, {"ALOE_NUM_THREADS", "3"}}));
    EXPECT_TRUE(none.print_counter.patterns.empty());
    EXPECT_TRUE(capture.lines().empty());
    const config some = load_counter_print_config(fake_env({{"ALOE_PRINT_COUNTER", "a*"},
                                                            {"ALOE_PRINT_COUNTER_INTERVAL", "x"},
                                                            {"ALOE_NUM_THREADS", "3"},
                                                            {"ALOE_WAIT_POLICY", "bogus"},
                                                            {"PMI_RANK", "2"},
                                                            {"PMI_SIZE", "4"}}));
    EXPECT_EQ(some.print_counter.patterns, std::vector<std::string>{"a*"});
    EXPECT_EQ(some.num_threads, 0) << "only the printer's rows";
    EXPECT_EQ(some.job_rank, 2) << "the rank names the output file";
    EXPECT_EQ(some.job_size, 4);
    EXPECT_EQ(capture.containing("W121").size(), 1u);
    EXPECT_TRUE(capture.containing("W104").empty()) << "other rows are not read";
    // The full load later says the same once.
    (void)load({{"ALOE_PRINT_COUNTER", "a*"}, {"ALOE_PRINT_COUNTER_INTERVAL", "x"}});
    EXPECT_EQ(capture.containing("W121").size(), 1u);
}

TEST(RuntimeConfig, EachBadValueIsReportedOnceAcrossLoads) {
    report_capture capture;
    (void)load({{"ALOE_WAIT_POLICY", "sometimes"}});
    (void)load({{"ALOE_WAIT_POLICY", "sometimes"}});
    EXPECT_EQ(capture.containing("W104").size(), 1u);
    (void)load({{"ALOE_WAIT_POLICY", "never"}});  // another value is another cause
    EXPECT_EQ(capture.containing("W104").size(), 2u);
}

TEST(RuntimeConfig, SeveralBadValuesGiveOneWarningEach) {
    report_capture capture;
    (void)load({{"ALOE_NUM_THREADS", "x"}, {"ALOE_SPIN_US", "y"}, {"ALOE_PROC_BIND", "z"}});
    EXPECT_EQ(capture.lines().size(), 3u);
    EXPECT_EQ(capture.containing("W101").size(), 1u);
    EXPECT_EQ(capture.containing("W105").size(), 1u);
    EXPECT_EQ(capture.containing("W103").size(), 1u);
}

TEST(RuntimeConfig, DescribeSettingsListsEveryVariableInTableOrder) {
    const std::vector<setting_row> rows = describe_settings(config{});
    ASSERT_EQ(rows.size(), all_variables.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        EXPECT_EQ(rows[i].name, all_variables[i]);
        EXPECT_FALSE(rows[i].type.empty()) << rows[i].name;
        EXPECT_FALSE(rows[i].fallback.empty()) << rows[i].name;
        EXPECT_FALSE(rows[i].range.empty()) << rows[i].name;
        EXPECT_FALSE(rows[i].help.empty()) << rows[i].name;
        EXPECT_FALSE(rows[i].value.empty()) << rows[i].name;
        EXPECT_EQ(rows[i].source, setting_source::default_value) << rows[i].name;
    }
}

TEST(RuntimeConfig, DescribeSettingsShowsSources) {
    report_capture capture;
    const config cfg = load({{"OMP_NUM_THREADS", "3"}, {"ALOE_WAIT_POLICY", "passive"},
                             {"ALOE_SPIN_US", "bad"}, {"ALOE_VERBOSE", "loop"}});
    const std::vector<setting_row> rows = describe_settings(cfg);
    EXPECT_EQ(row(rows, "ALOE_NUM_THREADS").source, setting_source::omp_environment);
    EXPECT_EQ(row(rows, "ALOE_NUM_THREADS").value, "3 (OMP_NUM_THREADS)");
    EXPECT_EQ(row(rows, "OMP_NUM_THREADS").source, setting_source::omp_environment);
    EXPECT_EQ(row(rows, "ALOE_WAIT_POLICY").source, setting_source::aloe_environment);
    EXPECT_EQ(row(rows, "ALOE_WAIT_POLICY").value, "passive");
    EXPECT_EQ(row(rows, "ALOE_SPIN_US").source, setting_source::default_value);  // rejected
    EXPECT_EQ(row(rows, "ALOE_SPIN_US").value, "1000");
    EXPECT_EQ(row(rows, "ALOE_VERBOSE").source, setting_source::aloe_environment);
    EXPECT_EQ(row(rows, "ALOE_PROC_BIND").source, setting_source::default_value);

    const config api = [] {
        config c;
        c.num_threads = 6;
        c.num_threads_source = setting_source::api;
        return c;
    }();
    EXPECT_EQ(row(describe_settings(api), "ALOE_NUM_THREADS").source, setting_source::api);
    EXPECT_EQ(row(describe_settings(api), "ALOE_NUM_THREADS").value, "6 (API)");
}

TEST(RuntimeConfig, FormatSettingsShowsEachNameValueAndSource) {
    report_capture capture;
    const config cfg = load({{"ALOE_WAIT_POLICY", "active"}, {"ALOE_SCHEDULE", "guided"}});
    const std::string text = format_settings(cfg);
    std::istringstream lines(text);
    std::string line;
    std::size_t count = 0;
    while (std::getline(lines, line)) {
        ++count;
        if (line.find("ALOE_WAIT_POLICY") != std::string::npos) {
            EXPECT_NE(line.find("active"), std::string::npos) << line;
            EXPECT_NE(line.find("ALOE environment"), std::string::npos) << line;
        }
        if (line.find("ALOE_SPIN_US") != std::string::npos) {
            EXPECT_NE(line.find("default"), std::string::npos) << line;
        }
    }
    EXPECT_EQ(count, all_variables.size());
    for (const std::string& name : all_variables) EXPECT_NE(text.find(name), std::string::npos) << name;
    EXPECT_NE(text.find("guided"), std::string::npos);
}

TEST(RuntimeConfig, ResolvedNumThreads) {
    config cfg;
    EXPECT_EQ(resolved_num_threads(cfg, 8), 8);
    EXPECT_EQ(resolved_num_threads(cfg, 0), 1);
    EXPECT_EQ(describe_num_threads_source(cfg, true), "hwloc cores");
    EXPECT_EQ(describe_num_threads_source(cfg, false), "online CPUs");
    cfg.num_threads = 3;
    cfg.num_threads_source = setting_source::omp_environment;
    EXPECT_EQ(resolved_num_threads(cfg, 8), 3);
    EXPECT_EQ(describe_num_threads_source(cfg, true), "OMP_NUM_THREADS");
    cfg.num_threads_source = setting_source::aloe_environment;
    EXPECT_EQ(describe_num_threads_source(cfg, true), "ALOE_NUM_THREADS");
}

TEST(RuntimeConfig, MarkdownTableHasOneRowPerVariable) {
    const std::string md = format_settings_markdown();
    std::istringstream lines(md);
    std::string line;
    std::vector<std::string> rows;
    while (std::getline(lines, line)) rows.push_back(line);
    ASSERT_EQ(rows.size(), all_variables.size() + 2);  // header and separator
    EXPECT_EQ(rows[0].rfind("| Variable |", 0), 0u);
    for (std::size_t i = 0; i < all_variables.size(); ++i) {
        EXPECT_EQ(rows[i + 2].rfind("| `" + all_variables[i] + "` |", 0), 0u) << rows[i + 2];
    }
}

TEST(RuntimeConfig, DocsContainTheGeneratedTable) {
    const std::string path = std::string(ALOE_SOURCE_DIR) + "/docs/configuration.md";
    std::ifstream in(path);
    ASSERT_TRUE(in) << "cannot read " << path;
    std::stringstream buf;
    buf << in.rdbuf();
    const std::string doc = buf.str();
    for (const setting_row& r : describe_settings(config{})) {
        EXPECT_NE(doc.find("`" + r.name + "`"), std::string::npos) << r.name << " missing from " << path;
    }
    EXPECT_NE(doc.find(format_settings_markdown()), std::string::npos)
        << path << " is stale: paste the output of `aloe info --settings-markdown` into it";
}

TEST(RuntimeConfig, CurrentConfigIsLoadedOnce) {
    const config& a = current_config();
    const config& b = current_config();
    EXPECT_EQ(&a, &b);
    EXPECT_FALSE(config_loading_on_this_thread());
}

TEST(RuntimeConfig, EnumNames) {
    EXPECT_EQ(to_string(wait_policy_kind::active), "active");
    EXPECT_EQ(to_string(wait_policy_kind::passive), "passive");
    EXPECT_EQ(to_string(proc_bind_kind::spread), "spread");
    EXPECT_EQ(to_string(setting_source::default_value), "default");
    EXPECT_EQ(to_string(setting_source::omp_environment), "OMP environment");
}

}  // namespace
}  // namespace aloe::runtime

// The counter printer (runtime/counter_printer.hpp): HPX's text lines and the CSV layout
// from fixed samples; printers of test counters writing a file whole at finish, cumulative
// and reset values (derived ones too), a new CSV header when the instances change, names
// that match nothing (W016), an unwritable destination (W017), the interval thread writing
// into a FIFO as it goes, and stdout by default. The process's own printer (armed at load by
// ALOE_PRINT_COUNTER) is checked by tests/process/counter_print_test.cpp.
#include "runtime/counter_printer.hpp"

#include "runtime/counters.hpp"
#include "unit/runtime/report_capture.hpp"
#include "unit/scratch_folder.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

namespace aloe::runtime {
namespace {

namespace fs = std::filesystem;
using aloe::testing::read_text;
using testing::report_capture;
using aloe::testing::scratch_folder;
using aloe::testing::split_text;

// The fields of each text line: name, print number, seconds, "[s]", value, unit.
std::vector<std::vector<std::string>> text_lines(const std::string& text) {
    std::vector<std::vector<std::string>> out;
    for (const std::string& line : split_text(text, '\n')) out.push_back(split_text(line, ','));
    return out;
}

TEST(RuntimeCounterPrinter, FormatsTextAsHpxDoes) {
    const counter_print_sample sample{3, 0.3001254,
                                      {{"/threads{locality#0/total}/idle-rate", 41230, counter_unit::ratio},
                                       {"/loop{a,b}/time", 5, counter_unit::nanoseconds},
                                       {"/x{locality#0/worker-thread#1}/count", 7, counter_unit::count}}};
    EXPECT_EQ(format_counter_text(sample),
              "/threads{locality#0/total}/idle-rate,3,0.300125,[s],41230,[ppm]\n"
              "\"/loop{a,b}/time\",3,0.300125,[s],5,[ns]\n"
              "/x{locality#0/worker-thread#1}/count,3,0.300125,[s],7,[count]\n");
    EXPECT_EQ(format_counter_text({1, 12.0, {}}), "") << "nothing named: no line";
}

TEST(RuntimeCounterPrinter, FormatsCsvHeaderAndRows) {
    const counter_print_sample sample{2, 1.5,
                                      {{"/threads{locality#0/total}/idle-rate", 41230, counter_unit::ratio},
                                       {"/loop{a,b}/time", 5, counter_unit::nanoseconds},
                                       {"say \"hi\"", 1, counter_unit::count}}};
    EXPECT_EQ(format_counter_csv_header(sample.values),
              "sample,seconds,/threads{locality#0/total}/idle-rate,\"/loop{a,b}/time\",\"say \"\"hi\"\"\"\n");
    EXPECT_EQ(format_counter_csv_row(sample), "2,1.500000,41230,5,1\n");
    EXPECT_EQ(format_counter_csv_header({}), "sample,seconds\n");
}

// A fresh folder per test, removed afterwards.
class RuntimeCounterPrinterFiles : public ::testing::Test {
protected:
    std::string path(const std::string& name) const { return dir_.file(name); }

    static config settings(std::vector<std::string> patterns, std::string destination,
                           counter_print_format format = counter_print_format::text, bool reset = false,
                           std::int64_t interval_ms = 0) {
        config c;
        c.print_counter = {std::move(patterns), interval_ms, reset, format, std::move(destination)};
        return c;
    }

    scratch_folder dir_{"aloe-printer-test"};
};

TEST_F(RuntimeCounterPrinterFiles, CumulativeValuesGoToTheFileWholeAtFinish) {
    const counter_handle hits = register_counter({.object = "test-pfile", .name = "hits"});
    const counter_handle calls = register_counter({.object = "test-pfile", .name = "calls"});
    register_derived_counter({.object = "test-pfile", .name = "per-call", .a = hits, .c = calls});
    counter_printer p(settings({"/test-pfile{locality#0/total}/hits", "/test-pfile{locality#0/total}/per-call"},
                               path("out-%p.txt")));
    const std::string out = path("out-" + std::to_string(::getpid()) + ".txt");
    hits.add(4);
    calls.add(2);
    p.print_now();
    hits.add(6);
    calls.add(1);
    p.print_now();
    EXPECT_FALSE(fs::exists(out)) << "written whole, at finish";
    p.finish();
    const std::vector<std::vector<std::string>> lines = text_lines(read_text(out));
    ASSERT_EQ(lines.size(), 6u) << read_text(out);
    const std::vector<std::string> expected_values = {"4", "2", "10", "3", "10", "3"};  // cumulative; 10 / 3 rounds down
    for (std::size_t i = 0; i < lines.size(); ++i) {
        ASSERT_EQ(lines[i].size(), 6u);
        EXPECT_EQ(lines[i][0], i % 2 == 0 ? "/test-pfile{locality#0/total}/hits" : "/test-pfile{locality#0/total}/per-call");
        EXPECT_EQ(lines[i][1], std::to_string(i / 2 + 1)) << "print numbers from 1";
        EXPECT_NO_THROW((void)std::stod(lines[i][2]));
        EXPECT_EQ(lines[i][3], "[s]");
        EXPECT_EQ(lines[i][4], expected_values[i]) << i;
        EXPECT_EQ(lines[i][5], "[count]");
    }
    const std::string whole = read_text(out);
    p.finish();
    p.print_now();
    EXPECT_EQ(read_text(out), whole) << "once finished, a printer prints no more";
    EXPECT_EQ(dir_.entries().size(), 1u) << "no temporary file left";
}

TEST_F(RuntimeCounterPrinterFiles, ResetPrintsTheChangeSinceThePreviousPrint) {
    const counter_handle hits = register_counter({.object = "test-preset", .name = "hits"});
    const counter_handle overall = register_counter({.object = "test-preset", .name = "time/overall"});
    const counter_handle cumulative = register_counter({.object = "test-preset", .name = "time/cumulative"});
    register_derived_counter({.object = "test-preset", .name = "idle-rate", .unit = counter_unit::ratio, .a = overall,
                              .b = cumulative, .c = overall, .scale = 1'000'000, .empty_value = 1'000'000});
    counter_printer p(settings({"/test-preset{locality#0/total}/hits", "/test-preset{locality#0/total}/idle-rate"},
                               path("out.csv"), counter_print_format::csv, true));
    hits.add(3);
    overall.add(100);
    cumulative.add(25);
    p.print_now();
    hits.add(5);
    overall.add(100);
    cumulative.add(90);
    p.print_now();
    p.finish();  // nothing happened since: no hits, no loop time (100% idle)
    const std::vector<std::string> rows = split_text(read_text(path("out.csv")), '\n');
    ASSERT_EQ(rows.size(), 4u) << read_text(path("out.csv"));
    EXPECT_EQ(rows[0], "sample,seconds,/test-preset{locality#0/total}/hits,/test-preset{locality#0/total}/idle-rate");
    const std::vector<std::vector<std::string>> expected = {{"1", "3", "750000"}, {"2", "5", "100000"}, {"3", "0", "1000000"}};
    for (std::size_t i = 0; i < expected.size(); ++i) {
        const std::vector<std::string> cells = split_text(rows[i + 1], ',');
        ASSERT_EQ(cells.size(), 4u) << rows[i + 1];
        EXPECT_EQ(cells[0], expected[i][0]);
        EXPECT_EQ(cells[2], expected[i][1]) << "hits since the previous print";
        EXPECT_EQ(cells[3], expected[i][2]) << "the idle-rate of the interval, not since the start";
    }
}

TEST_F(RuntimeCounterPrinterFiles, CsvHeaderComesAgainWhenInstancesChange) {
    const counter_handle hits = register_counter({.object = "test-pheader", .name = "hits"});
    counter_printer p(settings({"/test-pheader{locality#0/worker-thread#*}/hits"}, path("out.csv"), counter_print_format::csv));
    hits.add_for_worker(0, 1);  // at least one slot before the first print (run alone, none exists yet)
    const std::size_t slots = read_counters("/test-pheader{locality#0/worker-thread#*}/hits").size();
    ASSERT_LT(slots + 1, static_cast<std::size_t>(max_counter_workers));
    p.print_now();
    p.print_now();
    hits.add_for_worker(static_cast<int>(slots) + 1, 9);  // two new slots appear
    p.finish();
    const std::vector<std::string> rows = split_text(read_text(path("out.csv")), '\n');
    ASSERT_EQ(rows.size(), 5u) << read_text(path("out.csv"));
    EXPECT_EQ(rows[0].rfind("sample,seconds", 0), 0u);
    EXPECT_EQ(split_text(rows[0], ',').size(), slots + 2);
    EXPECT_EQ(rows[1].rfind("1,", 0), 0u);
    EXPECT_EQ(rows[2].rfind("2,", 0), 0u);
    EXPECT_EQ(split_text(rows[3], ',').size(), slots + 4) << "the header again, with the new slots: " << rows[3];
    EXPECT_EQ(split_text(rows[3], ',').back(), "/test-pheader{locality#0/worker-thread#" + std::to_string(slots + 1) + "}/hits");
    EXPECT_EQ(split_text(rows[4], ',').back(), "9");
}

TEST_F(RuntimeCounterPrinterFiles, NamesThatMatchNothingAreReportedOnceAtFinish) {
    report_capture capture;
    counter_printer p(settings({"/test-pnone{locality#0/total}/nothing", "/test-pnone{locality#0/total}/later"},
                               path("out.txt")));
    p.print_now();  // names nothing yet: no print, no number taken
    (void)register_counter({.object = "test-pnone", .name = "later"});  // named by a later print: fine
    p.finish();
    p.finish();
    const std::vector<std::string> w016 = capture.containing("W016");
    ASSERT_EQ(w016.size(), 1u);
    EXPECT_EQ(w016[0], "aloe: warning W016 [runtime]: ALOE_PRINT_COUNTER names no counter: "
                       "'/test-pnone{locality#0/total}/nothing' (nothing is printed for it)");
    EXPECT_EQ(read_text(path("out.txt")).rfind("/test-pnone{locality#0/total}/later,1,", 0), 0u) << read_text(path("out.txt"));
    EXPECT_EQ(text_lines(read_text(path("out.txt"))).size(), 1u);
}

TEST_F(RuntimeCounterPrinterFiles, AnUnwritableDestinationIsReported) {
    report_capture capture;
    (void)register_counter({.object = "test-punwritable", .name = "hits"});
    counter_printer p(settings({"/test-punwritable{locality#0/total}/hits"}, path("missing/out.txt")));
    p.finish();
    const std::vector<std::string> w017 = capture.containing("W017");
    ASSERT_EQ(w017.size(), 1u);
    EXPECT_NE(w017[0].find("cannot write the ALOE_PRINT_COUNTER_DESTINATION file: '" + path("missing/out.txt")),
              std::string::npos)
        << w017[0];
    EXPECT_NE(w017[0].find("No such file or directory"), std::string::npos) << w017[0];
}

TEST_F(RuntimeCounterPrinterFiles, TheIntervalThreadWritesAFifoAsItGoes) {
    const counter_handle hits = register_counter({.object = "test-pfifo", .name = "hits"});
    hits.add(1);
    const std::string fifo = path("fifo");
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    const int in = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);  // a reader first: the writer's open does not block
    ASSERT_GE(in, 0);
    counter_printer p(settings({"/test-pfifo{locality#0/total}/hits"}, fifo, counter_print_format::text, false, 5));
    p.start();
    std::string text;
    const auto drain = [&] {
        char buffer[4096];
        for (ssize_t n; (n = ::read(in, buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<std::size_t>(n));
    };
    // A liveness bound, not a timing check: two prints come long before it.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (text.find(",2,") == std::string::npos && std::chrono::steady_clock::now() < give_up) {
        pollfd ready{in, POLLIN, 0};
        (void)::poll(&ready, 1, 100);
        drain();
    }
    EXPECT_NE(text.find("/test-pfifo{locality#0/total}/hits,1,"), std::string::npos) << text;
    EXPECT_NE(text.find("/test-pfifo{locality#0/total}/hits,2,"), std::string::npos) << text;
    p.finish();
    drain();
    const std::vector<std::vector<std::string>> lines = text_lines(text);
    ASSERT_FALSE(lines.empty());
    for (std::size_t i = 0; i < lines.size(); ++i) EXPECT_EQ(lines[i].at(1), std::to_string(i + 1)) << "in order, none lost";
    const std::size_t after_finish = text.size();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    drain();
    EXPECT_EQ(text.size(), after_finish) << "the thread stopped at finish";
    ::close(in);
}

TEST_F(RuntimeCounterPrinterFiles, DestroyingAPrinterStopsItsThread) {
    (void)register_counter({.object = "test-pstop", .name = "hits"});
    {
        counter_printer p(settings({"/test-pstop{locality#0/total}/hits"}, path("out.txt"), counter_print_format::text,
                                   false, 86'400'000));
        p.start();
        p.start();  // once
    }  // joins a thread asleep for a day: woken, not waited for
    EXPECT_FALSE(fs::exists(path("out.txt"))) << "nothing printed without finish";
}

TEST_F(RuntimeCounterPrinterFiles, StdoutByDefault) {
    const counter_handle hits = register_counter({.object = "test-pstdout", .name = "hits"});
    hits.add(12);
    counter_printer p(settings({"/test-pstdout{locality#0/total}/hits"}, ""));
    ::testing::internal::CaptureStdout();
    p.finish();
    const std::string out = ::testing::internal::GetCapturedStdout();
    EXPECT_EQ(out.rfind("/test-pstdout{locality#0/total}/hits,1,", 0), 0u) << out;
    EXPECT_NE(out.find(",[s],12,[count]\n"), std::string::npos) << out;
}

}  // namespace
}  // namespace aloe::runtime

#include "runtime/counter_printer.hpp"

#include "runtime/counter_window.hpp"
#include "runtime/counters.hpp"
#include "runtime/output_file.hpp"
#include "runtime/output_path.hpp"
#include "runtime/plain_text.hpp"
#include "runtime/printable_text.hpp"
#include "runtime/report.hpp"
#include "runtime/signals_blocked.hpp"
#include "runtime/team.hpp"

#include <aloe/export.h>

#include <pthread.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>

namespace aloe::runtime {

namespace {

using clock_type = std::chrono::steady_clock;

// A name as one CSV field: in double quotes (quotes doubled) when it holds a comma, a quote
// or a line break, as HPX writes names that hold commas.
void append_field(std::string& out, std::string_view name) {
    if (name.find_first_of(",\"\n\r") == std::string_view::npos) {
        out += name;
        return;
    }
    out += '"';
    for (const char c : name) {
        if (c == '"') out += '"';
        out += c;
    }
    out += '"';
}

}  // namespace

std::string format_counter_text(const counter_print_sample& sample) {
    const std::string head = "," + std::to_string(sample.number) + "," + fixed(sample.elapsed_s, 6) + ",[s],";
    std::string out;
    for (const aloe::counter_sample& v : sample.values) {
        append_field(out, v.name);
        out += head;
        out += std::to_string(v.value);
        out += ",[";
        out += counter_unit_name(v.unit);
        out += "]\n";
    }
    return out;
}

std::string format_counter_csv_header(const std::vector<aloe::counter_sample>& columns) {
    std::string out = "sample,seconds";
    for (const aloe::counter_sample& c : columns) {
        out += ',';
        append_field(out, c.name);
    }
    return out + '\n';
}

std::string format_counter_csv_row(const counter_print_sample& sample) {
    std::string out = std::to_string(sample.number) + "," + fixed(sample.elapsed_s, 6);
    for (const aloe::counter_sample& v : sample.values) out += "," + std::to_string(v.value);
    return out + '\n';
}

namespace {

// The text of a file destination until exit, in an unnamed temporary file (tmpfile(): no
// name anyone could plant a link at, nothing left behind), or in memory when none can be
// made. Flushed after every append, so no buffered text is copied into a fork child.
class pending_text {
public:
    pending_text() = default;
    pending_text(const pending_text&) = delete;
    pending_text& operator=(const pending_text&) = delete;
    ~pending_text() { forget(); }

    void append(std::string_view text) {
        if (!tried_) {
            tried_ = true;
            file_ = std::tmpfile();
        }
        if (file_ == nullptr) {
            memory_ += text;
        } else if (std::fwrite(text.data(), 1, text.size(), file_) != text.size() || std::fflush(file_) != 0) {
            if (error_.empty()) error_ = "its temporary file cannot be written (" + std::string(std::strerror(errno)) + ")";
        }
    }

    // Hands everything to `sink`; false once it refuses a piece.
    bool produce(const output_sink& sink) {
        if (file_ == nullptr) return sink(memory_);
        std::rewind(file_);
        char buffer[16384];
        for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, file_)) > 0;)
            if (!sink({buffer, n})) return false;
        return true;
    }

    // Drops the text (in a fork child: the parent's, whose file only the parent writes).
    void forget() noexcept {
        if (file_ != nullptr) std::fclose(file_);
        file_ = nullptr;
        tried_ = false;
        memory_.clear();
        error_.clear();
    }

    const std::string& error() const noexcept { return error_; }

private:
    std::FILE* file_ = nullptr;
    bool tried_ = false;
    std::string memory_;
    std::string error_;  // why some text was lost, for the final report
};

}  // namespace

struct counter_printer::state {
    explicit state(config c) : settings(std::move(c)) {
        for (const std::string& pattern : settings.print_counter.patterns) {
            windows.emplace_back(pattern, counter_window::baseline::zero);
            matched.push_back(false);
        }
    }

    // --- printing (under `mutex`) -----------------------------------------------------------

    std::string destination() const {
        const std::string& pattern = settings.print_counter.destination;
        return pattern.empty() ? std::string{} : expand_output_path(pattern, process_identity::of_this_process(settings));
    }

    void report_unwritten(const std::string& why) const {
        report_once({report_level::warning, report_category::runtime, "W017",
                     "cannot write the ALOE_PRINT_COUNTER_DESTINATION file: " + why, ""});
    }

    // Where a print's text goes now: stdout, a device or FIFO in place, else the pending text.
    void emit(const std::string& text) {
        if (text.empty()) return;
        const std::string path = destination();
        if (path.empty()) {
            std::fwrite(text.data(), 1, text.size(), stdout);
            std::fflush(stdout);
        } else if (written_in_place(path)) {
            std::string error;
            if (!write_output_file(path, text, error)) report_unwritten(error);
        } else {
            pending.append(text);
        }
    }

    void print_locked() {
        if (forked) {  // the first print of a fork child
            pending.forget();
            forked = false;
        }
        counter_print_sample sample;
        sample.elapsed_s = std::chrono::duration<double>(clock_type::now() - origin).count();
        for (std::size_t i = 0; i < windows.size(); ++i) {
            std::vector<aloe::counter_sample> values = settings.print_counter.reset ? windows[i].delta() : windows[i].peek();
            if (!values.empty()) matched[i] = true;
            for (aloe::counter_sample& v : values) sample.values.push_back(std::move(v));
        }
        // Nothing named yet (the counters are registered when their layer first runs, after
        // the printer started): no print, and no number taken, so prints count from 1.
        if (sample.values.empty()) return;
        sample.number = ++prints;
        if (settings.print_counter.format == counter_print_format::text) {
            emit(format_counter_text(sample));
            return;
        }
        std::string text;
        if (!same_columns(sample.values)) {
            columns.clear();
            for (const aloe::counter_sample& v : sample.values) columns.push_back(v.name);
            text = format_counter_csv_header(sample.values);
        }
        emit(text + format_counter_csv_row(sample));
    }

    bool same_columns(const std::vector<aloe::counter_sample>& values) const {
        if (prints > 1 && values.size() == columns.size()) {
            for (std::size_t i = 0; i < values.size(); ++i)
                if (values[i].name != columns[i]) return false;
            return true;
        }
        return false;
    }

    void finish_locked() {
        print_locked();
        for (std::size_t i = 0; i < windows.size(); ++i)
            if (!matched[i])
                report_once({report_level::warning, report_category::runtime, "W016",
                             "ALOE_PRINT_COUNTER names no counter: '" + printable(windows[i].pattern()) +
                                 "' (nothing is printed for it)",
                             ""});
        const std::string path = destination();
        if (path.empty() || written_in_place(path)) return;
        std::string error;
        if (!write_output_file(path, [&](const output_sink& sink) { pending.produce(sink); }, error))
            report_unwritten(error);
        else if (!pending.error().empty())
            report_unwritten("'" + printable(path) + "' misses prints: " + pending.error());
        pending.forget();
    }

    // --- the interval thread ----------------------------------------------------------------

    void run_ticker() {
        const auto interval = std::chrono::milliseconds(settings.print_counter.interval_ms);
        auto next = clock_type::now() + interval;
        std::unique_lock lock(ticker_mutex);
        while (!ticker_wake.wait_until(lock, next, [&] { return stop_ticker; })) {
            lock.unlock();
            try {
                std::lock_guard print_lock(mutex);
                if (!finished) print_locked();
            } catch (const std::exception&) {
                // Out of memory: this print is lost; the program goes on, and so do the prints.
            }
            lock.lock();
            next += interval;
            if (const auto now = clock_type::now(); next < now) next = now + interval;  // a slow print: skip, never burst
        }
    }

    void start() {
        if (settings.print_counter.interval_ms <= 0 || ticker.joinable()) return;
        const signals_blocked on_the_new_thread;  // it inherits the mask
        try {
            ticker_generation = fork_generation();
            ticker = std::thread([this] { run_ticker(); });
            pthread_setname_np(ticker.native_handle(), "aloe-counters");
        } catch (const std::system_error& e) {
            report_once({report_level::warning, report_category::runtime, "W018",
                         std::string("cannot start the thread that prints ALOE_PRINT_COUNTER every interval: ") + e.what(),
                         "printing at exit only"});
        }
    }

    // Stops and joins the interval thread, if this process has it (a fork child has a copy
    // of the std::thread but not the thread, and maybe a copy of a held ticker_mutex).
    void stop() {
        if (!ticker.joinable() || ticker_generation != fork_generation()) return;
        {
            std::lock_guard lock(ticker_mutex);
            stop_ticker = true;
        }
        ticker_wake.notify_all();
        ticker.join();
    }

    void finish() {
        stop();
        std::lock_guard lock(mutex);
        if (finished) return;
        finished = true;
        finish_locked();
    }

    const config settings;

    std::mutex mutex;  // guards everything below; held for a whole print, and around fork()
    std::vector<counter_window> windows;  // one per pattern, baselines from 0
    std::vector<bool> matched;            // per pattern: named an instance at some print
    std::uint64_t prints = 0;
    clock_type::time_point origin = clock_type::now();
    std::vector<std::string> columns;  // of the last CSV header
    pending_text pending;
    bool finished = false;
    bool forked = false;  // a fork child that has not printed yet: the pending text is the parent's

    std::thread ticker;
    std::uint32_t ticker_generation = 0;  // fork_generation() of the process that runs it
    std::mutex ticker_mutex;              // guards stop_ticker
    std::condition_variable ticker_wake;
    bool stop_ticker = false;
};

counter_printer::counter_printer(config settings) : state_(std::make_unique<state>(std::move(settings))) {}

counter_printer::~counter_printer() { state_->stop(); }

void counter_printer::start() { state_->start(); }

void counter_printer::print_now() {
    std::lock_guard lock(state_->mutex);
    if (!state_->finished) state_->print_locked();
}

void counter_printer::finish() { state_->finish(); }

namespace {

// The process's printer: made at load, never destroyed (the atexit handler and a fork child
// use it; its thread is never joined by a destructor).
counter_printer::state* process_printer = nullptr;

void print_at_exit() {
    try {
        process_printer->finish();
    } catch (const std::exception&) {
        // Out of memory at exit: nothing more can be printed; never terminate the exit.
    }
}

void lock_printer_for_fork() noexcept { process_printer->mutex.lock(); }
void unlock_printer_in_parent() noexcept { process_printer->mutex.unlock(); }

// Only the forking thread exists in the child: reset what is this process's own (no call
// that allocates or locks: the handler may run in the child of a multithreaded process).
void start_printer_afresh_in_child() noexcept {
    counter_printer::state& p = *process_printer;
    p.prints = 0;
    p.origin = clock_type::now();
    p.forked = true;
    p.mutex.unlock();
}

struct arm_at_load {
    arm_at_load() {
        config settings = load_counter_print_config(process_environment());
        if (settings.print_counter.patterns.empty()) return;
        // The registry first: its fork hooks (team.cpp's pthread_atfork handler) are then
        // registered before ours, so ours prepare first (pthread_atfork runs prepare handlers
        // in reverse order) and take the printer's lock before the registry's, as a print does.
        (void)counter_shape();
        process_printer = new counter_printer::state(std::move(settings));
        pthread_atfork(&lock_printer_for_fork, &unlock_printer_in_parent, &start_printer_afresh_in_child);
        std::atexit(&print_at_exit);
        process_printer->start();
    }
};

const arm_at_load armed_at_load;

}  // namespace

void disarm_counter_printer() {
    if (process_printer == nullptr) return;
    process_printer->stop();
    std::lock_guard lock(process_printer->mutex);
    process_printer->finished = true;
}

}  // namespace aloe::runtime

// Nothing in a program refers to this file, whose printer starts itself at load: the static
// link names this anchor (CMakeLists.txt) so that libaloe.a users keep it.
extern "C" {
ALOE_API extern const int aloe_counter_printer_linked;
const int aloe_counter_printer_linked = 1;
}

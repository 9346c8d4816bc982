#include "coord/instruction_counter.hpp"

#include "coord/efficiency_meter.hpp"
#include "runtime/report.hpp"

#include <linux/perf_event.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>
#include <system_error>

namespace aloe::coord {
namespace {

// A thread list that keeps changing while the events open (a program starting threads):
// give up after this many tries rather than count some threads twice or not at all.
constexpr int open_tries = 4;

class kernel_source final : public counter_source {
public:
    explicit kernel_source(counted_event e) : event_(e) {}

    int open(int tid, bool inherit) override {
        perf_event_attr attr{};
        attr.size = sizeof attr;
        if (event_ == counted_event::instructions) {
            attr.type = PERF_TYPE_HARDWARE;
            attr.config = PERF_COUNT_HW_INSTRUCTIONS;
        } else {
            attr.type = PERF_TYPE_SOFTWARE;
            attr.config = PERF_COUNT_SW_TASK_CLOCK;
        }
        attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
        attr.exclude_kernel = 1;  // user space only: what perf_event_paranoid=2 allows
        attr.exclude_hv = 1;
        attr.inherit = inherit ? 1 : 0;
        attr.inherit_thread = inherit ? 1 : 0;  // threads, not child processes
        attr.remove_on_exec = 1;
        long fd = ::syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
        if (fd < 0 && errno == EINVAL) {
            // Kernels before 5.13 know neither flag: inherited events then follow child
            // processes too (the header's trade-off), and close on exec through the fd only.
            attr.inherit_thread = 0;
            attr.remove_on_exec = 0;
            fd = ::syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
        }
        return fd < 0 ? -errno : static_cast<int>(fd);
    }

    bool read(int fd, counter_value& out) override {
        std::uint64_t v[3] = {};
        if (::read(fd, v, sizeof v) != static_cast<ssize_t>(sizeof v)) return false;
        out = {v[0], v[1], v[2]};
        return true;
    }

    void close(int fd) override { ::close(fd); }

    std::vector<int> threads() override {
        std::vector<int> tids;
        std::error_code ec;
        for (std::filesystem::directory_iterator it("/proc/self/task", ec), end; !ec && it != end; it.increment(ec)) {
            const std::string name = it->path().filename().string();
            char* stop = nullptr;
            const long tid = std::strtol(name.c_str(), &stop, 10);
            if (stop != name.c_str() && *stop == '\0' && tid > 0) tids.push_back(static_cast<int>(tid));
        }
        if (ec) tids.clear();
        std::sort(tids.begin(), tids.end());
        return tids;
    }

    std::optional<int> paranoid() override {
        std::ifstream in("/proc/sys/kernel/perf_event_paranoid");
        int level = 0;
        if (in >> level) return level;
        return std::nullopt;
    }

private:
    counted_event event_;
};

}  // namespace

double scaled_count(const counter_value& v) noexcept {
    if (v.running == 0) return 0;
    const double value = static_cast<double>(v.value);
    if (v.enabled <= v.running) return value;
    return value * (static_cast<double>(v.enabled) / static_cast<double>(v.running));
}

std::unique_ptr<counter_source> kernel_counter_source(counted_event event) {
    return std::make_unique<kernel_source>(event);
}

std::string unavailable_reason(int error, std::optional<int> paranoid) {
    const std::string level = paranoid ? std::to_string(*paranoid) : std::string("unknown");
    switch (error) {
    case ENOENT:
        return "no hardware counters (ENOENT: a VM without a virtual PMU, or a CPU without the event)";
    case EOPNOTSUPP:
        return "no hardware counters (EOPNOTSUPP: a VM without a virtual PMU, or a PMU that cannot count it)";
    case ENODEV:
        return "no hardware counters (ENODEV: the PMU does not offer the event)";
    case EACCES:
    case EPERM:
        if (paranoid && *paranoid >= 3) return "perf_event_paranoid=" + level + " forbids it";
        return std::string("not permitted (") + (error == EACCES ? "EACCES" : "EPERM") + ", perf_event_paranoid=" + level +
               "; a seccomp filter or a container may forbid perf_event_open)";
    case ENOSYS:
        return "this kernel has no perf_event_open (ENOSYS)";
    case EMFILE:
    case ENFILE:
        return std::string("no file descriptor left for the counters (") + (error == EMFILE ? "EMFILE" : "ENFILE") + ")";
    case EBUSY:
        return "the counters are taken (EBUSY: another user holds the PMU exclusively)";
    case EINVAL:
        return "the kernel refuses the event (EINVAL)";
    default:
        return std::string("perf_event_open failed: ") + std::strerror(error);
    }
}

// ---- instruction_counter ----

void instruction_counter::close_all() noexcept {
    for (int fd : fds_) source_->close(fd);
    fds_.clear();
}

bool instruction_counter::fail(std::string why) {
    close_all();
    reason_ = std::move(why);
    return false;
}

bool instruction_counter::open() {
    close_all();
    reason_.clear();
    if (scope_ == count_scope::thread) {
        const int fd = source_->open(0, false);
        if (fd < 0) return fail(unavailable_reason(-fd, source_->paranoid()));
        fds_.push_back(fd);
        return true;
    }
    for (int attempt = 0; attempt < open_tries; ++attempt) {
        const std::vector<int> before = source_->threads();
        if (before.empty()) return fail("the process's threads cannot be listed (/proc/self/task)");
        for (int tid : before) {
            const int fd = source_->open(tid, true);
            if (fd == -ESRCH) continue;  // it ended meanwhile: nothing of it is left to count
            if (fd < 0) return fail(unavailable_reason(-fd, source_->paranoid()));
            fds_.push_back(fd);
        }
        // A thread that started meanwhile is covered only if its creator's event was open
        // before it started: neither can be told apart, so such a list starts over.
        const std::vector<int> after = source_->threads();
        const bool started = std::any_of(after.begin(), after.end(),
                                         [&](int t) { return !std::binary_search(before.begin(), before.end(), t); });
        if (!started && !fds_.empty()) return true;
        close_all();
    }
    return fail("threads kept starting while the counters were opened");
}

std::optional<double> instruction_counter::read() const {
    if (fds_.empty()) return std::nullopt;
    double sum = 0;
    for (int fd : fds_) {
        counter_value v;
        if (!source_->read(fd, v)) return std::nullopt;
        sum += scaled_count(v);
    }
    return sum;
}

// ---- instruction_measure ----

bool instruction_measure::available() {
    if (const state s = state_.load(std::memory_order_acquire); s != state::untried) return s == state::available;
    std::unique_lock lock(mutex_);
    if (const state s = state_.load(std::memory_order_relaxed); s != state::untried) return s == state::available;
    const bool ok = process_.open();
    state_.store(ok ? state::available : state::unavailable, std::memory_order_release);
    const std::string why = process_.reason();
    const std::size_t events = process_.events();
    lock.unlock();
    if (ok)
        runtime::report_once({runtime::report_level::info, runtime::report_category::coord, "I703",
                              "efficiency from instruction counts (perf_event_open, " + std::to_string(events) +
                                  (events == 1 ? " event)" : " events)"),
                              ""});
    else
        runtime::report_once({runtime::report_level::info, runtime::report_category::coord, "I702",
                              "instruction counts unavailable: " + why,
                              "efficiency from serial samples and run times (loop progress, region time)"});
    return ok;
}

instruction_measure::state instruction_measure::now() const noexcept { return state_.load(std::memory_order_acquire); }

std::string instruction_measure::reason() const {
    std::lock_guard lock(mutex_);
    return state_.load(std::memory_order_relaxed) == state::unavailable ? process_.reason() : std::string();
}

std::optional<instruction_measure::start> instruction_measure::begin(bool one_thread, bool sample, double now) {
    if (state_.load(std::memory_order_acquire) != state::available) return std::nullopt;
    if (!sample && now - last_count_.load(std::memory_order_relaxed) < least_seconds_between_counts) return std::nullopt;
    std::lock_guard lock(mutex_);
    if (!sample) {
        if (now - last_count_.load(std::memory_order_relaxed) < least_seconds_between_counts) return std::nullopt;
        if (first_count_ >= 0 && spent_ > count_budget * (now - first_count_)) return std::nullopt;
    }
    if (first_count_ < 0) first_count_ = now;
    last_count_.store(now, std::memory_order_relaxed);
    const double t0 = monotonic_seconds();
    start s;
    s.at = now;
    s.generation = generation_;
    std::optional<double> value;
    if (one_thread) {
        s.thread = std::make_unique<instruction_counter>(*source_, count_scope::thread);
        if (s.thread->open()) value = s.thread->read();
    } else {
        value = process_.read();
    }
    spent_ += std::max(0.0, monotonic_seconds() - t0);
    if (!value) return std::nullopt;
    s.instructions = *value;
    return s;
}

std::optional<double> instruction_measure::finish(start& s, double now) {
    const double t0 = monotonic_seconds();
    std::optional<double> value;
    {
        std::lock_guard lock(mutex_);
        // A run that began before a fork holds the parent's counter: nothing to compare.
        if (s.generation != generation_ || state_.load(std::memory_order_relaxed) != state::available) return std::nullopt;
        value = s.thread ? s.thread->read() : process_.read();
        if (s.thread) s.thread.reset();  // closes it
        spent_ += std::max(0.0, monotonic_seconds() - t0);
    }
    const double seconds = now - s.at;
    if (!value || !(seconds > 0) || !std::isfinite(seconds) || *value < s.instructions) return std::nullopt;
    return (*value - s.instructions) / seconds;
}

void instruction_measure::drop_after_fork() noexcept {
    // The child is single-threaded here: no other thread holds the lock.
    new (&mutex_) std::mutex();
    process_.drop();
    state_.store(state::untried, std::memory_order_relaxed);
    ++generation_;
    first_count_ = -1;
    last_count_.store(-1e300, std::memory_order_relaxed);
    spent_ = 0;
}

namespace {
instruction_measure* the_process_measure = nullptr;
void drop_measure_in_fork_child() {
    if (the_process_measure != nullptr) the_process_measure->drop_after_fork();
}
}  // namespace

instruction_measure& process_instruction_measure() {
    // Never destroyed: runs may end during static destruction.
    static instruction_measure* measure = [] {
        auto* m = new instruction_measure(*kernel_counter_source().release());
        the_process_measure = m;
        ::pthread_atfork(nullptr, nullptr, drop_measure_in_fork_child);
        return m;
    }();
    return *measure;
}

instruction_probe probe_instructions(counter_source& source) {
    instruction_counter c(source, count_scope::thread);
    if (c.open()) return {true, {}};
    return {false, c.reason()};
}

}  // namespace aloe::coord

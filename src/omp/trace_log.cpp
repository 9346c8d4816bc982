#include "omp/trace_log.hpp"

#include "omp/fork_lock.hpp"
#include "omp/interposer_settings.hpp"
#include "omp/omp_site.hpp"
#include "runtime/json_text.hpp"

#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <mutex>
#include <vector>

namespace aloe::omp {

namespace {

// Enough for long runs; past it a thread stops recording and the trace says so.
constexpr std::size_t max_events_per_thread = std::size_t{1} << 20;

struct event {
    runtime::ticks begin;
    runtime::ticks end;
    const omp_site* site;
    std::uint64_t iterations;
    int omp_thread;
    trace_kind kind;
};

struct thread_buffer {
    int index = 0;  // order of first event: the trace's tid
    std::vector<event> events;
    bool truncated = false;
};

struct buffers {
    std::mutex mutex;
    std::vector<std::unique_ptr<thread_buffer>> all;
};

// Reachable for the fork hooks without a function-local static's guard.
constinit std::atomic<buffers*> for_fork{nullptr};

buffers& registry() {
    static buffers* const b = [] {
        auto* made = new buffers;  // never destroyed: pool threads outlive statics
        for_fork.store(made, std::memory_order_release);
        return made;
    }();
    return *b;
}

thread_buffer& my_buffer() {
    thread_local thread_buffer* mine = nullptr;
    if (mine == nullptr) {
        buffers& r = registry();
        std::lock_guard lock(r.mutex);
        r.all.push_back(std::make_unique<thread_buffer>());
        mine = r.all.back().get();
        mine->index = static_cast<int>(r.all.size());
        mine->events.reserve(4096);
    }
    return *mine;
}

const char* kind_name(trace_kind k) {
    switch (k) {
        case trace_kind::region: return "region";
        case trace_kind::loop_taken: return "loop";
        case trace_kind::loop_forwarded: return "loop (forwarded)";
    }
    return "?";
}

}  // namespace

namespace {
// What the forking thread locked (fork_lock.hpp): the registry may be made between the hooks.
constinit thread_local std::mutex* trace_locked_for_fork __attribute__((tls_model("initial-exec"))) = nullptr;
}  // namespace

void lock_trace_for_fork() noexcept {
    buffers* b = for_fork.load(std::memory_order_acquire);
    lock_for_fork(b != nullptr ? &b->mutex : nullptr, trace_locked_for_fork);
}

void unlock_trace_after_fork() noexcept { unlock_after_fork(trace_locked_for_fork); }

void forget_trace_in_child() noexcept {
    // Only the buffers the forking thread locked: those are the ones no other thread can hold.
    if (trace_locked_for_fork == nullptr) return;
    for (const auto& t : for_fork.load(std::memory_order_relaxed)->all) {
        t->events.clear();
        t->truncated = false;
    }
}

bool tracing() noexcept {
    static const bool on = !settings().trace_file.empty();
    return on;
}

void trace_event(trace_kind kind, const omp_site& site, runtime::ticks begin, runtime::ticks end, int omp_thread,
                 std::uint64_t iterations) {
    thread_buffer& b = my_buffer();
    if (b.events.size() >= max_events_per_thread) {
        b.truncated = true;
        return;
    }
    b.events.push_back({begin, end, &site, iterations, omp_thread, kind});
}

namespace {

// Microseconds of CLOCK_MONOTONIC for a tick value, anchored once at write time: every
// process of a node shares that clock, so their traces line up.
struct monotonic_anchor {
    runtime::ticks ticks_now = runtime::now_ticks();
    double us_now = [] {
        timespec t{};
        clock_gettime(CLOCK_MONOTONIC, &t);
        return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_nsec) * 1e-3;
    }();
    double us(runtime::ticks t) const {
        const double back = t <= ticks_now ? runtime::ticks_to_seconds(ticks_now - t) : -runtime::ticks_to_seconds(t - ticks_now);
        return us_now - back * 1e6;
    }
};

}  // namespace

void write_trace_events(const runtime::output_sink& sink, const std::string& process_name) {
    buffers& r = registry();
    std::lock_guard lock(r.mutex);
    const monotonic_anchor clock;
    const std::string pid = std::to_string(static_cast<long>(getpid()));
    std::string line = "{\"ph\":\"M\",\"pid\":" + pid + ",\"name\":\"process_name\",\"args\":{\"name\":" +
                       runtime::json_quote(process_name) + "}}";
    bool truncated = false;
    char number[64];
    for (const auto& b : r.all) {
        truncated = truncated || b->truncated;
        line += ",\n{\"ph\":\"M\",\"pid\":" + pid + ",\"tid\":" + std::to_string(b->index) +
                ",\"name\":\"thread_name\",\"args\":{\"name\":\"thread " + std::to_string(b->index) + "\"}}";
        if (!sink(line)) return;
        line.clear();
        for (const event& e : b->events) {
            line = ",\n{\"ph\":\"X\",\"pid\":" + pid + ",\"tid\":" + std::to_string(b->index) + ",\"cat\":\"" +
                   kind_name(e.kind) + "\",\"name\":" + runtime::json_quote(e.site->name);
            std::snprintf(number, sizeof number, ",\"ts\":%.3f,\"dur\":%.3f", clock.us(e.begin),
                          runtime::ticks_to_seconds(e.end - e.begin) * 1e6);
            line += number;
            line += ",\"args\":{\"omp_thread\":" + std::to_string(e.omp_thread);
            if (e.kind != trace_kind::region) line += ",\"iterations\":" + std::to_string(e.iterations);
            if (!e.site->source.empty()) line += ",\"source\":" + runtime::json_quote(e.site->source);
            line += "}}";
            if (!sink(line)) return;
        }
        line.clear();
    }
    if (truncated)
        line += ",\n{\"ph\":\"M\",\"pid\":" + pid +
                ",\"name\":\"process_labels\",\"args\":{\"labels\":\"trace truncated: a thread reached " +
                std::to_string(max_events_per_thread) + " events\"}}";
    sink(line);
}

}  // namespace aloe::omp

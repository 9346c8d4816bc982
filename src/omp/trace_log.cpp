#include "omp/trace_log.hpp"

#include "omp/interposer_settings.hpp"
#include "omp/omp_site.hpp"
#include "runtime/json_text.hpp"

#include <cstdio>
#include <fstream>
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

buffers& registry() {
    static buffers* b = new buffers;  // never destroyed: pool threads outlive statics
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

bool write_trace(const std::string& path, std::string& error) {
    buffers& r = registry();
    std::lock_guard lock(r.mutex);
    runtime::ticks origin = 0;
    bool first = true;
    for (const auto& b : r.all)
        for (const event& e : b->events)
            if (first || e.begin < origin) {
                origin = e.begin;
                first = false;
            }
    std::ofstream out(path);
    if (!out) {
        error = "cannot write the trace file '" + path + "'";
        return false;
    }
    const auto us = [&](runtime::ticks t) { return runtime::ticks_to_seconds(t) * 1e6; };
    out << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
    bool comma = false;
    bool truncated = false;
    char number[64];
    for (const auto& b : r.all) {
        truncated = truncated || b->truncated;
        out << (comma ? ",\n" : "") << "{\"ph\":\"M\",\"pid\":1,\"tid\":" << b->index
            << ",\"name\":\"thread_name\",\"args\":{\"name\":\"thread " << b->index << "\"}}";
        comma = true;
        for (const event& e : b->events) {
            out << ",\n{\"ph\":\"X\",\"pid\":1,\"tid\":" << b->index << ",\"cat\":\"" << kind_name(e.kind)
                << "\",\"name\":" << runtime::json_quote(e.site->name);
            std::snprintf(number, sizeof number, "%.3f", us(e.begin - origin));
            out << ",\"ts\":" << number;
            std::snprintf(number, sizeof number, "%.3f", us(e.end - e.begin));
            out << ",\"dur\":" << number << ",\"args\":{\"omp_thread\":" << e.omp_thread;
            if (e.kind != trace_kind::region) out << ",\"iterations\":" << e.iterations;
            if (!e.site->source.empty()) out << ",\"source\":" << runtime::json_quote(e.site->source);
            out << "}}";
        }
    }
    out << "\n],\"otherData\":{\"tool\":\"aloe run\",\"truncated\":" << (truncated ? "true" : "false") << "}}\n";
    out.close();
    if (!out) {
        error = "writing the trace file '" + path + "' failed";
        return false;
    }
    return true;
}

}  // namespace aloe::omp

// `dynamic[,chunk=c]` (also OpenMP's `dynamic,c`).
#include "loop/schedules/dynamic.hpp"

namespace aloe::loop {

using dynamic_text = kind_text<schedule_kind::dynamic>;

void dynamic_text::defaults(schedule& s) noexcept {
    s = schedule();
    s.kind_ = schedule_kind::dynamic;
    s.chunk_ = 1;
    s.fs_ = 0.0;
}

bool dynamic_text::read(schedule& s, std::string_view key, std::string_view value, const spec_reader& r) {
    return r.read_int(key, value, 1, max_chunk, s.chunk_);
}

bool dynamic_text::finish(const spec_reader&) { return true; }

std::string dynamic_text::print(const schedule& s) { return std::string(name) + ",chunk=" + std::to_string(s.chunk_); }

schedule dynamic_text::make(std::int64_t chunk) {
    schedule s;
    defaults(s);
    value_check check;
    check.integer("chunk", chunk, 1, max_chunk, s.chunk_);
    check.throw_if_failed([&] { return "dynamic,chunk=" + std::to_string(chunk); });
    return s;
}

}  // namespace aloe::loop

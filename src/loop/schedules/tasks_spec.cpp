#include "loop/schedules/tasks_spec.hpp"

namespace aloe::loop {

using tasks_text = kind_text<schedule_kind::tasks>;

void tasks_text::defaults(schedule& s) noexcept {
    s = schedule();
    s.kind_ = schedule_kind::tasks;
    s.chunk_ = 0;  // auto
}

bool tasks_text::read(schedule& s, std::string_view key, std::string_view value, const spec_reader& r) {
    if (lower(value) == "auto") {
        s.chunk_ = 0;
        return true;
    }
    (void)key;
    return r.read_int("grain", value, 1, max_chunk, s.chunk_);
}

bool tasks_text::finish(const spec_reader&) { return true; }

std::string tasks_text::print(const schedule& s) {
    return std::string(name) + ",grain=" + (s.chunk_ == 0 ? std::string("auto") : std::to_string(s.chunk_));
}

schedule tasks_text::make(std::int64_t grain) {
    schedule s;
    defaults(s);
    if (grain == 0) return s;
    value_check check;
    check.integer("grain", grain, 1, max_chunk, s.chunk_);
    check.throw_if_failed([&] { return "tasks,grain=" + std::to_string(grain); });
    return s;
}

}  // namespace aloe::loop

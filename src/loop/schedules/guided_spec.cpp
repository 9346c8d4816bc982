// `guided[,chunk=c][,divisor=k]` (also OpenMP's `guided,c`).
#include "loop/schedules/guided.hpp"

namespace aloe::loop {

using guided_text = kind_text<schedule_kind::guided>;

void guided_text::defaults(schedule& s) noexcept {
    s = schedule();
    s.kind_ = schedule_kind::guided;
    s.chunk_ = 1;
    s.fs_ = 0.0;
}

namespace {
// More than a chunk per thread for each of 64 rounds is dynamic in all but name.
constexpr std::int64_t max_divisor = 64;
}  // namespace

bool guided_text::read(schedule& s, std::string_view key, std::string_view value, const spec_reader& r) {
    if (key == "divisor") return r.read_int(key, value, 1, max_divisor, s.divisor_);
    return r.read_int(key, value, 1, max_chunk, s.chunk_);
}

bool guided_text::finish(const spec_reader&) { return true; }

std::string guided_text::print(const schedule& s) {
    // divisor=1 is left out: the canonical string of every guided schedule before it existed.
    return std::string(name) + ",chunk=" + std::to_string(s.chunk_) +
           (s.divisor_ != 1 ? ",divisor=" + std::to_string(s.divisor_) : std::string());
}

schedule guided_text::make(std::int64_t chunk, std::int64_t divisor) {
    schedule s;
    defaults(s);
    value_check check;
    check.integer("chunk", chunk, 1, max_chunk, s.chunk_);
    check.integer("divisor", divisor, 1, max_divisor, s.divisor_);
    check.throw_if_failed([&] {
        return "guided,chunk=" + std::to_string(chunk) + (divisor != 1 ? ",divisor=" + std::to_string(divisor) : "");
    });
    return s;
}

}  // namespace aloe::loop

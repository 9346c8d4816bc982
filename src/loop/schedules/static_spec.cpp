// `static[,chunk=c]` (also OpenMP's `static,c`): no chunk is one block per worker (chunk 0).
#include "loop/schedules/static.hpp"

namespace aloe::loop {

using static_text = kind_text<schedule_kind::static_block>;

void static_text::defaults(schedule& s) noexcept { s = schedule(); }

bool static_text::read(schedule& s, std::string_view key, std::string_view value, const spec_reader& r) {
    return r.read_int(key, value, 1, max_chunk, s.chunk_);
}

bool static_text::finish(const spec_reader&) { return true; }

std::string static_text::print(const schedule& s) {
    return s.chunk_ == 0 ? std::string(name) : std::string(name) + ",chunk=" + std::to_string(s.chunk_);
}

schedule static_text::make(std::int64_t chunk) {
    schedule s;
    value_check check;
    check.integer("chunk", chunk, 1, max_chunk, s.chunk_);
    check.throw_if_failed([&] { return "static,chunk=" + std::to_string(chunk); });
    return s;
}

}  // namespace aloe::loop

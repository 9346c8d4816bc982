// `weighted[,fs=f][,chunk=c]`: fs 1 by default (all static, split by weight).
#include "loop/schedules/weighted.hpp"

namespace aloe::loop {

using weighted_text = kind_text<schedule_kind::weighted>;

void weighted_text::defaults(schedule& s) noexcept {
    s = schedule();
    s.kind_ = schedule_kind::weighted;
    s.chunk_ = 1;
}

bool weighted_text::read(schedule& s, std::string_view key, std::string_view value, const spec_reader& r) {
    if (key == "fs") return r.read_real(key, value, 0.0, 1.0, s.fs_);
    return r.read_int(key, value, 1, max_chunk, s.chunk_);
}

bool weighted_text::finish(const spec_reader&) { return true; }

std::string weighted_text::print(const schedule& s) {
    return std::string(name) + ",fs=" + number(s.fs_) + ",chunk=" + std::to_string(s.chunk_);
}

schedule weighted_text::make(double fs, std::int64_t chunk) {
    schedule s;
    defaults(s);
    value_check check;
    check.real("fs", fs, 0.0, 1.0, s.fs_);
    check.integer("chunk", chunk, 1, max_chunk, s.chunk_);
    check.throw_if_failed([&] { return "weighted,fs=" + number(fs) + ",chunk=" + std::to_string(chunk); });
    return s;
}

}  // namespace aloe::loop

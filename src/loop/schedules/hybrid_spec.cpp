// `hybrid,fs=f[,chunk=c]`: fs is required.
#include "loop/schedules/hybrid.hpp"

namespace aloe::loop {

using hybrid_text = kind_text<schedule_kind::hybrid>;

void hybrid_text::defaults(schedule& s) noexcept {
    s = schedule();
    s.kind_ = schedule_kind::hybrid;
    s.chunk_ = 1;
}

bool hybrid_text::read(schedule& s, std::string_view key, std::string_view value, const spec_reader& r) {
    if (key == "fs") return r.read_real(key, value, 0.0, 1.0, s.fs_);
    return r.read_int(key, value, 1, max_chunk, s.chunk_);
}

bool hybrid_text::finish(const spec_reader& r) {
    return r.has_key("fs") || r.fail("hybrid needs fs=<static fraction in [0, 1]>");
}

std::string hybrid_text::print(const schedule& s) {
    return std::string(name) + ",fs=" + number(s.fs_) + ",chunk=" + std::to_string(s.chunk_);
}

schedule hybrid_text::make(double fs, std::int64_t chunk) {
    schedule s;
    defaults(s);
    value_check check;
    check.real("fs", fs, 0.0, 1.0, s.fs_);
    check.integer("chunk", chunk, 1, max_chunk, s.chunk_);
    check.throw_if_failed([&] { return "hybrid,fs=" + number(fs) + ",chunk=" + std::to_string(chunk); });
    return s;
}

}  // namespace aloe::loop
